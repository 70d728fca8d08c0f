// Package nsview builds a private mount (and optionally network) namespace
// view on the calling OS thread, to sit UNDER Landlock: everything outside
// the writable roots is read-only, denied files and directories are covered
// by inaccessible (mode 0000) read-only ones, /tmp and /dev/shm are fresh, and the network can
// be cut off entirely. Children forked from that thread inherit the view;
// the rest of the process and the host are unaffected.
//
// Why: Landlock only grants. It cannot say "this tree except .env" without
// freezing every directory on the way (landlock/carve.go), and it does not
// mediate metadata (chmod, chown, utime, setxattr) at all. A mount namespace
// does both: a bind mount over the denied file, a read-only mount for the
// rest. Bubblewrap builds the same kind of view; nsview builds it on one
// locked thread of the calling Go process so that the pooled spawner
// threads of package exec can keep theirs.
//
// Usage, on a spawner thread, before Landlock and seccomp:
//
//	runtime.LockOSThread() // never unlocked, not the main thread: the thread dies with the goroutine
//	v := nsview.New().Writable(ws, tmpdir).Mask(ws+"/.env").PrivateTmp()
//	if err := v.Enter(); err != nil { ... } // ErrUnavailable: fall back
//	// drop capabilities, landlock_restrict_self, seccomp, then fork.
//
// Landlock refuses mount(2), umount(2) and pivot_root(2) to a sandboxed
// thread, so a view entered before landlock_restrict_self cannot be undone
// from inside it.
//
// The view does NOT protect against: a child that keeps CAP_SYS_ADMIN and
// is not under Landlock (it could unmount the masks); hard links to a
// denied file made, outside the view, under another name (the mask covers
// one name); denied files created after Enter (the mask list is fixed when
// the view is built); reading the underlying data of a masked file through
// a file descriptor opened before Enter. Only the root case is built: an
// unprivileged caller needs a user namespace, which needs a
// single-threaded (re-executed) stage; Enter then returns ErrUnavailable.
//
// Linux only, 5.12 or later (mount_setattr(2)); elsewhere every function
// returns an error wrapping errors.ErrUnsupported.
package nsview

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/landjail/landjail/internal/wire"
)

// View describes a namespace view. It is a value: every method returns a
// modified copy, so a View can be shared and extended safely. The zero
// value (same as New()) makes the whole tree read-only and nothing else.
type View struct {
	writable   []string
	readOnly   []string
	masks      []string
	privateTmp bool
	shm        string // SharedMemory
	// writableTmp: WritableTmp.
	writableTmp bool
	noNetwork   bool
}

// New returns an empty View: the whole file tree read-only, no mask, the
// host's /tmp, /dev/shm and network.
func New() View { return View{} }

// Writable returns a copy of v in which each path (absolute, clean, not
// "/"), with everything mounted beneath it, keeps the write access the
// host gives it. Everything else becomes read-only. A path may be a
// directory or a file. Each path is opened without following any
// symbolic link in any component; pass paths with symlinks resolved.
func (v View) Writable(paths ...string) View {
	v.writable = append(slices.Clone(v.writable), paths...)
	return v
}

// Mask returns a copy of v in which each path (absolute, clean, not "/")
// is covered: a directory by an empty directory, any other file by an
// empty regular file, both mode 0000, read-only, owned by root on a
// private tmpfs. Opening one fails with EACCES for the command (it holds
// no capability), as Landlock refuses a denied file in the Landlock-only
// layer: a denied file is refused, never read as empty, so `git add -A`
// fails loudly instead of committing a secret emptied. Tools that walk
// the tree learn nothing but the name, which the parent directory shows
// anyway; writes, rename, unlink and link of the masked name fail
// (EACCES, EROFS or EBUSY). A path
// that does not exist when the view is built makes Enter fail (the
// caller's deny list is stale), except under a private /tmp or /dev/shm
// and outside every writable root, where it is unreachable anyway. Each
// mask is one mount: a view with more than fs.mount-max allows (about
// 100,000 by default, see MountBudget) makes Enter fail with
// ErrMountLimit before it mounts anything.
func (v View) Mask(paths ...string) View {
	v.masks = append(slices.Clone(v.masks), paths...)
	return v
}

