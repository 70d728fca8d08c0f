// Package linkscan finds the symbolic links below a directory, bounded
// in depth and in entries read: what a dotfiles manager (GNU stow,
// dotbot) links into HOME, for the deny and agent-configuration checks
// of jail and landlock (red team rounds 13 and 14).
package linkscan

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Walk calls found with the path of each symbolic link in dir and, down
// to maxDepth levels (dir's own entries are level 1), in the directories
// below it for which descend(path, level) is true (nil: all). It reads at
// most *budget directory entries in all, decrementing it: a directory
// with more entries than are left is not read. Links are not followed;
// errors (unreadable directories) are skipped. Entries are visited in
// directory order.
func Walk(dir string, maxDepth int, budget *int, descend func(name string, level int) bool, found func(path string)) {
	walk(dir, 1, maxDepth, budget, descend, found)
}

func walk(dir string, level, maxDepth int, budget *int, descend func(string, int) bool, found func(string)) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) > *budget {
		return
	}
	*budget -= len(ents)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			found(p)
		case e.IsDir() && level < maxDepth && (descend == nil || descend(p, level)):
			walk(p, level+1, maxDepth, budget, descend, found)
		}
	}
}
