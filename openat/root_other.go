//go:build !linux

package openat

import (
	"errors"
	"io/fs"
)

// ResolveNoXDev is RESOLVE_NO_XDEV on Linux; elsewhere Root is
// unsupported.
const ResolveNoXDev Flags = 0x01

// Mechanism names returned by Mechanism.
const (
	MechanismOpenat2 = "openat2"
	MechanismWalk    = "o_nofollow-walk"
)

var errUnsupported = errors.New("openat: requires Linux (openat2 or O_NOFOLLOW walk): " + errors.ErrUnsupported.Error())

// Mechanism returns "" on systems other than Linux: no mechanism.
func Mechanism() string { return "" }

// SetForceFallback does nothing on systems other than Linux.
func SetForceFallback(on bool) (restore func()) { return func() {} }

func unsupported(op, name string) error {
	return &fs.PathError{Op: op, Path: name, Err: errors.Join(errUnsupported, errors.ErrUnsupported)}
}

func openRoot(dir string, _ Flags) (*Root, error) { return nil, unsupported("open", dir) }

func (r *Root) close() error { return nil }
func (r *Root) openFd(name string, _ int, _ fs.FileMode) (int, error) {
	return -1, unsupported("open", name)
}
func (r *Root) openSubRoot(name string) (*Root, error)    { return nil, unsupported("open", name) }
func (r *Root) mkdir(name string, _ fs.FileMode) error    { return unsupported("mkdir", name) }
func (r *Root) mkdirAll(name string, _ fs.FileMode) error { return unsupported("mkdir", name) }
func (r *Root) remove(name string) error                  { return unsupported("remove", name) }
func (r *Root) removeAll(name string) error               { return unsupported("remove", name) }
func (r *Root) rename(oldname, _ string) error            { return unsupported("rename", oldname) }
func (r *Root) link(oldname, _ string) error              { return unsupported("link", oldname) }
func (r *Root) symlink(_, newname string) error           { return unsupported("symlink", newname) }
func (r *Root) stat(name string) (fs.FileInfo, error)     { return nil, unsupported("stat", name) }
func (r *Root) lstat(name string) (fs.FileInfo, error)    { return nil, unsupported("lstat", name) }
func (r *Root) readlink(name string) (string, error)      { return "", unsupported("readlink", name) }
func (r *Root) readFile(name string) ([]byte, error)      { return nil, unsupported("open", name) }
func (r *Root) writeFileAs(name string, _ []byte, _ fs.FileMode, _ *[2]int) error {
	return unsupported("open", name)
}
func (r *Root) chmod(name string, _ fs.FileMode) error     { return unsupported("chmod", name) }
func (r *Root) lchown(name string, _, _ int) error         { return unsupported("lchown", name) }
func (r *Root) readDir(name string) ([]fs.DirEntry, error) { return nil, unsupported("open", name) }
func (r *Root) readDirN(name string, n int, keep func(string) bool) ([]fs.DirEntry, int, error) {
	return nil, 0, unsupported("open", name)
}

func (r *Root) probeWritable(name string) (fs.FileInfo, error) {
	return nil, unsupported("openat", name)
}