// ReadOnly returns a copy of v in which each path (absolute, clean, not
// "/"), typically a file or directory inside a writable root, is made
// read-only again, with everything mounted beneath it: a recursive clone
// of it (open_tree OPEN_TREE_CLONE|AT_RECURSIVE, after the writable roots
// are attached) is set MOUNT_ATTR_RDONLY and mounted on itself. Writes,
// chmod, utime and creating, removing or renaming entries inside it fail
// with EROFS; the path itself cannot be removed or renamed (EBUSY), its
// parent directory stays writable. A path that does not exist when the
// view is built makes Enter fail (ENOENT), as for Mask; a path hidden by
// PrivateTmp and outside every writable root is dropped (unreachable).
// Masks are applied after it, so a mask below a read-only path holds.
func (v View) ReadOnly(paths ...string) View {
	v.readOnly = append(slices.Clone(v.readOnly), paths...)
	return v
}

// PrivateTmp returns a copy of v with a fresh tmpfs (mode 1777, nosuid,
// nodev) on /tmp and on /dev/shm, so the host's /tmp is invisible and
// POSIX shared memory and semaphores (Python multiprocessing) work. A
// writable root below /tmp or /dev/shm is re-attached inside the fresh
// tmpfs at the same path (its missing parents are created, mode 0755); a
// writable root equal to /tmp or /dev/shm is an ErrInvalidPath conflict.
func (v View) PrivateTmp() View {
	v.privateTmp = true
	return v
}

// WritableTmp returns a copy of v whose private /tmp (with PrivateTmp)
// is meant to be granted to the command by a Landlock rule on its own
// root, which each spawn adds after Enter (GrantPrivateTmp). The view
// itself mounts the same tmpfs either way; this only records the choice
// (landlock.Report.WritableTmp) for the spawner. Not in the JSON form:
// the user-namespace stage is told with nsinit.Spec.TmpAccess.
func (v View) WritableTmp() View {
	v.writableTmp = true
	return v
}

// HasPrivateTmp reports whether the view's /tmp is a fresh tmpfs to be
// granted by a Landlock rule of its own (PrivateTmp and WritableTmp; see
// GrantPrivateTmp).
func (v View) HasPrivateTmp() bool { return v.privateTmp && v.writableTmp }

// SharedMemory returns a copy of v in which, with PrivateTmp, /dev/shm is
// not a fresh tmpfs but dir (absolute, clean, an existing directory,
// reached without following symbolic links), bind-mounted there with the
// host's flags. The caller creates dir (mode 1777 for several users) and
// removes it; it lets a Landlock rule added on dir before Enter cover the
// view's /dev/shm, which a fresh tmpfs (a new inode) cannot. Without
// PrivateTmp it has no effect.
func (v View) SharedMemory(dir string) View {
	v.shm = dir
	return v
}

// NoNetwork returns a copy of v in which the thread also gets a new,
// empty network namespace (CLONE_NEWNET) with only the loopback
// interface, brought up: no route to anything, not even the host's
// loopback listeners.
func (v View) NoNetwork() View {
	v.noNetwork = true
	return v
}

