package jail

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// denyMatcher holds the always-denied patterns (gitignore syntax).
type denyMatcher struct {
	patterns []string
	rel      gitignore.Matcher // every pattern, against the path relative to its root
	abs      gitignore.Matcher // patterns starting with "/", against the absolute path
}

func newDenyMatcher(patterns []string) (*denyMatcher, error) {
	d := &denyMatcher{patterns: append([]string(nil), patterns...)}
	if len(patterns) == 0 {
		return d, nil
	}
	var rel, abs []gitignore.Pattern
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" || strings.HasPrefix(p, "#") {
			continue
		}
		rel = append(rel, gitignore.ParsePattern(p, nil))
		// A "!" re-include applies to both spaces; a pattern anchored
		// with "/" is also read as an absolute pattern. Both readings
		// can only deny more: fail closed.
		if strings.HasPrefix(strings.TrimPrefix(p, "!"), "/") {
			abs = append(abs, gitignore.ParsePattern(p, nil))
		}
	}
	d.rel = gitignore.NewMatcher(rel)
	if len(abs) > 0 {
		d.abs = gitignore.NewMatcher(abs)
	}
	return d, nil
}

func (d *denyMatcher) empty() bool { return d == nil || d.rel == nil }

// denied reports whether canon (a canonical absolute path) is denied,
// given the root path that contains it ("/" when none). The type of the
// entry is not consulted: a directory-only pattern ("x/") is tried both
// ways, which can only deny more.
func (d *denyMatcher) denied(canon, root string) bool {
	if d.empty() {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" {
		parts := strings.Split(rel, "/")
		if d.rel.Match(parts, false) || d.rel.Match(parts, true) {
			return true
		}
	}
	if d.abs != nil && canon != "/" {
		parts := strings.Split(strings.TrimPrefix(canon, "/"), "/")
		if d.abs.Match(parts, false) || d.abs.Match(parts, true) {
			return true
		}
	}
	return false
}
