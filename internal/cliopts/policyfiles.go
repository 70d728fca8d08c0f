package cliopts

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
)

// isPolicyFile reports whether p (a --ro, --rox or --rw entry that is a
// file) is the --config file or the --learn FILE under any name: the
// same path, a symbolic link to it or a hard link of it (the same
// inode: a Landlock rule follows links and lands on the inode). Such a
// rule never gets a write right (fileRules): Landlock grants the union
// of the rules on a file, so a carve-out cannot take the write back, and
// the command could rewrite the policy of its next run (red team R6-2:
// a learned rw of FILE, under --no-namespaces).
func (o *Options) isPolicyFile(p string) bool {
	pi, err := os.Stat(p)
	if err != nil {
		return false
	}
	for _, f := range []string{o.configFile, o.learnFile} {
		if f == "" {
			continue
		}
		if fi, err := os.Stat(f); err == nil && os.SameFile(pi, fi) {
			return true
		}
	}
	return false
}

// linksOnTheWay returns the symbolic links the kernel follows to
// resolve p (relative to the working directory unless absolute; ".."
// taken after the links before it, never lexically): jail.LinkChain,
// each link as its directory's canonical path joined with its name.
func linksOnTheWay(p string) []string {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		p = wd + "/" + p // not cleaned: ".." after a link is physical
	}
	return jail.LinkChain(p)
}

// checkPolicyLinks refuses a --config or --learn FILE whose path goes
// through a symbolic link that a root the command can write holds (root
// the workspace): the command could point the link at a file of its own,
// and the next run started with the same command line would read that
// policy (red team round 25, R25b-2: deny_secrets = false and a --rw
// outside). The file itself is made read-only (Policy); a link cannot
// be, so the user names the file directly.
func (o *Options) checkPolicyLinks(root string) error {
	for _, f := range []struct{ flag, path string }{{flagConfig, o.configGiven}, {flagLearn, o.learnGiven}} {
		if f.path == "" {
			continue
		}
		for _, l := range linksOnTheWay(f.path) {
			if o.writableHolds(root, l) {
				c, err := filepath.EvalSymlinks(f.path)
				if err != nil {
					c = "the file itself"
				}
				return fmt.Errorf("--%s %s goes through the symbolic link %s, which the command may change (a root it can write holds it): the next run would read the policy it points to; give the file's own path (%s)", f.flag, termsafe.Quote(f.path), termsafe.Quote(l), termsafe.Quote(c))
			}
		}
		// A second name of the file, which a root the command can
		// write may hold where no pattern looks: the file is read-only
		// by its own name only (red team round 26, R26a-2: a hard link
		// planted by an earlier run rewrote the next run's policy).
		var st syscall.Stat_t
		if syscall.Stat(f.path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink > 1 {
			if c, err := filepath.EvalSymlinks(f.path); err == nil && o.writableHolds(root, c) {
				return fmt.Errorf("--%s %s has %d hard links and lies in a root the command can write: another name of it (find %s -samefile %s) would let the command rewrite the policy the next run reads; remove the other names or keep the file outside the roots the command writes", f.flag, termsafe.Quote(f.path), st.Nlink, termsafe.Quote(root), termsafe.Quote(c))
			}
		}
	}
	return nil
}