// Enter builds the view and moves the calling OS thread into it:
// unshare(CLONE_FS|CLONE_NEWNS[|CLONE_NEWNET]); mount propagation of every
// mount set to private (nothing reaches the host); a recursive clone of
// each writable root (open_tree OPEN_TREE_CLONE|AT_RECURSIVE) taken;
// everything made read-only (mount_setattr MOUNT_ATTR_RDONLY,
// AT_RECURSIVE); the clones attached back; private /tmp and /dev/shm;
// masks; loopback up. Every target is reached by a component-by-component
// O_PATH|O_NOFOLLOW walk from "/" and every mount is attached through that
// descriptor (move_mount MOVE_MOUNT_T_EMPTY_PATH), so a path swapped for a
// symbolic link by a concurrent process makes Enter fail rather than
// mount outside.
//
// The caller must have called runtime.LockOSThread and must never unlock
// the thread: the thread is in the view for the rest of its life, and
// exits when its goroutine returns. Enter refuses the main thread
// (ErrMainThread). On any error the thread may be in a partly built
// namespace: do not spawn from it; return from the goroutine so that the
// thread dies.
//
// Errors: ErrInvalidPath (a bad path; nothing done); ErrMountLimit
// when the view's mounts cannot fit fs.mount-max (checked before
// anything is done, see MountBudget; or ENOSPC from a mount); ErrUnavailable,
// wrapping the errno, when the kernel or the process cannot do it (EPERM,
// ENOSYS, EINVAL from unshare or the first use of a new mount syscall);
// otherwise an *fs.PathError whose Op is the failing syscall, Path the
// view path and Err the errno (ELOOP: a symbolic link on the way; ENOENT:
// a missing writable root or mask). Concurrency: affects only the calling
// thread. Needs CAP_SYS_ADMIN and Linux >= 5.12.
func (v View) Enter() error { return enter(v, false) }

// EnterOwnNamespaces is Enter for a process that is alone in mount and
// IPC namespaces made for it, as the user-namespace stage is (cloned
// with UserNSFlags): it builds the view in the process's own mount
// namespace, and keeps its IPC namespace, instead of unsharing new ones
// for the calling thread, so every thread of the process is in the view
// (the stage's other threads only wait and reap). Saves a mount
// namespace per run: its copy, and its teardown, which waits for an
// expedited RCU grace period. The caller must be such a process: in
// mount and IPC namespaces no other process shares (else they would see
// the view's mounts) and whose mounts it needs no more. Otherwise as
// Enter (calling thread locked for good, not the main thread; same
// errors).
func (v View) EnterOwnNamespaces() error { return enter(v, true) }

// Probe reports whether Enter can work in this process: nil, or an error
// wrapping ErrUnavailable that says why (not root / no CAP_SYS_ADMIN,
// unshare refused by a seccomp profile, kernel without mount_setattr),
// plus, when not root, what would stop the future unprivileged stage:
// user namespaces disabled (user.max_user_namespaces = 0) or restricted by AppArmor
// (kernel.apparmor_restrict_unprivileged_userns = 1). It tries once, on a
// throwaway locked thread, and caches the result (the facts it tests do
// not change during a run, except a seccomp filter added later, which
// Enter then reports itself as ErrUnavailable).
func Probe() error { return probe() }

// Mounts returns how many mounts Enter adds to the mount namespace for
// v: one per writable root, read-only path, directory it pins (see
// ReadOnly and Mask), mask and private tmpfs. The mounts below a
// writable root or read-only path that its recursive clone copies along
// are not counted (they depend on the namespace; Enter counts them too).
// It is pure and linear in the number of paths. Errors: ErrInvalidPath,
// as Enter.
func (v View) Mounts() (int, error) {
	p, err := v.compile()
	if err != nil {
		return 0, err
	}
	return p.mounts(), nil
}

// MountBudget returns how many more mounts the calling thread's mount
// namespace can take: fs.mount-max (/proc/sys/fs/mount-max, 100,000 by
// default; a global sysctl that the kernel applies to each mount
// namespace: a mount beyond it fails with ENOSPC) minus the mounts the
// namespace has now (/proc/thread-self/mountinfo), which a view starts
// with a copy of. Compare it with Mounts to refuse a view before
// building anything; Enter does so itself (ErrMountLimit), with the
// mount table MountBudget read when the next Enter runs in the same
// mount namespace (read once per start-up instead of twice; a mount
// added in between still fails with ENOSPC, ErrMountLimit). Errors: an
// *fs.PathError from reading either file; off Linux one wrapping
// errors.ErrUnsupported.
func MountBudget() (int, error) { return mountBudget() }

