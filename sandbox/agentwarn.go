package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/landjail/landjail/internal/termsafe"
)

// warnUnprotectedRoots says, once per --rw directory, that
// --protect-agent-config protects the workspace only (red team round 8,
// R8-3): a writable root that is the user's home directory (or above
// it), or that is or lies in a git repository, keeps its shell start-up
// files, hooks and git configuration writable for the command, and
// nothing there is swept. rw are the --rw paths, home the caller's HOME,
// root the workspace's (what lies in it is the workspace's to protect).
func warnUnprotectedRoots(w io.Writer, rw []string, home, root string) {
	for _, p := range rw {
		if p == root || strings.HasPrefix(p, root+"/") {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		var what string
		switch {
		case home != "" && (p == home || p == "/" || strings.HasPrefix(home, p+"/")):
			what = "your home directory (shell start-up files, ~/.config/git, ~/.local/bin)"
		case inRepository(p):
			what = "a git repository (its hooks and .git/config)"
		default:
			continue
		}
		fmt.Fprintf(w, "landjail: warning: --protect-agent-config protects the workspace only: --rw %s holds %s, writable for the command and not swept\n", termsafe.Quote(p), what)
	}
}

// inRepository reports whether dir or a directory above it holds ".git".
func inRepository(dir string) bool {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		if d == "/" || d == "." {
			return false
		}
	}
}
