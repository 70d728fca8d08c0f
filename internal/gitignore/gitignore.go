// Package gitignore matches paths against patterns in gitignore syntax
// (gitignore(5), "PATTERN FORMAT"): negation ("!p"), directory-only
// ("p/"), "**", anchoring (a "/" at the start or in the middle), "\"
// escapes, trailing spaces, and git's bracket classes ("[!a]"). It is a
// pure matcher: it reads no file and knows no repository; callers stack
// one Matcher per .gitignore file. It is checked against git itself
// (git check-ignore) by the stored answers in testdata/git_answers.txt
// and by jail's FuzzDenyMatcher.
//
// One difference from git, chosen for deny lists (fail closed): a
// pattern with an empty component ("a//b", "a//") matches nothing in git;
// here it reads as "a/b" (a re-include with one is dropped, so it never
// re-includes what git would not).
package gitignore

import (
	"path"
	"slices"
	"strconv"
	"strings"
)

// Result is the verdict of the last pattern of a Matcher that matches a
// path.
type Result uint8

const (
	// NoMatch: no pattern matches; an outer (shallower) Matcher decides.
	NoMatch Result = iota
	// Excluded: the last matching pattern ignores the path.
	Excluded
	// Included: the last matching pattern is a negation ("!p").
	Included
)

// Matcher is the compiled patterns of one gitignore file. It is
// immutable after New and safe for concurrent use.
type Matcher struct {
	base     []string // the file's directory, components relative to the tree's top
	patterns []string // as given
	rules    []rule
}

type rule struct {
	comps    []compPattern // pattern split at "/", leading and trailing "/" removed
	negate   bool          // "!pattern": re-include
	dirOnly  bool          // "pattern/": matches directories only
	anchored bool          // a "/" at the start or in the middle: relative to base, not any level
}

// New compiles patterns (lines of a gitignore file, blank lines and "#"
// comments allowed) found in the directory base ("/"-separated, relative
// to the top of the tree the paths given to Match are relative to; "" or
// "." for the top). Errors: *PatternError wrapping path.ErrBadPattern for
// a malformed bracket class.
func New(base string, patterns []string) (*Matcher, error) {
	m := &Matcher{base: splitBase(base), patterns: append([]string(nil), patterns...)}
	for _, p := range patterns {
		rs, err := parseRule(p)
		if err != nil {
			return nil, &PatternError{Pattern: p, Err: err}
		}
		m.rules = append(m.rules, rs...)
	}
	return m, nil
}

// NewSkippingInvalid is New for a file read from disk: a pattern New
// would refuse is dropped (git's pattern matches nothing either) and
// Patterns does not return it.
func NewSkippingInvalid(base string, patterns []string) *Matcher {
	m := &Matcher{base: splitBase(base)}
	for _, p := range patterns {
		if rs, err := parseRule(p); err == nil {
			m.patterns = append(m.patterns, p)
			m.rules = append(m.rules, rs...)
		}
	}
	return m
}

func splitBase(base string) []string {
	if base = strings.Trim(base, "/"); base == "" || base == "." {
		return nil
	}
	return strings.Split(base, "/")
}

// Patterns returns the patterns given to New.
func (m *Matcher) Patterns() []string {
	if m == nil {
		return nil
	}
	return append([]string(nil), m.patterns...)
}

// Empty reports whether m has no pattern that can match (nil m is empty).
func (m *Matcher) Empty() bool { return m == nil || len(m.rules) == 0 }

// Match returns the verdict of the last pattern matching the path parts
// (its components relative to the top, parts[len-1] the entry itself,
// a directory when isDir). Only that entry is matched, not its parents:
// git ignores a path when a parent is Excluded, which Ignored checks. A
// path outside m's base is NoMatch.
func (m *Matcher) Match(parts []string, isDir bool) Result {
	if m.Empty() {
		return NoMatch
	}
	if len(m.base) > 0 {
		if len(parts) <= len(m.base) {
			return NoMatch
		}
		for i, c := range m.base {
			if parts[i] != c {
				return NoMatch
			}
		}
		parts = parts[len(m.base):]
	}
	if len(parts) == 0 {
		return NoMatch
	}
	for i := len(m.rules) - 1; i >= 0; i-- {
		if m.rules[i].match(parts, isDir) {
			if m.rules[i].negate {
				return Included
			}
			return Excluded
		}
	}
	return NoMatch
}