// LastMountTable returns the mount points MountBudget last read (as
// /proc/thread-self/mountinfo's fifth field, unescaped) and the
// fs.mount-max it read with them, or nil and 0 when it read none or
// Enter took the reading; the reading stays for Enter. Package exec
// sends them to the user-namespace stage, whose mount namespace is a
// copy of the caller's (KeepMountTable).
func LastMountTable() (mounts []string, max int) { return lastMountTable() }

// KeepMountTable gives the next Enter (or EnterOwnNamespaces) on the
// calling thread, in its present mount namespace, the mount table
// mounts and fs.mount-max (max; 0: read it) for its mount-limit check
// instead of its own readings of /proc/thread-self/mountinfo and
// /proc/sys/fs/mount-max (≈0.1–0.2 ms on the user-namespace stage's
// path to its command, round 5 of issue 25): the stage's mount
// namespace is a copy of its parent's, whose table the parent read in
// Compile (LastMountTable). Like MountBudget's own reading it may be a
// moment old: the check is an estimate, and a mount beyond fs.mount-max
// still fails with ENOSPC (ErrMountLimit). nil keeps nothing.
func KeepMountTable(mounts []string, max int) { keepMountTable(mounts, max) }

// plan is what Enter does, in order.
type plan struct {
	early  []string // writable roots attached before the private tmpfs
	late   []string // writable roots below /tmp or /dev/shm, attached inside the private tmpfs
	ro     []string // read-only paths, shallowest first, made read-only after every writable root
	masks  []string // in order; the others were dropped as unreachable
	pins   []string // directories between a writable root and a mask or read-only path, shallowest first: bound on themselves
	tmpfs  []string // private tmpfs mount points
	shm    string   // directory bound on /dev/shm instead of a tmpfs ("" for none)
	netns  bool
	ndrops int // masks dropped as unreachable (for tests)
}

// mounts is the number of mounts p adds, without the submounts its
// recursive clones copy (see View.Mounts).
func (p plan) mounts() int {
	n := len(p.early) + len(p.late) + len(p.ro) + len(p.pins) + len(p.masks) + len(p.tmpfs)
	if p.shm != "" {
		n++
	}
	return n
}

// privateDirs are the directories PrivateTmp replaces.
var privateDirs = []string{"/tmp", "/dev/shm"}

// under reports whether p is dir or lies beneath it. It only compares
// strings (both clean and absolute).
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

func checkPath(kind, p string) error {
	if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return &fs.PathError{Op: kind, Path: p, Err: fmt.Errorf("%w: must be absolute, clean and not /", ErrInvalidPath)}
	}
	return nil
}

