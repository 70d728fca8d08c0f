// Package validfs adapts a directory handle with os.Root's method set
// (openat.Root, jail.Workspace) to io/fs: every name is checked with
// fs.ValidPath first, as fs.FS requires, and then handed to the handle,
// which does its own containment.
package validfs

import (
	"io/fs"
	"os"
)

// Dir is the part of os.Root's method set an FS needs.
type Dir interface {
	Open(name string) (*os.File, error)
	Stat(name string) (fs.FileInfo, error)
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]fs.DirEntry, error)
}

// FS is an fs.StatFS, fs.ReadFileFS and fs.ReadDirFS over d. A name that
// fails fs.ValidPath (absolute, "..", a trailing slash, empty) is refused
// with an *fs.PathError wrapping fs.ErrInvalid before d sees it; other
// errors are d's own.
type FS struct{ d Dir }

// New returns the FS over d.
func New(d Dir) FS { return FS{d} }

var (
	_ fs.StatFS     = FS{}
	_ fs.ReadFileFS = FS{}
	_ fs.ReadDirFS  = FS{}
)

func check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

// Open opens name with d.Open (never a typed nil: a failed open is a nil
// fs.File).
func (f FS) Open(name string) (fs.File, error) {
	if err := check("open", name); err != nil {
		return nil, err
	}
	file, err := f.d.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

// Stat is d.Stat(name).
func (f FS) Stat(name string) (fs.FileInfo, error) {
	if err := check("stat", name); err != nil {
		return nil, err
	}
	return f.d.Stat(name)
}

// ReadFile is d.ReadFile(name).
func (f FS) ReadFile(name string) ([]byte, error) {
	if err := check("readfile", name); err != nil {
		return nil, err
	}
	return f.d.ReadFile(name)
}

// ReadDir is d.ReadDir(name).
func (f FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := check("readdir", name); err != nil {
		return nil, err
	}
	return f.d.ReadDir(name)
}
