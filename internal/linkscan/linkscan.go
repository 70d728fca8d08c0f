// Package linkscan finds the symbolic links below a directory, bounded
// in depth and in entries read: what a dotfiles manager (GNU stow,
// dotbot) links into HOME, for the deny and agent-configuration checks
// of jail and landlock (red team rounds 13 and 14).
package linkscan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrBudget is returned (in a *fs.PathError naming the directory) when a
// directory holds more entries than the budget has left: the links it
// may hold were not looked for, so a caller that needs them all must
// fail closed (red team round 15, R15a-1: a silent stop let padding hide
// a link).
var ErrBudget = errors.New("linkscan: more directory entries than the scan's budget")

// StoppedAt returns the directory named by a Walk error wrapping
// ErrBudget, or dflt for any other error.
func StoppedAt(err error, dflt string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, ErrBudget) {
		return pe.Path
	}
	return dflt
}

// Walk calls found with the path of each symbolic link in dir and, down
// to maxDepth levels (dir's own entries are level 1), in the directories
// below it for which descend(path, level) is true (nil: all). It counts
// at most *budget links and entered directories in all, decrementing it
// (plain files and directories it does not enter are not counted). At the
// first directory with more than are left it stops and returns
// ErrBudget in a *fs.PathError naming that directory. Links are not
// followed; unreadable directories are skipped (not an error). Entries
// are visited in directory order.
func Walk(dir string, maxDepth int, budget *int, descend func(name string, level int) bool, found func(path string)) error {
	return walk(dir, 1, maxDepth, budget, descend, found)
}

func walk(dir string, level, maxDepth int, budget *int, descend func(string, int) bool, found func(string)) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	// Only links and the directories the walk enters count: a plain
	// file, or a directory it will not read, can lead nowhere, so a
	// command cannot use the budget up with empty files or directories
	// (red team round 16, R16-3: 200,001 of either made every later run
	// fail closed).
	var links, dirs []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			links = append(links, p)
		case e.IsDir() && level < maxDepth && (descend == nil || descend(p, level)):
			dirs = append(dirs, p)
		}
	}
	n := len(links) + len(dirs)
	if n > *budget {
		return &fs.PathError{Op: "linkscan", Path: dir, Err: ErrBudget}
	}
	*budget -= n
	for _, p := range links {
		found(p)
	}
	for _, p := range dirs {
		if err := walk(p, level+1, maxDepth, budget, descend, found); err != nil {
			return err
		}
	}
	return nil
}