// compile checks v and orders its mounts. It is pure: tested without a
// kernel. Writable roots are attached shallowest first (a nested root
// lands on top of its parent's clone), masks last (on top of everything).
// Its cost is O(n log n) in the number of paths (times their depth): a
// tree with 100,000 denied files is planned in a fraction of a second
// (BenchmarkMasks). Every "is it below one of those" question is a walk
// up the path's parents through a set, never a scan of a list.
func (v View) compile() (plan, error) {
	var p plan
	ws := slices.Clone(v.writable)
	for _, w := range ws {
		if err := checkPath("writable", w); err != nil {
			return plan{}, err
		}
		if v.privateTmp && slices.Contains(privateDirs, w) {
			return plan{}, &fs.PathError{Op: "writable", Path: w, Err: fmt.Errorf("%w: conflicts with PrivateTmp", ErrInvalidPath)}
		}
	}
	ws = sortByDepth(ws)
	for _, w := range ws {
		if v.privateTmp && slices.ContainsFunc(privateDirs, func(d string) bool { return under(w, d) }) {
			p.late = append(p.late, w)
		} else {
			p.early = append(p.early, w)
		}
	}
	// hidden reports whether a private tmpfs covers x and no writable
	// root re-attached inside it brings x back.
	lateSet := setOf(p.late)
	hidden := func(x string) bool {
		return v.privateTmp && slices.ContainsFunc(privateDirs, func(d string) bool { return under(x, d) }) &&
			!ancestorIn(x, lateSet, true)
	}
	for _, r := range v.readOnly {
		if err := checkPath("read-only", r); err != nil {
			return plan{}, err
		}
	}
	for _, r := range sortByDepth(slices.Clone(v.readOnly)) {
		if hidden(r) {
			p.ndrops++
			continue
		}
		p.ro = append(p.ro, r)
	}
	for _, m := range v.masks {
		if err := checkPath("mask", m); err != nil {
			return plan{}, err
		}
	}
	kept := make(map[string]bool, len(v.masks))
	for _, m := range sortByDepth(slices.Clone(v.masks)) {
		// Below another mask (shallower, so already kept): that one can
		// only be a directory, now empty, so there is nothing left to
		// cover.
		if hidden(m) || ancestorIn(m, kept, false) {
			p.ndrops++
			continue
		}
		kept[m] = true
		p.masks = append(p.masks, m)
	}
	p.pins = pins(ws, p.ro, p.masks, kept)
	if v.privateTmp {
		p.tmpfs = privateDirs
		if v.shm != "" {
			if err := checkPath("shared-memory", v.shm); err != nil {
				return plan{}, err
			}
			p.tmpfs, p.shm = []string{"/tmp"}, v.shm
		}
	}
	p.netns = v.noNetwork
	return p, nil
}

// sortByDepth sorts paths (absolute, clean) shallowest first, then by
// name, and drops duplicates. The depth of each path is counted once.
func sortByDepth(paths []string) []string {
	type keyed struct {
		depth int
		path  string
	}
	ks := make([]keyed, len(paths))
	for i, p := range paths {
		ks[i] = keyed{strings.Count(p, "/"), p}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.depth != b.depth {
			return a.depth - b.depth
		}
		return strings.Compare(a.path, b.path)
	})
	out := paths[:0]
	for i, k := range ks {
		if i == 0 || k.path != ks[i-1].path {
			out = append(out, k.path)
		}
	}
	return out
}

func setOf(paths []string) map[string]bool {
	s := make(map[string]bool, len(paths))
	for _, p := range paths {
		s[p] = true
	}
	return s
}

// ancestorIn reports whether a directory strictly above p (absolute,
// clean), or with self p itself, is in set: the set form of
// "under(p, d) for some d in set", in O(depth of p).
func ancestorIn(p string, set map[string]bool, self bool) bool {
	if len(set) == 0 {
		return false
	}
	if self && set[p] {
		return true
	}
	for p != "/" {
		p = filepath.Dir(p)
		if set[p] {
			return true
		}
	}
	return false
}

// pins returns the directories strictly between a mask or read-only
// path and the deepest writable root holding it, shallowest first, minus
// those that are mount points already (writable roots, read-only paths,
// masks) or lie under a read-only path (renaming there fails anyway).
// Enter binds each on itself: a mount point cannot be renamed or removed
// (EBUSY), so a command cannot move a masked file's or a read-only
// directory's parent away and leave a decoy at its name for the next
// run, whose patterns and paths find things by name (a renamed
// ".kube" would take ".kube/config" out of "**/.kube/config").
//
// masks is given as a set too (maskSet). Each directory is looked at
// once: the walk up from a mask stops at the first directory already
// met, since everything above it was handled then (the deepest writable
// root above a directory does not depend on which mask led there).
func pins(writable, ro, masks []string, maskSet map[string]bool) []string {
	wset, roSet := setOf(writable), setOf(ro)
	seen := map[string]bool{}
	var out []string
	for _, m := range append(slices.Clone(ro), masks...) {
		root := ""
		for d := m; d != "/" && root == ""; {
			d = filepath.Dir(d)
			if wset[d] {
				root = d
			}
		}
		if root == "" {
			continue
		}
		for d := filepath.Dir(m); d != root && !seen[d]; d = filepath.Dir(d) {
			seen[d] = true
			if !wset[d] && !maskSet[d] && !ancestorIn(d, roSet, true) {
				out = append(out, d)
			}
		}
	}
	return sortByDepth(out)
}

