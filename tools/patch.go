package tools

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/landjail/landjail/jail"
)

// Bounds on one patch call, beside Limits.FileBytes (which caps the diff
// text, each file's old content and each file's result).
const (
	// maxPatchFiles caps the files one diff may touch: a model's change
	// set, not a tree import; more is refused before anything is read.
	maxPatchFiles = 256
	// maxPatchHunks caps the hunks of one diff (all files together).
	maxPatchHunks = 10000
	// patchHeldFactor: the old and new contents held in memory at once
	// are capped at patchHeldFactor*Limits.FileBytes (40 MiB by default).
	patchHeldFactor = 4
)

// Git's file modes for regular files (the only ones patch writes): the
// mode lines of a diff carry the raw st_mode in octal.
const (
	gitModeRegular = 0o100644
	gitModeExec    = 0o100755
	gitModeSymlink = 0o120000
	gitModeGitlink = 0o160000
)

// PatchArgs are patch's arguments.
type PatchArgs struct {
	// Patch is a unified diff, git-style (`diff --git` headers, mode,
	// rename and copy lines) or traditional (`---`/`+++` only).
	Patch string `json:"patch"`
}

// PatchedFile is one file a patch changed.
type PatchedFile struct {
	// Op is "created", "modified", "deleted", "renamed" or "copied".
	Op string `json:"op"`
	// Path is the file's (new) name relative to the workspace; OldPath
	// the source of a rename or copy.
	Path    string `json:"path"`
	OldPath string `json:"old_path,omitempty"`
	// Added and Deleted count the hunks' lines.
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
	// Mode is the new permission when the patch set or changed it.
	Mode fs.FileMode `json:"mode,omitempty"`
}

// PatchResult is what patch returns.
type PatchResult struct {
	Files []PatchedFile `json:"files"`
}

