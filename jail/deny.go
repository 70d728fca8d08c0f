package jail

import (
	"fmt"
	"path"
	"strings"
)

// denyMatcher holds the always-denied patterns, in gitignore syntax
// (gitignore(5), "PATTERN FORMAT"). It is our own small implementation,
// checked against git itself (git check-ignore) by FuzzDenyMatcher: a
// deny list is policy, so it is kept in the auditable core instead of
// pulling a VCS library (go-git's matcher cost 0.3 ms of start-up in
// every `landjail run`).
type denyMatcher struct {
	patterns []string // as given
	rules    []denyRule
	abs      []denyRule // rules whose pattern starts with "/", also matched against the absolute path
}

type denyRule struct {
	comps    []compPattern // pattern split at "/", leading and trailing "/" removed
	negate   bool          // "!pattern": re-include
	dirOnly  bool          // "pattern/": matches directories only
	anchored bool          // a "/" at the start or in the middle: relative to the root, not any level
}

func newDenyMatcher(patterns []string) (*denyMatcher, error) {
	d := &denyMatcher{patterns: append([]string(nil), patterns...)}
	for _, p := range patterns {
		r, ok, err := parseDenyRule(p)
		if err != nil {
			return nil, fmt.Errorf("jail: WithDeny(%q): %w", p, err)
		}
		if !ok {
			continue
		}
		d.rules = append(d.rules, r)
		if strings.HasPrefix(strings.TrimPrefix(p, "!"), "/") {
			d.abs = append(d.abs, r)
		}
	}
	return d, nil
}

// parseDenyRule parses one gitignore line; ok is false for blank lines
// and comments.
func parseDenyRule(p string) (r denyRule, ok bool, err error) {
	if p == "" || p[0] == '#' {
		return r, false, nil
	}
	// Trailing spaces are ignored unless escaped with a backslash.
	for strings.HasSuffix(p, " ") && !strings.HasSuffix(p, "\\ ") {
		p = p[:len(p)-1]
	}
	switch {
	case strings.HasPrefix(p, "!"):
		r.negate = true
		p = p[1:]
	case strings.HasPrefix(p, "\\!"), strings.HasPrefix(p, "\\#"):
		p = p[1:]
	}
	if strings.HasSuffix(p, "/") {
		r.dirOnly = true
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		return r, false, nil
	}
	if strings.Contains(p, "/") {
		r.anchored = true
		p = strings.TrimLeft(p, "/")
	}
	for c := range strings.SplitSeq(p, "/") {
		if c == "" {
			continue // "a//b" is "a/b"
		}
		cp, err := compileComp(c)
		if err != nil {
			return r, false, err
		}
		r.comps = append(r.comps, cp)
	}
	if len(r.comps) == 0 {
		return r, false, nil
	}
	return r, true, nil
}

func (d *denyMatcher) empty() bool { return d == nil || len(d.rules) == 0 }

// denied reports whether canon (a canonical absolute path) is denied,
// given the root that contains it ("/" when none). As in git, a path is
// denied when it or any of its parent directories is excluded by the
// last pattern matching it, and a parent excluded cannot be re-included
// below. The type of the final entry is not consulted: a directory-only
// pattern ("x/") is tried as a directory too, which can only deny more.
func (d *denyMatcher) denied(canon, root string) bool {
	if d.empty() {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" && excluded(d.rules, strings.Split(rel, "/")) {
		return true
	}
	if len(d.abs) > 0 && canon != "/" {
		return excluded(d.abs, strings.Split(strings.TrimPrefix(canon, "/"), "/"))
	}
	return false
}

// excluded applies rules to every prefix of parts, shortest first.
func excluded(rules []denyRule, parts []string) bool {
	for k := 1; k <= len(parts); k++ {
		prefix := parts[:k]
		state := false
		for i := range rules {
			// Ancestors are directories; the entry itself may be one:
			// only a directory-only rule cares, and it is tried as one.
			if rules[i].match(prefix, true) {
				state = !rules[i].negate
			}
		}
		if state {
			return true
		}
	}
	return false
}

func (r *denyRule) match(parts []string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		return r.comps[0].match(parts[len(parts)-1])
	}
	return matchComps(r.comps, parts)
}

// matchComps matches pattern components against path components; "**"
// matches zero or more components, except as the last pattern component,
// where it matches one or more ("dir/**" is what is inside dir).
func matchComps(pat []compPattern, parts []string) bool {
	if len(pat) == 0 {
		return len(parts) == 0
	}
	if pat[0].kind == compDoubleStar {
		if len(pat) == 1 {
			return len(parts) > 0
		}
		for i := 0; i <= len(parts); i++ {
			if matchComps(pat[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	if len(parts) == 0 {
		return false
	}
	if !pat[0].match(parts[0]) {
		return false
	}
	return matchComps(pat[1:], parts[1:])
}

// compPattern is one pattern component, compiled: most deny patterns are
// a literal name or "*" plus a literal, which need no path.Match.
type compPattern struct {
	kind compKind
	s    string // the literal part, or the whole glob
}

type compKind uint8

const (
	compLiteral    compKind = iota // "name"
	compSuffix                     // "*.pem"
	compPrefix                     // ".env.*"
	compGlob                       // anything else: path.Match
	compDoubleStar                 // "**" as a whole component
)

func compileComp(c string) (compPattern, error) {
	if c == "**" {
		return compPattern{kind: compDoubleStar}, nil
	}
	if _, err := path.Match(c, ""); err != nil {
		return compPattern{}, err
	}
	meta := func(s string) bool { return strings.ContainsAny(s, "*?[\\") }
	switch {
	case !meta(c):
		return compPattern{compLiteral, c}, nil
	case c[0] == '*' && !meta(c[1:]):
		return compPattern{compSuffix, c[1:]}, nil
	case c[len(c)-1] == '*' && !meta(c[:len(c)-1]):
		return compPattern{compPrefix, c[:len(c)-1]}, nil
	}
	return compPattern{compGlob, c}, nil
}

func (p compPattern) match(name string) bool {
	switch p.kind {
	case compLiteral:
		return name == p.s
	case compSuffix:
		return strings.HasSuffix(name, p.s)
	case compPrefix:
		return strings.HasPrefix(name, p.s)
	case compDoubleStar:
		return true
	}
	ok, _ := path.Match(p.s, name)
	return ok
}