// Ignored reports whether git ignores rel ("/"-separated, relative to
// the top; a directory when isDir) under m alone: rel or one of its
// parent directories is Excluded, as git does not descend into an
// excluded directory (a file below it cannot be re-included).
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	if m.Empty() || rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	for k := 1; k <= len(parts); k++ {
		if m.Match(parts[:k], k < len(parts) || isDir) == Excluded {
			return true
		}
	}
	return false
}

// ExcludedBoth is Match for the entry rel ("/"-separated, relative to
// the top; only the entry, not its parents) read as a directory and as a
// file, in one pass from the last pattern backwards, splitting rel only
// if an anchored pattern needs its components. m's base must be the top.
func (m *Matcher) ExcludedBoth(rel string) (dir, file bool) {
	if m.Empty() || rel == "" {
		return false, false
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	var parts []string
	dirDone, fileDone := false, false
	for i := len(m.rules) - 1; i >= 0 && !(dirDone && fileDone); i-- {
		r := &m.rules[i]
		var ok bool
		if !r.anchored {
			ok = r.comps[0].match(name)
		} else if last := r.comps[len(r.comps)-1]; last.kind != compDoubleStar && !last.match(name) {
			// The last component must match the name unless it is
			// "**": reject without splitting.
			continue
		} else {
			if parts == nil {
				parts = strings.Split(rel, "/")
			}
			ok = matchComps(r.comps, parts)
		}
		if !ok {
			continue
		}
		if !dirDone {
			dir, dirDone = !r.negate, true
		}
		if !fileDone && !r.dirOnly {
			file, fileDone = !r.negate, true
		}
	}
	return dir, file
}

// parseRule parses one gitignore line into the rules it stands for
// (none for blank lines and comments; two when git's "a**/" quirk gives
// the pattern two readings).
func parseRule(p string) ([]rule, error) {
	var r rule
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
		if c == "**" && len(parts) > 0 && parts[len(parts)-1] == "**" {
			continue // "**/**" is "**" (R25c-3)
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
		// The rest's leading "**" components can match zero
		// directories too: "a**/**/b" matches "ab" (git check-ignore),
		// so the prefix joins the first component that is not "**".
		k := q + 1
		for k+1 < len(parts) && parts[k] == "**" {
			k++
		}
		joined := append(append(append([]string{}, parts[:q]...), lit+parts[k]), parts[k+1:]...)
		spread := append(append(append([]string{}, parts[:q]...), lit+"*", "**"), parts[q+1:]...)
		readings = [][]string{joined, spread}
	}
	var out []rule
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

func (r *rule) match(parts []string, isDir bool) bool {
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
// where it matches one or more ("dir/**" is what is inside dir). A
// pattern without "**" is matched in one pass; with it, each (pattern,
// path) position is tried once (a failed one is remembered): at most
// len(pat)·len(parts) positions, each "**" scanning len(parts). The
// plain backtracking tried every split for every "**", C(N+K, K) steps
// for K of them over N components: a .gitignore a command wrote with 20
// of them stalled landjail-mcp's grep for good (red team round 25,
// R25c-3).
func matchComps(pat []compPattern, parts []string) bool {
	if !slices.ContainsFunc(pat, func(c compPattern) bool { return c.kind == compDoubleStar }) {
		if len(pat) != len(parts) {
			return false
		}
		for i := range pat {
			if !pat[i].match(parts[i]) {
				return false
			}
		}
		return true
	}
	m := len(parts) + 1
	failed := make([]bool, (len(pat)+1)*m)
	var at func(i, j int) bool
	at = func(i, j int) bool {
		if i == len(pat) {
			return j == len(parts)
		}
		if failed[i*m+j] {
			return false
		}
		ok := false
		switch {
		case pat[i].kind == compDoubleStar && i == len(pat)-1:
			ok = j < len(parts)
		case pat[i].kind == compDoubleStar:
			for k := j; k <= len(parts) && !ok; k++ {
				ok = at(i+1, k)
			}
		default:
			ok = j < len(parts) && pat[i].match(parts[j]) && at(i+1, j+1)
		}
		if !ok {
			failed[i*m+j] = true
		}
		return ok
	}
	return at(0, 0)
}

// compPattern is one pattern component, compiled: most patterns are a
// literal name or "*" plus a literal, which need no path.Match.
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
	switch {
	case !hasMeta(c):
		return compPattern{kind: compLiteral, s: c}, nil
	case c[0] == '*' && !hasMeta(c[1:]):
		return compPattern{kind: compSuffix, s: c[1:]}, nil
	case c[len(c)-1] == '*' && !hasMeta(c[:len(c)-1]):
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

func quote(s string) string { return strconv.Quote(s) }