// String renders the result for a model.
func (r *PatchResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Applied the patch to %d files:\n", len(r.Files))
	for _, f := range r.Files {
		switch f.Op {
		case "renamed", "copied":
			fmt.Fprintf(&b, "%s %s -> %s", f.Op, f.OldPath, f.Path)
		default:
			fmt.Fprintf(&b, "%s %s", f.Op, f.Path)
		}
		fmt.Fprintf(&b, " (+%d -%d)", f.Added, f.Deleted)
		if f.Mode != 0 {
			fmt.Fprintf(&b, " mode %o", f.Mode)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// patchFile is one file of a parsed diff with its names cleaned.
type patchFile struct {
	f                *gitdiff.File
	oldName, newName string // "" for the /dev/null side
}

// patchOp is one file's planned change, computed in memory.
type patchOp struct {
	pf               patchFile
	res              PatchedFile
	oldWS, newWS     string // names for the Workspace ("" when none)
	content          []byte // the new content (nil for a deletion)
	perm             fs.FileMode
	chmod            bool // set perm on an existing file
	removeOld        bool // deletion or rename
	writeNew         bool
	oldPerm          fs.FileMode
	oldUID           int    // the old file's owner (-1: unknown)
	oldData, newPrev []byte // for rollback
	newExisted       bool
	// owner is the old file's uid and gid (nil for a new file): a
	// rename's new name, and a rollback that makes a removed file
	// again, are given them back (red team round 27, R27e-2: a root
	// server's rename turned another user's 0600 file into root's).
	owner *[2]int
}

// undo is one step of a rollback.
type undo struct {
	name    string
	existed bool
	data    []byte
	perm    fs.FileMode
	dir     bool    // a directory patch created
	owner   *[2]int // patchOp.owner, for a file made again
}

// Patch is patch: it applies a unified diff, parsed with
// github.com/bluekeyes/go-gitdiff, to the workspace, all files or none.
//
// Names follow git apply's -p1: exactly one leading component (the a/
// and b/ of git's headers) is dropped from every name, by go-gitdiff for
// `diff --git` sections and here for traditional `---`/`+++` headers
// (which must then have one). Every old and new name must be relative,
// non-empty, without NUL, "." or ".." components (ErrInvalidArgs), then
// goes through the Workspace like write_file's (and the Toolkit's scope):
// deny patterns, read-only roots and agent-config carve-outs
// (jail.ErrReadOnly), private keys. An existing file the patch modifies,
// deletes or renames must have been read with read_file and be unchanged
// since (jail.ErrNotRead, jail.ErrStale) when the Workspace has a
// tracker; a created, renamed-to or copied-to file must not exist
// (fs.ErrExist). Patch targets are never followed as symlinks
// (ErrNotRegular).
//
// Refused as ErrPatchUnsupported: binary patches (go-gitdiff can apply
// them, but the model cannot review them and read_file does not show
// binary files), symlinks (mode 120000), gitlinks (160000), and any mode
// other than 100644 and 100755 (no setuid, setgid or sticky bit).
//
// Hunks must apply at their stated line numbers (no offset or fuzz);
// one that does not fails with ErrPatchConflict naming the file, the
// hunk header, the line that differs and, when the hunk's old lines
// occur elsewhere, the nearest line they match at.
//
// Every result is computed in memory first (each file and the diff
// itself at most Limits.FileBytes, ErrFileTooLarge; at most 256 files
// and 10000 hunks, ErrInvalidArgs), every path is checked, then each file
// is written with Workspace.WriteFile (atomic) and deletions made with
// Workspace.Remove. If a write fails, the files already written are
// restored (previous content and mode, created files and directories
// removed) and the error says whether that rollback succeeded. A change
// made by another process during the call is caught by the tracker
// (ErrStale) where there is one, not otherwise.
func (k *Toolkit) Patch(a PatchArgs) (*PatchResult, error) {
	const tool = ToolPatch
	lim := k.limits()
	if int64(len(a.Patch)) > lim.FileBytes {
		return nil, k.fail(tool, "", &fs.PathError{Op: "patch", Path: "patch", Err: fmt.Errorf("%w: the diff is %d bytes, more than the cap of %d bytes (landjail-mcp --max-file-size, tools.Limits.FileBytes); split it", ErrFileTooLarge, len(a.Patch), lim.FileBytes)})
	}
	files, err := parsePatch(a.Patch)
	if err != nil {
		return nil, k.fail(tool, "", err)
	}
	ops := make([]*patchOp, 0, len(files))
	var held int64
	for _, pf := range files {
		op, err := k.planPatch(pf, lim.FileBytes)
		if err != nil {
			return nil, err
		}
		held += int64(len(op.oldData) + len(op.content))
		if held > patchHeldFactor*lim.FileBytes {
			return nil, k.fail(tool, pf.display(), &fs.PathError{Op: "patch", Path: pf.display(), Err: fmt.Errorf("%w: the files of this patch hold more than %d bytes together; split it", ErrFileTooLarge, patchHeldFactor*lim.FileBytes)})
		}
		ops = append(ops, op)
	}
	var done []undo
	for _, op := range ops {
		if err := k.applyOp(op, &done); err != nil {
			rb := k.rollback(done)
			msg := "every file already written was restored"
			if rb != nil {
				msg = fmt.Sprintf("ROLLBACK FAILED, the workspace is partly patched: %v", rb)
			}
			fe := k.fail(tool, op.pf.display(), err)
			te, ok := fe.(*Error)
			if !ok {
				te = &Error{Tool: tool, Path: op.pf.display(), Err: fe, msg: fe.Error()}
			}
			te.msg += "; writing it failed after the plan passed, " + msg
			if rb != nil {
				te.Err = errors.Join(err, rb)
			}
			return nil, te
		}
	}
	r := &PatchResult{}
	for _, op := range ops {
		r.Files = append(r.Files, op.res)
	}
	return r, nil
}

func (pf patchFile) display() string {
	if pf.newName != "" {
		return pf.newName
	}
	return pf.oldName
}

// parsePatch splits the diff at `diff --git` lines (a hunk line never
// starts with "diff", so the split cannot cut a hunk) so it knows which
// files came from git headers (names already -p1 stripped by go-gitdiff)
// and which from traditional headers (stripped here), parses each part,
// and checks names, modes, kinds and bounds.
func parsePatch(diff string) ([]patchFile, error) {
	if strings.IndexByte(diff, 0) >= 0 {
		return nil, fmt.Errorf("%w: the patch contains a NUL byte (binary data is not supported)", ErrPatchUnsupported)
	}
	// Check the bounds on the text before parsing: go-gitdiff keeps every
	// parsed line (a 10 MiB diff of tiny hunks allocated 160 MiB before
	// this check). Lines starting "@@ -" and "+++ " are counted; an added
	// line whose text starts with "++ " counts too, so the file count is
	// an upper bound (such a diff is refused only past 256 of them).
	if n := strings.Count("\n"+diff, "\n@@ -"); n > maxPatchHunks {
		return nil, fmt.Errorf("%w: the patch has more than %d hunks; split it", ErrInvalidArgs, maxPatchHunks)
	}
	if n := strings.Count("\n"+diff, "\n+++ "); n > maxPatchFiles {
		return nil, fmt.Errorf("%w: the patch touches more than %d files; split it", ErrInvalidArgs, maxPatchFiles)
	}
	var parts []string
	start := 0
	for i := 0; i < len(diff); {
		if strings.HasPrefix(diff[i:], "diff --git ") && i > start {
			parts = append(parts, diff[start:i])
			start = i
		}
		nl := strings.IndexByte(diff[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	parts = append(parts, diff[start:])
	var out []patchFile
	hunks := 0
	seen := map[string]bool{}
	for _, part := range parts {
		files, _, err := gitdiff.Parse(strings.NewReader(part))
		if err != nil {
			return nil, fmt.Errorf("%w: cannot parse the patch: %v", ErrInvalidArgs, err)
		}
		gitHeader := strings.HasPrefix(part, "diff --git ")
		for i, f := range files {
			if len(out) == maxPatchFiles {
				return nil, fmt.Errorf("%w: the patch touches more than %d files; split it", ErrInvalidArgs, maxPatchFiles)
			}
			hunks += len(f.TextFragments)
			if hunks > maxPatchHunks {
				return nil, fmt.Errorf("%w: the patch has more than %d hunks; split it", ErrInvalidArgs, maxPatchHunks)
			}
			pf := patchFile{f: f}
			strip := !(gitHeader && i == 0)
			if !f.IsNew {
				if pf.oldName, err = patchName(f.OldName, strip); err != nil {
					return nil, err
				}
			}
			if !f.IsDelete {
				if pf.newName, err = patchName(f.NewName, strip); err != nil {
					return nil, err
				}
			}
			if err := patchKind(pf); err != nil {
				return nil, err
			}
			names := []string{pf.newName}
			if pf.oldName != pf.newName && !f.IsCopy {
				names = append(names, pf.oldName)
			}
			for _, n := range names {
				if n == "" {
					continue
				}
				if seen[n] {
					return nil, fmt.Errorf("%w: %q is changed twice by this patch; merge its hunks into one file section", ErrInvalidArgs, n)
				}
				seen[n] = true
			}
			out = append(out, pf)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no file changes found; give a unified diff with ---/+++ (or diff --git) headers and @@ hunks", ErrInvalidArgs)
	}
	return out, nil
}

// patchName checks one name of a diff and drops its first component when
// strip (git apply -p1 for traditional headers).
func patchName(name string, strip bool) (string, error) {
	bad := func(why string) error {
		return fmt.Errorf("%w: file name %q in the patch %s", ErrInvalidArgs, name, why)
	}
	switch {
	case name == "":
		return "", bad("is empty")
	case strings.IndexByte(name, 0) >= 0:
		return "", bad("contains a NUL byte")
	case strings.HasPrefix(name, "/"):
		return "", bad("is absolute; use a/<path> and b/<path> relative to the workspace root")
	}
	if strip {
		i := strings.IndexByte(name, '/')
		if i < 0 {
			return "", bad("has no a/ or b/ prefix to strip (names are taken as git apply -p1 does)")
		}
		name = name[i+1:]
	}
	if name == "" || strings.HasPrefix(name, "/") {
		return "", bad("is empty or absolute after stripping its first component")
	}
	for _, c := range strings.Split(name, "/") {
		if c == "" || c == "." || c == ".." {
			return "", bad("has an empty, \".\" or \"..\" component")
		}
	}
	return name, nil
}

// patchKind refuses what patch does not write: binary data, symlinks,
// gitlinks, modes other than 100644/100755.
func patchKind(pf patchFile) error {
	f := pf.f
	if f.IsBinary || f.BinaryFragment != nil {
		return fmt.Errorf("%w: %s: binary patches are not applied; use write_file or bash", ErrPatchUnsupported, pf.display())
	}
	for _, m := range []fs.FileMode{f.OldMode, f.NewMode} {
		switch m {
		case 0, gitModeRegular, gitModeExec:
		case gitModeSymlink:
			return fmt.Errorf("%w: %s: the patch creates or changes a symbolic link (mode 120000), which patch refuses", ErrPatchUnsupported, pf.display())
		case gitModeGitlink:
			return fmt.Errorf("%w: %s: the patch creates or changes a submodule (mode 160000), which patch refuses", ErrPatchUnsupported, pf.display())
		default:
			return fmt.Errorf("%w: %s: mode %o is refused; only 100644 and 100755 (no setuid, setgid or sticky bits)", ErrPatchUnsupported, pf.display(), uint32(m))
		}
	}
	return nil
}

// planPatch checks one file's paths against the policy and computes its
// result in memory. Nothing is written.
func (k *Toolkit) planPatch(pf patchFile, limit int64) (*patchOp, error) {
	const tool = ToolPatch
	f := pf.f
	op := &patchOp{pf: pf}
	op.res.Path = pf.display()
	switch {
	case f.IsNew:
		op.res.Op = "created"
	case f.IsDelete:
		op.res.Op = "deleted"
	case f.IsCopy:
		op.res.Op, op.res.OldPath = "copied", pf.oldName
	case f.IsRename || pf.oldName != pf.newName:
		op.res.Op, op.res.OldPath = "renamed", pf.oldName
	default:
		op.res.Op = "modified"
	}
	var old []byte
	if !f.IsNew {
		name, err := k.path(pf.oldName, "")
		if err != nil {
			return nil, k.fail(tool, pf.oldName, err)
		}
		op.oldWS = name
		mutates := !f.IsCopy
		fi, err := k.patchTarget(name, mutates)
		if err != nil {
			return nil, k.fail(tool, pf.oldName, err)
		}
		op.oldPerm = fi.Mode().Perm()
		op.oldUID = -1
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			op.oldUID = int(st.Uid)
		}
		if old, err = k.readCapped(name, pf.oldName, limit); err != nil {
			return nil, k.fail(tool, pf.oldName, err)
		}
		op.oldData = old
		op.removeOld = f.IsDelete || op.res.Op == "renamed"
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && op.removeOld {
			// A rename or deletion: the file is the same one after it
			// (a copy is the writer's, as with cp).
			op.owner = &[2]int{int(st.Uid), int(st.Gid)}
		}
	}
	if !f.IsDelete {
		if op.res.Op == "modified" {
			op.newWS = op.oldWS
			op.newExisted, op.newPrev = true, old
		} else {
			name, err := k.path(pf.newName, "")
			if err != nil {
				return nil, k.fail(tool, pf.newName, err)
			}
			if _, err := k.WS.Check(name, jail.Write); err != nil {
				return nil, k.fail(tool, pf.newName, err)
			}
			if _, err := k.WS.Lstat(name); err == nil {
				return nil, k.fail(tool, pf.newName, &fs.PathError{Op: "patch", Path: pf.newName, Err: fmt.Errorf("%w: the patch creates it but it exists; read_file it and patch it as a modification", fs.ErrExist)})
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, k.fail(tool, pf.newName, err)
			}
			op.newWS = name
		}
		if err := checkHunks(pf, old); err != nil {
			return nil, k.fail(tool, pf.display(), err)
		}
		var buf bytes.Buffer
		w := &cappedWriter{w: &buf, left: limit}
		if err := gitdiff.Apply(w, bytes.NewReader(old), f); err != nil {
			if w.over {
				return nil, k.fail(tool, pf.display(), &fs.PathError{Op: "patch", Path: pf.display(), Err: fmt.Errorf("%w: the patched file would be larger than the cap of %d bytes (landjail-mcp --max-file-size, tools.Limits.FileBytes)", ErrFileTooLarge, limit)})
			}
			return nil, k.fail(tool, pf.display(), fmt.Errorf("%w: %s: %v", ErrPatchConflict, pf.display(), err))
		}
		op.content = buf.Bytes()
		if op.content == nil {
			op.content = []byte{}
		}
		op.writeNew = true
		op.perm = 0o644
		if !f.IsNew {
			op.perm = op.oldPerm
		}
		if f.NewMode != 0 {
			op.perm = f.NewMode.Perm()
			op.res.Mode = op.perm
			op.chmod = !f.IsNew
			if !f.IsNew && !f.IsCopy && op.perm != op.oldPerm && op.oldUID != os.Geteuid() {
				// Only a file's owner changes its mode (chmod(2): EPERM
				// without CAP_FOWNER, which the file tools do not hold):
				// a rename's new file, made with the mode, would have
				// given the agent a chmod of another user's file that
				// its bash is refused (red team round 31, R31a-3).
				return nil, k.fail(tool, pf.display(), &fs.PathError{Op: "chmod", Path: pf.display(), Err: fs.ErrPermission})
			}
		}
	} else {
		// A deletion's hunks hold the whole old content: they must match
		// and leave nothing, or the file holds lines the model never saw
		// in the diff.
		if err := checkHunks(pf, old); err != nil {
			return nil, k.fail(tool, pf.display(), err)
		}
		var buf bytes.Buffer
		err := gitdiff.Apply(&cappedWriter{w: &buf, left: limit}, bytes.NewReader(old), f)
		if err == nil && buf.Len() > 0 {
			err = fmt.Errorf("%d bytes would remain", buf.Len())
		}
		if err != nil {
			return nil, k.fail(tool, pf.display(), fmt.Errorf("%w: %s: the deletion does not remove the whole file (%v); read_file it and list every line", ErrPatchConflict, pf.display(), err))
		}
	}
	for _, fr := range f.TextFragments {
		op.res.Added += int(fr.LinesAdded)
		op.res.Deleted += int(fr.LinesDeleted)
	}
	return op, nil
}

// patchTarget checks that the existing file name may be read and, when
// mutates, replaced (the policy's Write check, then a write-only
// O_NONBLOCK open that neither truncates nor writes, as edit_file: deny
// patterns, read-only roots, private keys, the tracker); it must be a
// regular file, not a symlink.
func (k *Toolkit) patchTarget(name string, mutates bool) (fs.FileInfo, error) {
	access := jail.Read
	if mutates {
		access = jail.Write
	}
	if _, err := k.WS.Check(name, access); err != nil {
		return nil, err
	}
	lfi, err := k.WS.Lstat(name)
	if err != nil {
		return nil, err
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w (symlink: patch does not follow symbolic links; patch the file it points to)", ErrNotRegular)
	}
	if err := regular(lfi); err != nil {
		return nil, err
	}
	if mutates {
		// The owner and mode given back (giveBack) are those of the
		// inode proven writable, not of the lstat above: a name
		// exchanged between the two gave the agent's content the
		// owner of a file it could not write (red team round 30,
		// R30a-1); nothing but that regular file is opened (R30a-3).
		fi, err := k.WS.ProbeWritable(name)
		if err != nil {
			return nil, err
		}
		ls, ok1 := lfi.Sys().(*syscall.Stat_t)
		ps, ok2 := fi.Sys().(*syscall.Stat_t)
		if !ok1 || !ok2 || ls.Dev != ps.Dev || ls.Ino != ps.Ino {
			return nil, fmt.Errorf("%s changed while patch checked it: %w", name, ErrNotRegular)
		}
		return fi, nil
	}
	return lfi, nil
}

// checkHunks checks, before go-gitdiff applies them, that each hunk's
// old lines are in old at the stated position, so a failure can name the
// hunk, the differing line and the nearest position where the old lines
// do occur.
func checkHunks(pf patchFile, old []byte) error {
	src := strings.SplitAfter(string(old), "\n")
	if len(src) > 0 && src[len(src)-1] == "" {
		src = src[:len(src)-1]
	}
	for i, fr := range pf.f.TextFragments {
		var want []string
		for _, l := range fr.Lines {
			if l.Old() {
				want = append(want, l.Line)
			}
		}
		at := int(max(fr.OldPosition-1, 0))
		bad := -1
		for j, w := range want {
			if at+j >= len(src) || src[at+j] != w {
				bad = j
				break
			}
		}
		if bad < 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: hunk %d (%s) does not apply: ", pf.display(), i+1, strings.TrimSpace(fr.Header()))
		if at+bad >= len(src) {
			fmt.Fprintf(&b, "it expects line %d to be %s but the file has only %d lines", at+bad+1, quoteLine(want[bad]), len(src))
		} else {
			fmt.Fprintf(&b, "line %d of the file is %s but the hunk expects %s", at+bad+1, quoteLine(src[at+bad]), quoteLine(want[bad]))
		}
		if near := nearest(src, want, at); near >= 0 {
			fmt.Fprintf(&b, "; the hunk's old lines occur at line %d (offset %+d): fix the @@ line numbers", near+1, near-at)
		} else {
			b.WriteString("; its old lines occur nowhere in the file: read_file it again and rebuild the hunk")
		}
		b.WriteString("; nothing was written")
		return fmt.Errorf("%w: %s", ErrPatchConflict, b.String())
	}
	return nil
}

// nearest returns the start index nearest to at where want occurs in
// src, or -1. Windows are compared by a rolling hash of their lines'
// hashes (hash/maphash, seeded per process), in O(len(src)+len(want));
// the candidates are then checked line by line nearest first, at most
// 64 of them. Comparing want at every start took len(src)·len(want) line
// comparisons: a hunk of 100,000 identical lines against a file of
// 200,000 kept landjail-mcp busy past 20 s, and hours at the frame's
// size (red team round 25, R25c-9).
func nearest(src, want []string, at int) int {
	m := len(want)
	if m == 0 || m > len(src) {
		return -1
	}
	seed := lineSeed
	const base = 1099511628211
	var hw, hs, pow uint64 = 0, 0, 1
	for i := range m {
		hw = hw*base + maphash.String(seed, want[i])
		hs = hs*base + maphash.String(seed, src[i])
		if i > 0 {
			pow *= base
		}
	}
	var cands []int
	for s := 0; ; s++ {
		if hs == hw {
			cands = append(cands, s)
		}
		if s+m >= len(src) {
			break
		}
		hs = (hs-maphash.String(seed, src[s])*pow)*base + maphash.String(seed, src[s+m])
	}
	slices.SortStableFunc(cands, func(a, b int) int { return abs(a-at) - abs(b-at) })
	for i, s := range cands {
		if i == 64 {
			break
		}
		if slices.Equal(src[s:s+m], want) {
			return s
		}
	}
	return -1
}

// lineSeed seeds nearest's line hashes.
var lineSeed = maphash.MakeSeed()

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func quoteLine(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// cappedWriter fails once more than left bytes were written.
type cappedWriter struct {
	w    *bytes.Buffer
	left int64
	over bool
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		c.over = true
		return 0, ErrFileTooLarge
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}

// applyOp writes one planned change, recording how to undo it. A
// rename removes the old name first: where it cannot be removed (a
// sticky directory of another user) nothing has been written yet, and no
// file given to the old file's owner is left that the rollback cannot
// remove (red team round 30, R30d-8: "ROLLBACK FAILED", a file of uid
// 1000 holding the agent's content stayed).
func (k *Toolkit) applyOp(op *patchOp, done *[]undo) error {
	if op.removeOld {
		if err := k.WS.Remove(op.oldWS); err != nil {
			return err
		}
		*done = append(*done, undo{name: op.oldWS, existed: true, data: op.oldData, perm: op.oldPerm, owner: op.owner})
	}
	if op.writeNew {
		if !op.newExisted {
			if err := k.patchMkdirs(op.newWS, done); err != nil {
				return err
			}
		}
		if !op.newExisted && op.owner != nil {
			// A rename's new name: its mode and owner are set on the new
			// file before it takes the name (R30a-4: a chmod and chown by
			// name afterwards reached whatever a concurrent exchange had
			// put there).
			if err := k.WS.WriteFileOwned(op.newWS, op.content, op.perm, op.owner[0], op.owner[1]); err != nil {
				return err
			}
		} else if err := k.WS.WriteFile(op.newWS, op.content, op.perm); err != nil {
			return err
		}
		*done = append(*done, undo{name: op.newWS, existed: op.newExisted, data: op.newPrev, perm: op.oldPerm, owner: op.owner})
		if op.chmod && op.newExisted {
			if err := k.WS.Chmod(op.newWS, op.perm); err != nil {
				return err
			}
		}
	}
	return nil
}

// patchMkdirs creates the missing parents of name, recording each one
// it made (mkdirParents).
func (k *Toolkit) patchMkdirs(name string, done *[]undo) error {
	made, err := k.mkdirParents(name)
	for _, d := range made {
		*done = append(*done, undo{name: d, dir: true})
	}
	return err
}

// mkdirParents creates the missing parents of name (0755), outermost
// first, and returns the ones this call made, also when it fails part
// way: a parent another process made meanwhile is not one of them, so a
// rollback never removes what it did not make.
func (k *Toolkit) mkdirParents(name string) ([]string, error) {
	var missing []string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		if _, err := k.WS.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := k.WS.Mkdir(missing[i], 0o755); err == nil {
			made = append(made, missing[i])
		} else if !errors.Is(err, fs.ErrExist) {
			return made, err
		}
	}
	return made, nil
}

// removeMade removes the directories mkdirParents made, innermost first,
// each only while it is empty (rmdir(2): one something else filled
// meanwhile stays).
func (k *Toolkit) removeMade(dirs []string) {
	for i := len(dirs) - 1; i >= 0; i-- {
		k.WS.Remove(dirs[i])
	}
}

// rollback undoes done in reverse order: previous contents and modes
// written back, created files and directories removed.
func (k *Toolkit) rollback(done []undo) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		u := done[i]
		var err error
		switch {
		case u.existed && u.owner != nil:
			err = k.WS.WriteFileOwned(u.name, u.data, u.perm, u.owner[0], u.owner[1])
		case u.existed:
			if err = k.WS.WriteFile(u.name, u.data, u.perm); err == nil {
				// WriteFile keeps the mode of the file it replaces; a
				// chmod only where that is not u.perm (a patch that
				// changed it). Another user's file may not be chmod'ed
				// by the tools: the rollback that had restored it
				// reported ROLLBACK FAILED (red team round 31, R31a-6).
				if fi, serr := k.WS.Lstat(u.name); serr != nil || fi.Mode().Perm() != u.perm {
					err = k.WS.Chmod(u.name, u.perm)
				}
			}
		default:
			err = k.WS.Remove(u.name)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
