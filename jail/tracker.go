package jail

import (
	"sync"

	"golang.org/x/sys/unix"
)

// ReadTracker records which files were read in a session (a read-before-edit
// tracker), keyed by canonical absolute path so a symlink or a
// "dir/../file" spelling cannot stand for another key. Beyond a set of paths,
// it keeps the file's identity and version when it was read (inode,
// device, size, modification time) so a Workspace can refuse to
// overwrite a file that changed on disk since (ErrStale).
//
// A ReadTracker is safe for concurrent use; its zero value is not usable,
// use NewReadTracker.
type ReadTracker struct {
	mu   sync.Mutex
	seen map[string]fileVersion
}

// fileVersion is what "the same file, unchanged" compares.
type fileVersion struct {
	known     bool // false when MarkRead could not stat the file
	dev, ino  uint64
	size      int64
	mtimeNsec int64
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker {
	return &ReadTracker{seen: make(map[string]fileVersion)}
}

// MarkRead records absPath (a canonical absolute path, as returned by
// Workspace.Resolve) as read, with the version it has now (lstat; if
// that fails only the name is recorded and later staleness checks of it
// pass).
func (t *ReadTracker) MarkRead(absPath string) {
	var v fileVersion
	var st unix.Stat_t
	if unix.Lstat(absPath, &st) == nil {
		v = versionOf(&st)
	}
	t.mark(absPath, v)
}

func (t *ReadTracker) mark(canon string, v fileVersion) {
	t.mu.Lock()
	t.seen[canon] = v
	t.mu.Unlock()
}

// HasBeenRead reports whether absPath was marked read.
func (t *ReadTracker) HasBeenRead(absPath string) bool {
	t.mu.Lock()
	_, ok := t.seen[absPath]
	t.mu.Unlock()
	return ok
}

// Forget removes absPath from the tracker (after the file was removed or
// renamed away).
func (t *ReadTracker) Forget(absPath string) {
	t.mu.Lock()
	delete(t.seen, absPath)
	t.mu.Unlock()
}

// checkWrite returns nil when canon may be overwritten: it does not exist
// (cur == nil), or it was read and is unchanged since.
func (t *ReadTracker) checkWrite(canon string, cur *unix.Stat_t) error {
	if cur == nil {
		return nil
	}
	t.mu.Lock()
	v, ok := t.seen[canon]
	t.mu.Unlock()
	if !ok {
		return ErrNotRead
	}
	if v.known && v != versionOf(cur) {
		return ErrStale
	}
	return nil
}
