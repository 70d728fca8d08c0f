package jail

import (
	"io/fs"
	"strings"
	"syscall"
)

// DiscoveredEntry is an entry of a registry directory that Discover keeps.
type DiscoveredEntry struct {
	// Name is the entry's name in the registry directory.
	Name string
	// Path is the canonical absolute path the entry resolves to (through
	// any symlink, which stays inside the policy).
	Path string
	// IsDir reports whether the entry (after symlinks) is a directory.
	IsDir bool
}

// SkippedEntry is an entry of a registry directory that Discover refuses.
type SkippedEntry struct {
	// Name is the entry's name in the registry directory.
	Name string
	// Path is the entry as found: the registry directory as the caller
	// spelled it, "/", and Name.
	Path string
	// Reason is a *fs.PathError naming the offending path (the entry, or
	// the file inside it) and wrapping ErrOutsideWorkspace, ErrDenied,
	// ErrHardlinked, ErrNotRegular or the errno of a failed lookup.
	Reason error
}

// Discover scans the registry directory dir (a skills or agents directory
// such as ".claude/skills" or ".agents"; resolved through the policy like
// any other name) and sorts its entries into those that may be registered
// and those that may not: discovery-time containment (the first of two layers: registration,
// then every read),
// equivalent to
//
//	for _, e := range os.ReadDir(dir) {
//		real, _ := filepath.EvalSymlinks(filepath.Join(dir, e.Name()))
//		if strings.HasPrefix(real, root) { found = append(found, e) }
//	}
//
// but safe because containment is Resolve's (whole components, every root
// and deny pattern of the policy, symlinks followed as the kernel does),
// and because it also looks inside each entry.
//
// An entry is skipped, with the reason, when:
//
//   - it resolves outside every root (a symlinked entry pointing out:
//     ErrOutsideWorkspace) or to a denied path (ErrDenied);
//   - it is, after symlinks, a regular file with more than one hard link
//     (ErrHardlinked: it may be an alias of a file outside the policy,
//     which no path check can see);
//   - it is a FIFO, socket or device (ErrNotRegular);
//   - it cannot be looked up, stat'ed or (for a directory) listed: the
//     errno (ENOENT for a dangling symlink, ELOOP, EACCES);
//   - it is a directory and any entry directly inside it (SKILL.md,
//     README.md, scripts/) fails one of the checks above (the classic
//     skills/evil-skill/README.md => /etc/passwd). The Reason then names
//     that inner path.
//
// found and skipped are sorted by Name. Entries whose own name matches a
// deny pattern are left out of both, as Workspace.ReadDir leaves them out
// (their existence is not revealed); the same holds for denied names
// inside an entry directory.
//
// err is non-nil only when dir itself cannot be listed: the *fs.PathError
// of Workspace.ReadDir (fs.ErrNotExist when there is no registry, which
// callers usually treat as empty; ErrOutsideWorkspace when dir escapes).
//
// What it does not do: it looks one level inside each entry, not deeper
// (nested files are left to layer 2, the Workspace operations, which
// check every access anyway); it does not open regular files (that would
// mark them read in a ReadTracker, and a read check gains nothing over
// stat for the root user); its answer is a snapshot, the tree can change
// right after, so readers must still go through the Workspace. It opens
// nothing outside the policy and only lstat/readlinks outside paths while
// resolving, like Resolve. Safe for concurrent use.
func (w *Workspace) Discover(dir string) (found []DiscoveredEntry, skipped []SkippedEntry, err error) {
	ents, err := w.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range ents {
		name := e.Name()
		p := joinName(dir, name)
		canon, isDir, reason := w.discoverCheck(p)
		if reason == nil && isDir {
			reason = w.discoverInside(p)
		}
		if reason != nil {
			skipped = append(skipped, SkippedEntry{Name: name, Path: p, Reason: reason})
			continue
		}
		found = append(found, DiscoveredEntry{Name: name, Path: canon, IsDir: isDir})
	}
	return found, skipped, nil
}

// discoverCheck resolves and stats p, returning its canonical path,
// whether it is a directory, and why it must be skipped (nil if not).
func (w *Workspace) discoverCheck(p string) (canon string, isDir bool, reason error) {
	canon, err := w.Resolve(p)
	if err != nil {
		return "", false, err
	}
	fi, err := w.Stat(p)
	if err != nil {
		return "", false, err
	}
	switch {
	case fi.IsDir():
		return canon, true, nil
	case fi.Mode().IsRegular():
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
			return "", false, &fs.PathError{Op: "discover", Path: p, Err: ErrHardlinked}
		}
		return canon, false, nil
	}
	return "", false, &fs.PathError{Op: "discover", Path: p, Err: ErrNotRegular}
}

// discoverInside checks every entry directly inside the directory p.
func (w *Workspace) discoverInside(p string) error {
	ents, err := w.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if _, _, reason := w.discoverCheck(joinName(p, e.Name())); reason != nil {
			return reason
		}
	}
	return nil
}

// joinName appends name to dir with one "/", without cleaning: cleaning
// "link/.." would change which directory is meant (see Resolve).
func joinName(dir, name string) string {
	if dir == "" {
		return name
	}
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}