// viewJSON is View's JSON form.
type viewJSON struct {
	Writable     []string `json:"writable,omitempty"`
	ReadOnly     []string `json:"read_only,omitempty"`
	Masks        []string `json:"masks,omitempty"`
	PrivateTmp   bool     `json:"private_tmp,omitempty"`
	SharedMemory string   `json:"shared_memory,omitempty"`
	NoNetwork    bool     `json:"no_network,omitempty"`
}

// MarshalJSON encodes v (for a re-executed stage that builds the same
// view: internal/nsinit).
func (v View) MarshalJSON() ([]byte, error) {
	return json.Marshal(viewJSON{v.writable, v.readOnly, v.masks, v.privateTmp, v.shm, v.noNetwork})
}

// UnmarshalJSON decodes what MarshalJSON encoded.
func (v *View) UnmarshalJSON(b []byte) error {
	var j viewJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*v = View{writable: j.Writable, readOnly: j.ReadOnly, masks: j.Masks, privateTmp: j.PrivateTmp, shm: j.SharedMemory, noNetwork: j.NoNetwork}
	return nil
}

// viewTag opens View's binary form (AppendBinary).
const viewTag = 'V'

// AppendBinary appends v's binary form (internal/wire), the fields of
// its JSON form in the same order, to b: what the parent sends a
// re-executed stage that builds the same view (internal/nsinit), without
// encoding/json's reflection on either side.
func (v View) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, viewTag)
	b = wire.AppendStrings(b, v.writable)
	b = wire.AppendStrings(b, v.readOnly)
	b = wire.AppendStrings(b, v.masks)
	b = wire.AppendBool(b, v.privateTmp)
	b = wire.AppendString(b, v.shm)
	b = wire.AppendBool(b, v.noNetwork)
	return b, nil
}

// UnmarshalBinary decodes what AppendBinary appended, exactly (anything
// else, trailing bytes included, fails with wire.ErrMalformed), into v.
func (v *View) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != viewTag {
		return wire.ErrMalformed
	}
	r := wire.NewReader(b[1:])
	d := View{writable: r.Strings(), readOnly: r.Strings(), masks: r.Strings(), privateTmp: r.Bool(), shm: r.String(), noNetwork: r.Bool()}
	if err := r.Done(); err != nil {
		return err
	}
	*v = d
	return nil
}

// ProbeUserNS reports, for a caller without CAP_SYS_ADMIN, whether a
// re-executed stage can build the view instead (internal/nsinit): nil
// when this process may clone a child into the new user, mount and PID
// namespaces the stage is cloned into and, there, change mount
// propagation (mount(2) MS_REC|MS_PRIVATE on "/") and open a tmpfs
// context (fsopen(2), Linux 5.2); else an error wrapping ErrUnavailable
// and the errno that says which step failed and why: EPERM on the clone
// from a container's seccomp profile (Docker's default) or an LSM, EPERM
// on the mount where user namespaces carry no capability (Ubuntu's
// AppArmor restriction, kernel.apparmor_restrict_unprivileged_userns =
// 1, which lets the user namespace be made), user namespaces disabled
// (user.max_user_namespaces = 0). On amd64 the child shares this
// process's memory and runs a few instructions of assembly (no fork of
// the address space, no execve: ≈0.1 ms); elsewhere it is a forked child
// that fails an execve, which cannot try the mount. Probed once per
// process. A process that cloned the stage itself from its initializer
// (internal/stagestart/sysclone) has the clone proven: its probe child
// gets only the user and mount namespaces the two other steps need.
// Linux 3.8 (unprivileged user namespaces); the stage needs 5.12
// (mount_setattr).
func ProbeUserNS() error { return probeUserNS() }
