// Package jail is landjail's policy and its single choke point for paths
// an untrusted caller supplies (an agent's tool arguments, a command's
// working directory).
//
// A policy is a [Workspace]: a root directory, read-write, built by [New]
// with options — extra roots ([WithAllowed] with [ReadOnly], [ReadExec] or
// [ReadWrite]), deny patterns in gitignore syntax ([WithDeny],
// [WithDenySecrets]), private keys recognised by content
// ([WithDenyPrivateKeys] for names that look like key files,
// [WithDenyPrivateKeyHeaders] for every other file), read-only paths
// inside writable roots ([WithReadOnly], [WithProtectedAgentConfig]), and
// a read-before-write tracker ([WithReadTracker]).
//
// [Workspace.Resolve] turns an unsafe path into the canonical absolute
// path it names under the policy, or an error: it walks the name one
// component at a time as the kernel would (symlinks followed, ".." applied
// after them, never filepath.Clean first, a dangling symlink followed to
// its target) and checks containment on whole components, never on a
// string prefix. [Workspace.Check] adds the access ([Read], [Write],
// [Execute]). Errors are *fs.PathError wrapping the sentinels of this
// package ([ErrOutsideWorkspace], [ErrDenied], [ErrReadOnly],
// [ErrNotExecutable], ...), so errors.Is works.
//
// The file operations ([Workspace.Open], [Workspace.OpenFile],
// [Workspace.ReadFile], [Workspace.WriteFile], [Workspace.Mkdir],
// [Workspace.Remove], [Workspace.Rename], ... named as os.Root names them)
// resolve the name, then re-open the canonical path relative to a root fd
// with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) (package openat; the
// O_NOFOLLOW walk of package fallback where openat2 is missing), so a
// component swapped for a symlink after the check makes the open fail and
// retry, never redirect. Writes are atomic (a temporary file renamed over
// the name in the same directory). [Workspace.FS] is an fs.FS over the
// same checks; [Workspace.Discover] is discovery-time containment for
// registries such as agent skills.
//
// The same Workspace is what package landlock compiles into Landlock rules
// for children, so the userspace answer and the kernel's agree
// (testdata/carveouts.toml runs one table through both).
//
// Does not protect against: hard links that already point outside when
// the policy is built (see [WithNoHardlinkedWrites]), bind mounts inside a
// root unless [WithNoXDev], and the content of files the policy allows
// (a private key is recognised only by a header within the first
// [KeyHeadScan] bytes of a file no key pattern names; see
// [HeadHoldsPrivateKey]).
// Resolve's answer is advisory (the tree can change after it); the file
// operations are not.
package jail
