package openat

import (
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ResolveNoXDev is RESOLVE_NO_XDEV: lookups fail with ErrMountCrossing
// when they would cross a mount point (bind mounts included). Linux ≥ 5.6;
// the O_NOFOLLOW walk emulates it by comparing mount IDs.
const ResolveNoXDev Flags = unix.RESOLVE_NO_XDEV

func openRoot(dir string, f Flags) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Root{name: dir, flags: f, fd: fd}, nil
}

func (r *Root) incref() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return -1, os.ErrClosed
	}
	r.refs++
	return r.fd, nil
}

func (r *Root) decref() {
	r.mu.Lock()
	r.refs--
	if r.closed && r.refs == 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
	r.mu.Unlock()
}

func (r *Root) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.refs == 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
	return nil
}

// pathErr wraps a lookup errno into *fs.PathError, adding the sentinel
// that names its cause.
func (r *Root) pathErr(op, name string, err error) error {
	switch err {
	case unix.EXDEV:
		// Without symlinks, escaping is a lexical property of the name.
		if r.flags&ResolveNoXDev == 0 || !filepath.IsLocal(name) {
			err = &errnoError{ErrEscapes, unix.EXDEV}
		} else {
			err = &errnoError{ErrMountCrossing, unix.EXDEV}
		}
	case unix.ELOOP:
		err = &errnoError{ErrSymlink, unix.ELOOP}
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (r *Root) openFd(name string, flag int, perm fs.FileMode) (int, error) {
	rootfd, err := r.incref()
	if err != nil {
		return -1, &fs.PathError{Op: "openat2", Path: name, Err: err}
	}
	defer r.decref()
	fd, err := openBeneath(rootfd, name, flag, syscallMode(perm), uint64(r.flags))
	if err != nil {
		return -1, r.pathErr("openat2", name, err)
	}
	return fd, nil
}

func (r *Root) openSubRoot(name string) (*Root, error) {
	fd, err := r.openFd(name, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Root{name: joinName(r.name, name), flags: r.flags, fd: fd}, nil
}

// splitLeaf splits name into its parent directory and last component,
// ignoring trailing slashes (reported in dirOnly).
func splitLeaf(name string) (dir, leaf string, dirOnly bool) {
	trimmed := strings.TrimRight(name, "/")
	dirOnly = len(trimmed) != len(name)
	if trimmed == "" && name != "" { // "/" or "//"
		return "/", ".", true
	}
	i := strings.LastIndexByte(trimmed, '/')
	if i < 0 {
		return ".", trimmed, dirOnly
	}
	dir = trimmed[:i+1]
	return dir, trimmed[i+1:], dirOnly
}

// parent opens the parent directory of name beneath the root and returns
// its fd (to be released with done), and the last component.
type parentRef struct {
	r      *Root
	rootfd int
	fd     int
	leaf   string
	dirs   bool
}

func (r *Root) openParent(op, name string) (*parentRef, error) {
	if name == "" {
		return nil, &fs.PathError{Op: op, Path: name, Err: unix.ENOENT}
	}
	if strings.IndexByte(name, 0) >= 0 {
		return nil, &fs.PathError{Op: op, Path: name, Err: &errnoError{ErrInvalidName, unix.EINVAL}}
	}
	dir, leaf, dirOnly := splitLeaf(name)
	rootfd, err := r.incref()
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	p := &parentRef{r: r, rootfd: rootfd, fd: rootfd, leaf: leaf, dirs: dirOnly}
	if dir != "." {
		fd, err := openBeneath(rootfd, dir, unix.O_PATH|unix.O_DIRECTORY, 0, uint64(r.flags))
		if err != nil {
			r.decref()
			return nil, r.pathErr("openat2", name, err)
		}
		p.fd = fd
	}
	return p, nil
}

func (p *parentRef) done() {
	if p.fd != p.rootfd {
		unix.Close(p.fd)
	}
	p.r.decref()
}

// dirSuffix applies a trailing slash: the entry must be a directory. A
// symlink fails with ErrSymlink (Root never follows one, and "link/"
// would), anything else with ENOTDIR, as the kernel does for a file.
func (p *parentRef) dirSuffix(op, name string) error {
	if !p.dirs || p.leaf == "." || p.leaf == ".." {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p.fd, p.leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "fstatat", Path: name, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return nil
	case unix.S_IFLNK:
		return p.r.pathErr(op, name, unix.ELOOP)
	}
	return &fs.PathError{Op: op, Path: name, Err: unix.ENOTDIR}
}

// entryLeaf rejects "." and ".." as the entry an operation acts on: the
// entry would not be a child of the opened parent.
func (p *parentRef) entryLeaf(op, name string) error {
	if p.leaf == "." || p.leaf == ".." {
		return &fs.PathError{Op: op, Path: name, Err: &errnoError{ErrInvalidName, unix.EINVAL}}
	}
	return nil
}

func (r *Root) mkdir(name string, perm fs.FileMode) error {
	p, err := r.openParent("mkdirat", name)
	if err != nil {
		return err
	}
	defer p.done()
	if p.leaf == "." || p.leaf == ".." {
		return &fs.PathError{Op: "mkdirat", Path: name, Err: unix.EEXIST}
	}
	if err := unix.Mkdirat(p.fd, p.leaf, syscallMode(perm)); err != nil {
		return &fs.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	return nil
}

func (r *Root) mkdirAll(name string, perm fs.FileMode) error {
	if strings.IndexByte(name, 0) >= 0 {
		return &fs.PathError{Op: "mkdirat", Path: name, Err: &errnoError{ErrInvalidName, unix.EINVAL}}
	}
	rootfd, err := r.incref()
	if err != nil {
		return &fs.PathError{Op: "mkdirat", Path: name, Err: err}
	}
	defer r.decref()
	if strings.HasPrefix(name, "/") {
		return r.pathErr("openat2", name, unix.EXDEV)
	}
	// A stack of opened directories: ".." pops it, never opens "..".
	stack := []int{rootfd}
	defer func() {
		for _, fd := range stack[1:] {
			unix.Close(fd)
		}
	}()
	for comp := range strings.SplitSeq(name, "/") {
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return r.pathErr("openat2", name, unix.EXDEV)
			}
			unix.Close(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			continue
		}
		cur := stack[len(stack)-1]
		fd, err := openBeneath(cur, comp, unix.O_PATH|unix.O_DIRECTORY, 0, uint64(r.flags))
		if err == unix.ENOENT {
			if err := unix.Mkdirat(cur, comp, syscallMode(perm)); err != nil && err != unix.EEXIST {
				return &fs.PathError{Op: "mkdirat", Path: name, Err: err}
			}
			fd, err = openBeneath(cur, comp, unix.O_PATH|unix.O_DIRECTORY, 0, uint64(r.flags))
		}
		if err != nil {
			return r.pathErr("openat2", name, err)
		}
		stack = append(stack, fd)
	}
	return nil
}

func (r *Root) remove(name string) error {
	p, err := r.openParent("unlinkat", name)
	if err != nil {
		return err
	}
	defer p.done()
	if err := p.entryLeaf("unlinkat", name); err != nil {
		return err
	}
	if p.dirs {
		err = unix.Unlinkat(p.fd, p.leaf, unix.AT_REMOVEDIR)
	} else {
		err = unix.Unlinkat(p.fd, p.leaf, 0)
		if err == unix.EISDIR || err == unix.EPERM {
			if e := unix.Unlinkat(p.fd, p.leaf, unix.AT_REMOVEDIR); e != unix.ENOTDIR {
				err = e
			}
		}
	}
	if err != nil {
		return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
	}
	return nil
}

func (r *Root) removeAll(name string) error {
	if name == "" || name == "." || strings.HasSuffix(name, "/.") {
		// Same refusal as os.RemoveAll.
		return &fs.PathError{Op: "RemoveAll", Path: name, Err: unix.EINVAL}
	}
	p, err := r.openParent("unlinkat", name)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	defer p.done()
	if err := p.entryLeaf("unlinkat", name); err != nil {
		return err
	}
	if err := removeAllAt(p.fd, p.leaf, uint64(r.flags), 0); err != nil {
		return &fs.PathError{Op: "unlinkat", Path: name, Err: err}
	}
	return nil
}

// maxRemoveDepth bounds the recursion of removeAllAt (PATH_MAX / 2: the
// deepest tree a path can name).
const maxRemoveDepth = 2048

func removeAllAt(pfd int, leaf string, resolve uint64, depth int) error {
	err := unix.Unlinkat(pfd, leaf, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	if depth > maxRemoveDepth {
		return unix.ENAMETOOLONG
	}
	fd, err := openBeneath(pfd, leaf, unix.O_RDONLY|unix.O_DIRECTORY, 0, resolve)
	switch err {
	case nil:
	case unix.ENOENT:
		return nil
	case unix.ENOTDIR, unix.ELOOP:
		// Swapped for a file or symlink meanwhile: remove that entry.
		return ignoreENOENT(unix.Unlinkat(pfd, leaf, 0))
	default:
		return err
	}
	dir := os.NewFile(uintptr(fd), leaf)
	defer dir.Close()
	for {
		names, err := dir.Readdirnames(256)
		for _, n := range names {
			if err := removeAllAt(fd, n, resolve, depth+1); err != nil {
				return err
			}
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			return err
		}
	}
	return ignoreENOENT(unix.Unlinkat(pfd, leaf, unix.AT_REMOVEDIR))
}

func ignoreENOENT(err error) error {
	if err == unix.ENOENT {
		return nil
	}
	return err
}

func isNotExist(err error) bool {
	pe, ok := err.(*fs.PathError)
	return ok && pe.Err == unix.ENOENT
}

func (r *Root) twoParents(op, oldname, newname string) (*parentRef, *parentRef, error) {
	po, err := r.openParent(op, oldname)
	if err != nil {
		return nil, nil, err
	}
	if err := po.entryLeaf(op, oldname); err != nil {
		po.done()
		return nil, nil, err
	}
	if err := po.dirSuffix(op, oldname); err != nil {
		po.done()
		return nil, nil, err
	}
	pn, err := r.openParent(op, newname)
	if err != nil {
		po.done()
		return nil, nil, err
	}
	if err := pn.entryLeaf(op, newname); err != nil {
		po.done()
		pn.done()
		return nil, nil, err
	}
	return po, pn, nil
}

func (r *Root) rename(oldname, newname string) error {
	po, pn, err := r.twoParents("renameat", oldname, newname)
	if err != nil {
		return err
	}
	defer po.done()
	defer pn.done()
	if err := unix.Renameat(po.fd, po.leaf, pn.fd, pn.leaf); err != nil {
		return &os.LinkError{Op: "renameat", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (r *Root) link(oldname, newname string) error {
	po, pn, err := r.twoParents("linkat", oldname, newname)
	if err != nil {
		return err
	}
	defer po.done()
	defer pn.done()
	if err := unix.Linkat(po.fd, po.leaf, pn.fd, pn.leaf, 0); err != nil {
		return &os.LinkError{Op: "linkat", Old: oldname, New: newname, Err: err}
	}
	return nil
}

func (r *Root) symlink(oldname, newname string) error {
	p, err := r.openParent("symlinkat", newname)
	if err != nil {
		return err
	}
	defer p.done()
	if p.leaf == "." || p.leaf == ".." {
		return &fs.PathError{Op: "symlinkat", Path: newname, Err: unix.EEXIST}
	}
	if err := unix.Symlinkat(oldname, p.fd, p.leaf); err != nil {
		return &fs.PathError{Op: "symlinkat", Path: newname, Err: err}
	}
	return nil
}

func (r *Root) stat(name string) (fs.FileInfo, error) {
	fd, err := r.openFd(name, unix.O_PATH, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	return newFileInfo(filepath.Base(name), &st), nil
}

func (r *Root) lstat(name string) (fs.FileInfo, error) {
	p, err := r.openParent("fstatat", name)
	if err != nil {
		return nil, err
	}
	defer p.done()
	if p.leaf == "." || p.leaf == ".." {
		// A directory, never a symlink: Stat has the same answer.
		return r.stat(name)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p.fd, p.leaf, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &fs.PathError{Op: "fstatat", Path: name, Err: err}
	}
	if err := p.dirSuffix("fstatat", name); err != nil {
		return nil, err
	}
	return newFileInfo(p.leaf, &st), nil
}

func (r *Root) readlink(name string) (string, error) {
	p, err := r.openParent("readlinkat", name)
	if err != nil {
		return "", err
	}
	defer p.done()
	if err := p.entryLeaf("readlinkat", name); err != nil {
		return "", err
	}
	if err := p.dirSuffix("readlinkat", name); err != nil {
		return "", err
	}
	for n := 128; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(p.fd, p.leaf, buf)
		if err != nil {
			return "", &fs.PathError{Op: "readlinkat", Path: name, Err: err}
		}
		if m < n {
			return string(buf[:m]), nil
		}
		if n > unix.PathMax*2 {
			return "", &fs.PathError{Op: "readlinkat", Path: name, Err: unix.ENAMETOOLONG}
		}
	}
}

func (r *Root) readFile(name string) ([]byte, error) {
	fd, err := r.openFd(name, unix.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return readAll(f)
}

func readAll(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data))
		}
	}
}

const (
	// tempPrefix starts the name of WriteFile's temporary files.
	tempPrefix = ".landjail-tmp-"
	// maxTempNameTries bounds WriteFile's retries of O_CREAT|O_EXCL when
	// the random name exists (EEXIST): 64 random bits collide only if
	// someone creates the names on purpose, and then the call fails with
	// EEXIST rather than loop.
	maxTempNameTries = 16
)

// writeFileAs is WriteFile (own nil) and WriteFileOwned (own the owner
// and group, perm the exact mode).
func (r *Root) writeFileAs(name string, data []byte, perm fs.FileMode, own *[2]int) (err error) {
	p, err := r.openParent("openat", name)
	if err != nil {
		return err
	}
	defer p.done()
	if p.leaf == "." || p.leaf == ".." || p.dirs {
		return &fs.PathError{Op: "openat", Path: name, Err: unix.EISDIR}
	}
	mode := syscallMode(perm)
	// An existing regular file is replaced only if it could be written
	// in place, and what the new file keeps of it (permissions, owner,
	// ACL) is read from the file that proved it (writableRegular, one
	// lookup of the leaf): red team round 30, R30a-1, a name exchanged
	// between a check and the copy gave the agent's content the owner
	// of a file it could not write.
	st, acl, err := writableRegular(p.fd, p.leaf)
	switch {
	case err == unix.ENOENT:
		st = unix.Stat_t{} // a new file
	case err != nil:
		return &fs.PathError{Op: "openat", Path: name, Err: err}
	case st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return &fs.PathError{Op: "openat", Path: name, Err: unix.EISDIR}
	case st.Mode&unix.S_IFMT == unix.S_IFREG && own == nil:
		// As an in-place write would keep them, minus set-id bits.
		mode = st.Mode & 0o1777
	}
	// An append-only or immutable directory (chattr +a, +i) takes the
	// temporary file but lets nothing rename or remove it: each call
	// left one holding the agent's content (red team round 31, R31a-1
	// variant c). Refused first, as the rename would be.
	if dfd, derr := unix.Openat(p.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); derr == nil {
		flags, ferr := unix.IoctlGetInt(dfd, unix.FS_IOC_GETFLAGS) // p.fd may be O_PATH: ioctl refuses it
		unix.Close(dfd)
		if ferr == nil && flags&(fsAppendFL|fsImmutableFL) != 0 {
			return &fs.PathError{Op: "renameat", Path: name, Err: unix.EPERM}
		}
	}
	var tmp string
	var fd int
	for range maxTempNameTries {
		tmp = tempPrefix + strconv.FormatUint(rand.Uint64(), 36)
		fd, err = unix.Openat(p.fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err != unix.EEXIST {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	chowned := false
	defer func() {
		if err != nil {
			// Given to another owner, the temporary file may be beyond
			// this process's unlink in a sticky directory: it is taken
			// back first (CAP_CHOWN was what gave it), then removed
			// (red team round 31, R31a-1: a uid-1001 file with the
			// agent's content stayed beside the one it should replace).
			if chowned {
				unix.Fchown(fd, os.Geteuid(), os.Getegid())
			}
			unix.Unlinkat(p.fd, tmp, 0)
		}
	}()
	// What the new file got at creation, which chown must mend where it
	// differs from the file it stands for: in a setgid directory its
	// group is the directory's, not this process's (red team round 31,
	// R31a-2: a root:root 0640 file became root:staff after an edit).
	var tst unix.Stat_t
	if err := unix.Fstat(fd, &tst); err != nil {
		return &fs.PathError{Op: "fstat", Path: name, Err: err}
	}
	chown := func(uid, gid int) {
		if uid != int(tst.Uid) || gid != int(tst.Gid) {
			unix.Fchown(fd, uid, gid)
			chowned = true
		}
	}
	// A default ACL of the directory was inherited at creation; the file
	// it stands for had none (or its own, set below): a named entry of the
	// default made a 0640 file readable by that user (red team round 31,
	// R31a-4). ENODATA: nothing inherited.
	unix.Fremovexattr(fd, aclAccess)
	if own != nil {
		// As the file it stands for, before the rename (R30a-4): the
		// mode first (after the chown, fchmod needs CAP_FOWNER).
		unix.Fchmod(fd, mode)
		chown(own[0], own[1])
	} else if st.Mode&unix.S_IFMT == unix.S_IFREG {
		// umask applied at creation: restore the exact old mode (no
		// set-id bits, which chown would clear), while the file is
		// still this process's (after the chown, fchmod needs
		// CAP_FOWNER, which landjail-mcp's file tools do not hold).
		unix.Fchmod(fd, mode)
		// Its access ACL: with one, the group bits of st_mode are the
		// ACL's mask, and the file lost its named entries and gave its
		// group the mask's rights (R30a-2). Best effort (a file system
		// without ACLs has none to copy).
		if acl != nil {
			unix.Fsetxattr(fd, aclAccess, acl, 0)
		}
		// The replaced file's owner and group too, where this process
		// may give them (root; a member of the group): as root,
		// landjail-mcp's write_file turned a user's 0600 file into
		// root's, which its owner could no longer read (red team round
		// 25, R25b-5). Elsewhere the new file is the writer's, as with
		// any editor that saves by rename.
		chown(int(st.Uid), int(st.Gid))
	}
	if _, werr := f.Write(data); werr != nil {
		return &fs.PathError{Op: "write", Path: name, Err: werr}
	}
	if werr := f.Sync(); werr != nil {
		return &fs.PathError{Op: "write", Path: name, Err: werr}
	}
	if err := unix.Renameat(p.fd, tmp, p.fd, p.leaf); err != nil {
		return &fs.PathError{Op: "renameat", Path: name, Err: err}
	}
	return nil
}

func (r *Root) probeWritable(name string) (fs.FileInfo, error) {
	p, err := r.openParent("openat", name)
	if err != nil {
		return nil, err
	}
	defer p.done()
	if p.leaf == "." || p.leaf == ".." || p.dirs {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: unix.EISDIR}
	}
	st, _, err := writableRegular(p.fd, p.leaf)
	if err != nil {
		return nil, r.pathErr("openat", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: unix.EINVAL}
	}
	return newFileInfo(p.leaf, &st), nil
}

// fsAppendFL and fsImmutableFL are FS_APPEND_FL and FS_IMMUTABLE_FL
// (linux/fs.h; ioctl_iflags(2)), which x/sys/unix does not define.
const (
	fsImmutableFL = 0x10
	fsAppendFL    = 0x20
)

// aclAccess is the extended attribute of a file's access ACL (acl(5)).
const aclAccess = "system.posix_acl_access"

// writableRegular opens leaf of dirfd with O_PATH (no side effect: a
// device is not opened), and, when it is a regular file, reopens that
// same inode for writing through /proc/thread-self/fd (never a device
// swapped in by name meanwhile): the caller could write it in place
// (ETXTBSY, a running program, counts: a rename replaces it). It returns
// the stat of the file it opened (not a regular file: nothing more is
// checked, the caller replaces it as any other entry) and its access
// ACL (nil for none). Errors: the reopen's (EACCES, EPERM: not
// writable), or, where /proc is not mounted and the leaf opened by name
// for writing is not the inode first opened, EAGAIN.
func writableRegular(dirfd int, leaf string) (unix.Stat_t, []byte, error) {
	var st unix.Stat_t
	pfd, err := unix.Openat(dirfd, leaf, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return st, nil, err
	}
	defer unix.Close(pfd)
	if err := unix.Fstat(pfd, &st); err != nil {
		return st, nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return st, nil, nil
	}
	const flags = unix.O_WRONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	wfd, err := unix.Open("/proc/thread-self/fd/"+strconv.Itoa(pfd), flags, 0)
	if err == unix.ENOENT {
		// No /proc: by name, then the identity compared.
		wfd, err = unix.Openat(dirfd, leaf, flags|unix.O_NOFOLLOW, 0)
		if err == nil {
			var wst unix.Stat_t
			if unix.Fstat(wfd, &wst) != nil || wst.Dev != st.Dev || wst.Ino != st.Ino {
				unix.Close(wfd)
				return st, nil, unix.EAGAIN
			}
		}
	}
	if err == unix.ETXTBSY {
		return st, fileACL(pfd, true), nil
	}
	if err != nil {
		return st, nil, err
	}
	defer unix.Close(wfd)
	if err := unix.Fstat(wfd, &st); err != nil {
		return st, nil, err
	}
	return st, fileACL(wfd, false), nil
}

// fileACL returns fd's access ACL, nil for none (or unreadable); an
// O_PATH fd is read through /proc (path true).
func fileACL(fd int, path bool) []byte {
	get := func(buf []byte) (int, error) {
		if path {
			return unix.Getxattr("/proc/thread-self/fd/"+strconv.Itoa(fd), aclAccess, buf)
		}
		return unix.Fgetxattr(fd, aclAccess, buf)
	}
	n, err := get(nil)
	if err != nil || n <= 0 || n > 64<<10 {
		return nil
	}
	buf := make([]byte, n)
	if n, err = get(buf); err != nil {
		return nil
	}
	return buf[:n]
}

func (r *Root) chmod(name string, mode fs.FileMode) error {
	p, err := r.openParent("fchmodat", name)
	if err != nil {
		return err
	}
	defer p.done()
	if err := p.dirSuffix("fchmodat", name); err != nil {
		return err
	}
	leaf := p.leaf
	err = unix.Fchmodat(p.fd, leaf, syscallMode(mode), unix.AT_SYMLINK_NOFOLLOW)
	if err != unix.EOPNOTSUPP {
		return wrapPath("fchmodat", name, err)
	}
	// fchmodat2 missing (Linux < 6.6) or leaf is a symlink.
	fd, err := unix.Openat(p.fd, leaf, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return r.pathErr("openat", name, err)
	}
	defer unix.Close(fd)
	return wrapPath("fchmod", name, unix.Fchmod(fd, syscallMode(mode)))
}

func (r *Root) lchown(name string, uid, gid int) error {
	p, err := r.openParent("fchownat", name)
	if err != nil {
		return err
	}
	defer p.done()
	if err := p.dirSuffix("fchownat", name); err != nil {
		return err
	}
	return wrapPath("fchownat", name, unix.Fchownat(p.fd, p.leaf, uid, gid, unix.AT_SYMLINK_NOFOLLOW))
}

func wrapPath(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (r *Root) readDir(name string) ([]fs.DirEntry, error) {
	ents, _, err := r.readDirN(name, -1, nil)
	return ents, err
}

// dirBatch is how many names readDirN asks of each getdents64 round.
const dirBatch = 1024

func (r *Root) readDirN(name string, n int, keep func(string) bool) ([]fs.DirEntry, int, error) {
	fd, err := r.openFd(name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, 0, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var (
		names []string // n >= 0: a max-heap of the n least names so far
		total int
	)
	for {
		batch, err := f.Readdirnames(dirBatch)
		for _, e := range batch {
			if keep != nil && !keep(e) {
				continue
			}
			total++
			switch {
			case n < 0 || len(names) < n:
				names = append(names, e)
				if n >= 0 {
					heapUp(names, len(names)-1)
				}
			case n > 0 && e < names[0]:
				names[0] = e
				heapDown(names, 0)
			}
		}
		if err == io.EOF || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return nil, 0, &fs.PathError{Op: "getdents", Path: name, Err: err}
		}
	}
	slices.Sort(names)
	out := make([]fs.DirEntry, 0, len(names))
	for _, e := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, e, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if err == unix.ENOENT {
				continue // removed meanwhile
			}
			return nil, 0, &fs.PathError{Op: "fstatat", Path: joinName(name, e), Err: err}
		}
		out = append(out, fs.FileInfoToDirEntry(newFileInfo(e, &st)))
	}
	return out, total, nil
}

// heapUp and heapDown keep h a max-heap of strings (the greatest at 0),
// so that readDirN drops the greatest of its n+1 least names in O(log n).
func heapUp(h []string, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p] >= h[i] {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func heapDown(h []string, i int) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && h[l] > h[m] {
			m = l
		}
		if l+1 < len(h) && h[l+1] > h[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// syscallMode converts an fs.FileMode to the mode bits of open(2) and
// mkdir(2), as package os does.
func syscallMode(m fs.FileMode) uint32 {
	o := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		o |= unix.S_ISUID
	}
	if m&fs.ModeSetgid != 0 {
		o |= unix.S_ISGID
	}
	if m&fs.ModeSticky != 0 {
		o |= unix.S_ISVTX
	}
	return o
}

// fileInfo is an fs.FileInfo built from fstatat, as os's fileStat.
type fileInfo struct {
	name string
	sys  syscall.Stat_t
}

func newFileInfo(name string, st *unix.Stat_t) *fileInfo {
	fi := &fileInfo{name: name}
	// unix.Stat_t and syscall.Stat_t are the same kernel struct.
	fi.sys = *(*syscall.Stat_t)(unsafePointer(st))
	return fi
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.sys.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.sys.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.sys }
func (fi *fileInfo) Mode() fs.FileMode {
	m := fs.FileMode(fi.sys.Mode & 0o777)
	switch fi.sys.Mode & syscall.S_IFMT {
	case syscall.S_IFBLK:
		m |= fs.ModeDevice
	case syscall.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		m |= fs.ModeDir
	case syscall.S_IFIFO:
		m |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		m |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if fi.sys.Mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if fi.sys.Mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if fi.sys.Mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}
