package cliopts

import "os"

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
