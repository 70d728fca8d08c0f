package openat

import (
	"io/fs"
)

// rootFS is the fs.FS returned by Root.FS.
type rootFS struct{ r *Root }

var (
	_ fs.StatFS     = rootFS{}
	_ fs.ReadFileFS = rootFS{}
	_ fs.ReadDirFS  = rootFS{}
)

func (f rootFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func (f rootFS) Open(name string) (fs.File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	file, err := f.r.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	return f.r.Stat(name)
}

func (f rootFS) ReadFile(name string) ([]byte, error) {
	if err := f.check("readfile", name); err != nil {
		return nil, err
	}
	return f.r.ReadFile(name)
}

func (f rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	return f.r.ReadDir(name)
}
