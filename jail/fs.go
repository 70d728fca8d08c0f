package jail

import "io/fs"

// FS returns an fs.FS over the workspace root whose every operation goes
// through the Workspace (Resolve, deny patterns, openat2), so fs.WalkDir
// and fs.Glob stay inside the policy (the glob and list_directory tools).
// It implements fs.StatFS, fs.ReadFileFS and fs.ReadDirFS. Names follow
// fs.ValidPath and are relative to the workspace root; symlinks inside
// the policy are followed, others fail with ErrOutsideWorkspace.
func (w *Workspace) FS() fs.FS { return wsFS{w} }

type wsFS struct{ w *Workspace }

var (
	_ fs.StatFS     = wsFS{}
	_ fs.ReadFileFS = wsFS{}
	_ fs.ReadDirFS  = wsFS{}
)

func valid(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func (f wsFS) Open(name string) (fs.File, error) {
	if err := valid("open", name); err != nil {
		return nil, err
	}
	file, err := f.w.Open(name)
	if err != nil {
		return nil, err
	}
	return file, nil
}

func (f wsFS) Stat(name string) (fs.FileInfo, error) {
	if err := valid("stat", name); err != nil {
		return nil, err
	}
	return f.w.Stat(name)
}

func (f wsFS) ReadFile(name string) ([]byte, error) {
	if err := valid("readfile", name); err != nil {
		return nil, err
	}
	return f.w.ReadFile(name)
}

func (f wsFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := valid("readdir", name); err != nil {
		return nil, err
	}
	return f.w.ReadDir(name)
}
