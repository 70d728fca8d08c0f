package jail

import (
	"io/fs"

	"github.com/landjail/landjail/internal/validfs"
)

// FS returns an fs.FS over the workspace root whose every operation goes
// through the Workspace (Resolve, deny patterns, openat2), so fs.WalkDir
// and fs.Glob stay inside the policy (the glob and list_directory tools).
// It implements fs.StatFS, fs.ReadFileFS and fs.ReadDirFS. Names follow
// fs.ValidPath (others fail with an *fs.PathError wrapping fs.ErrInvalid)
// and are relative to the workspace root; symlinks inside the policy are
// followed, others fail with ErrOutsideWorkspace.
func (w *Workspace) FS() fs.FS { return validfs.New(w) }
