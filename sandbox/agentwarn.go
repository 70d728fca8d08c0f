package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/landjail/landjail/internal/termsafe"
)

// warnUnprotectedRoots says, once per --rw directory, that
// --protect-agent-config protects the workspace only (red team round 8,
// R8-3): a writable root that is the user's home directory (or above
// it), or that is or lies in a git repository, keeps its shell start-up
// files, hooks and git configuration writable for the command, and
// nothing there is swept. rw are the --rw paths, homeDir the --home DIR
// that is a root of the policy ("" none: cliopts.Options.HomeRoot), home
// the caller's HOME, root the workspace's (what lies in it is the
// workspace's to protect).
func warnUnprotectedRoots(w io.Writer, rw []string, homeDir, home, root string) {
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	flags := make([]string, len(rw), len(rw)+1)
	for i := range rw {
		flags[i] = "--rw"
	}
	if homeDir != "" { // --home DIR: a read-write root too (R23a-3)
		rw = append(slices.Clone(rw), homeDir)
		flags = append(flags, "--home")
	}
	for i, given := range rw {
		p := given
		if t, err := filepath.EvalSymlinks(p); err == nil {
			p = t // a link to HOME is HOME (round 9, R9-5)
		}
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
		case home != "" && strings.HasPrefix(p, home+"/."):
			// In ~/.config, ~/.local/bin, ~/.cargo: what the user's own
			// tools read and run (red team round 24, R24e-1: --home
			// ~/.config, then core.fsmonitor in ~/.config/git/config).
			what = "configuration of your home directory (~/.config/git, ~/.local/bin, tools' settings)"
		case inRepository(p) || bareRepository(p) || reposBelow(p):
			what = "a git repository (its hooks and .git/config)"
		default:
			continue
		}
		fmt.Fprintf(w, "landjail: warning: --protect-agent-config protects the workspace only: %s %s holds %s, writable for the command and not swept\n", flags[i], termsafe.Quote(given), what)
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

// bareRepository reports whether dir is laid out as a repository
// directory (HEAD, and objects/ and refs/).
func bareRepository(dir string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// reposBelow reports whether an entry of dir (one level: a directory of
// checkouts) holds ".git" or is a bare repository.
func reposBelow(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for i, e := range ents {
		if i >= 4096 {
			break
		}
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Lstat(filepath.Join(sub, ".git")); err == nil || bareRepository(sub) {
			return true
		}
	}
	return false
}
