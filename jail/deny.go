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
		rs, err := parseDenyRule(p)
		if err != nil {
			return nil, fmt.Errorf("jail: WithDeny(%q): %w", p, err)
		}
		d.rules = append(d.rules, rs...)
		if strings.HasPrefix(strings.TrimPrefix(p, "!"), "/") {
			d.abs = append(d.abs, rs...)
		}
	}
	return d, nil
}

// parseDenyRule parses one gitignore line into the rules it stands for
// (none for blank lines and comments; two when git's "a**/" quirk gives
// the pattern two readings).
func parseDenyRule(p string) ([]denyRule, error) {
	var r denyRule
	if p == "" || p[0] == '#' {
		return nil, nil
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
		p = p[:len(p)-1]
	}
	if p == "" {
		return nil, nil
	}
	if strings.Contains(p, "//") || strings.HasSuffix(p, "/") {
		// An empty component: git's pattern matches nothing. A deny
		// reads it as "a/b" (fail closed); a re-include is dropped,
		// or it would re-include what git never does.
		if r.negate {
			return nil, nil
		}
		p = strings.TrimRight(p, "/")
	}
	if strings.Contains(p, "/") {
		r.anchored = true
		p = strings.TrimLeft(p, "/")
	}
	var parts []string
	for c := range strings.SplitSeq(p, "/") {
		if c == "" {
			continue
		}
		if len(c) > 2 && strings.Trim(c, "*") == "" {
			c = "**" // "***" is "**", as in git's wildmatch
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return nil, nil
	}
	readings := [][]string{parts}
	if q, ok := starStarQuirk(parts); ok {
		// git strips the pattern's literal prefix before wildmatch, so
		// in "a**/b" the "**/" starts the rest and matches zero or more
		// directories: "ab", "ax/b", "ax/y/b". Two readings: "a" joined
		// with "b", and "a*" then "**" then "b".
		lit := strings.TrimRight(parts[q], "*")
		joined := append(append(append([]string{}, parts[:q]...), lit+parts[q+1]), parts[q+2:]...)
		spread := append(append(append([]string{}, parts[:q]...), lit+"*", "**"), parts[q+1:]...)
		readings = [][]string{joined, spread}
	}
	var out []denyRule
	for _, rd := range readings {
		rr := r
		rr.comps = nil
		for _, c := range rd {
			cp, err := compileComp(c)
			if err != nil {
				return nil, err
			}
			rr.comps = append(rr.comps, cp)
		}
		out = append(out, rr)
	}
	return out, nil
}

// starStarQuirk finds the component of git's "a**/" quirk: the first
// component holding a wildcard ends in "**" right after a literal prefix,
// and another component follows.
func starStarQuirk(parts []string) (int, bool) {
	for i, c := range parts {
		if !hasMeta(c) {
			continue
		}
		lit := strings.TrimRight(c, "*")
		if c != "**" && len(c)-len(lit) >= 2 && lit != "" && !hasMeta(lit) && i+1 < len(parts) {
			return i, true
		}
		return 0, false
	}
	return 0, false
}

func hasMeta(s string) bool { return strings.ContainsAny(s, "*?[\\") }

func (d *denyMatcher) empty() bool { return d == nil || len(d.rules) == 0 }

// denied reports whether canon (a canonical absolute path) is denied,
// given the root that contains it ("/" when none). As in git, a path is
// denied when it or any of its parent directories is excluded by the
// last pattern matching it, and a parent excluded cannot be re-included
// below. The final entry is tried both as a file and as a directory, and
// denied if either denies it (fail closed).
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
		// Ancestors are directories; the entry itself may be either:
		// it is tried both ways and denied if either way denies it.
		if lastMatch(rules, prefix, true) || (k == len(parts) && lastMatch(rules, prefix, false)) {
			return true
		}
	}
	return false
}

// lastMatch reports whether the last rule matching parts (as a directory
// or not) excludes it.
func lastMatch(rules []denyRule, parts []string, isDir bool) bool {
	state := false
	for i := range rules {
		if rules[i].match(parts, isDir) {
			state = !rules[i].negate
		}
	}
	return state
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
	c = gitClassNegation(c)
	if _, err := path.Match(c, ""); err != nil {
		return compPattern{}, err
	}
	meta := hasMeta
	switch {
	case !meta(c):
		return compPattern{kind: compLiteral, s: c}, nil
	case c[0] == '*' && !meta(c[1:]):
		return compPattern{kind: compSuffix, s: c[1:]}, nil
	case c[len(c)-1] == '*' && !meta(c[:len(c)-1]):
		return compPattern{kind: compPrefix, s: c[:len(c)-1]}, nil
	}
	return compPattern{kind: compGlob, s: c}, nil
}

// gitClassNegation rewrites git's negated bracket class "[!...]" as
// path.Match's "[^...]".
func gitClassNegation(c string) string {
	if !strings.Contains(c, "[!") {
		return c
	}
	b := []byte(c)
	for i := 0; i+1 < len(b); i++ {
		switch b[i] {
		case '\\':
			i++ // an escaped character is literal
		case '[':
			if b[i+1] == '!' {
				b[i+1] = '^'
			}
		}
	}
	return string(b)
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
