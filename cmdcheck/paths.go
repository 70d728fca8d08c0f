package cmdcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// devices are allowed without a check: the names commands use for "no file"
// and for their standard streams.
var devices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/tty": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/fd/0": true, "/dev/fd/1": true, "/dev/fd/2": true,
}

// path checks p, a name the command uses as a path, for access a, against
// every directory the command may run in.
func (c *checker) path(p string, a Access, s *scope, f field) error {
	if p == "" || devices[p] {
		return nil
	}
	if p[0] == '~' {
		rest, ok := strings.CutPrefix(p, "~")
		if ok && rest != "" && rest[0] != '/' {
			return unverifiable(f, "%q names another user's home directory", p)
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return unverifiable(f, "home directory for %q: %w", p, err)
		}
		p = home + rest
	}
	if filepath.IsAbs(p) {
		if err := c.check(p, a); err != nil {
			return &Error{Arg: f.arg, Token: f.tok, Err: err}
		}
		return nil
	}
	for _, d := range s.dirs {
		if err := c.check(d+"/"+p, a); err != nil {
			return &Error{Arg: f.arg, Token: f.tok, Err: err}
		}
	}
	return nil
}

// pathLike reports whether an argument is checked as a path: absolute,
// starting with "~", or with a ".." component.
func pathLike(p string) bool {
	if p == "" {
		return false
	}
	return p[0] == '/' || p[0] == '~' || hasDotDot(p)
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// splitURL reports whether p is a URL rather than a path: "scheme://...",
// or scp-like "user@host:path". For "file://[host]/x" it returns the path
// /x instead.
func splitURL(p string) (path string, isURL bool) {
	if len(p) >= 7 && strings.EqualFold(p[:7], "file://") {
		rest := p[7:]
		if i := strings.IndexByte(rest, '/'); i > 0 {
			rest = rest[i:] // file://localhost/etc/passwd
		}
		return rest, false
	}
	if i := strings.Index(p, "://"); i > 0 && isScheme(p[:i]) {
		return "", true
	}
	if at := strings.IndexByte(p, '@'); at > 0 {
		if colon := strings.IndexByte(p, ':'); colon > at && !strings.ContainsRune(p[:colon], '/') {
			return "", true
		}
	}
	return p, false
}

func isScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// candidates returns the parts of an argument that are checked as paths
// (see Check).
func candidates(t string) []string {
	var out []string
	add := func(p string) {
		// A URL with a ".." component is checked anyway: to a tool that
		// takes it as a local name, x@y:/../../etc is a relative path.
		if q, isURL := splitURL(p); isURL && !hasDotDot(p) {
			return
		} else if !isURL {
			p = q
		}
		if pathLike(p) {
			out = append(out, p)
		}
	}
	add(t)
	for i := range len(t) {
		if t[i] != '=' {
			continue
		}
		v := t[i+1:]
		add(v)
		if _, isURL := splitURL(v); strings.Contains(v, ":") && (!isURL || hasDotDot(v)) {
			for e := range strings.SplitSeq(v, ":") {
				add(e)
			}
		}
	}
	if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") {
		// -I/usr/include, -xf/etc/x, -L../lib: skip the option letters.
		i := 1
		for i < len(t) && isAlnum(t[i]) {
			i++
		}
		add(t[i:])
		for _, e := range strings.Split(t, ",")[1:] {
			add(e)
		}
	}
	return out
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// arg checks one argument (not a command name) for Read.
func (c *checker) arg(f field, s *scope) error {
	t := f.s
	if f.glob >= 0 {
		var err error
		if t, err = globPrefix(f); err != nil {
			return err
		}
	}
	for _, p := range candidates(t) {
		if err := c.path(p, AccessRead, s, f); err != nil {
			return err
		}
	}
	return c.existing(f, s)
}

// existing checks an argument that is a relative name with no ".."
// (candidates leaves it out: it cannot leave the directory it is in)
// when it names an entry that exists in one of the directories the
// command may run in, or, as a glob, each entry it matches there (at
// most maxFields): a denied name (cat .env, sh -c 'cat .e*') or a
// symbolic link out of the policy (cat link) would otherwise be read
// (red team round 26, R26c-4: `cat .env` ran where `cat /abs/ws/.env`
// was refused). A name that does not exist names nothing the command
// can read by it; an option ("-x") is not a name.
func (c *checker) existing(f field, s *scope) error {
	t := f.s
	if t != "" && t[0] == '-' {
		// An option's value: after "=" (--arg-file=.env), or a short
		// option's attached one (-a.env) (red team round 27, R27d-5).
		for _, v := range optionValues(t) {
			g := f
			g.s, g.glob = v, strings.IndexAny(v, "*?[")
			if err := c.existing(g, s); err != nil {
				return err
			}
		}
		return nil
	}
	if t == "" || pathLike(t) || devices[t] {
		return nil
	}
	if _, isURL := splitURL(t); isURL {
		return nil
	}
	for _, d := range s.dirs {
		if f.glob < 0 {
			if _, err := os.Lstat(d + "/" + t); err == nil {
				if err := c.path(t, AccessRead, s, f); err != nil {
					return err
				}
			}
			continue
		}
		// The directory as a literal: a "[" in the workspace's path
		// is not a pattern (R27d-5).
		matches, err := filepath.Glob(globQuote(d) + "/" + t)
		if err != nil {
			return unverifiable(f, "glob %q: %w", t, err)
		}
		if len(matches) > maxFields {
			return unverifiable(f, "glob %q matches more than %d names", t, maxFields)
		}
		dotted := strings.HasPrefix(filepath.Base(t), ".")
		for _, m := range matches {
			if !dotted && !c.dotglob && strings.HasPrefix(filepath.Base(m), ".") {
				continue // the shell's * does not match a leading dot
			}
			if err := c.check(m, AccessRead); err != nil {
				return &Error{Arg: f.arg, Token: f.tok, Err: err}
			}
		}
	}
	return nil
}

// optionValues returns the values an option word carries: the text
// after its first "=", and for a short option ("-a.env", not "--x") the
// text after its option letters.
func optionValues(t string) []string {
	var out []string
	if i := strings.IndexByte(t, '='); i >= 0 && i+1 < len(t) {
		out = append(out, t[i+1:])
	}
	if !strings.HasPrefix(t, "--") {
		i := 1
		for i < len(t) && isAlnum(t[i]) {
			i++
		}
		if i < len(t) && t[i] != '=' {
			out = append(out, t[i:])
		}
	}
	return out
}

// globQuote escapes the pattern characters of a literal path for
// filepath.Glob.
func globQuote(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// globPrefix returns the fixed directory in front of a glob ("/etc/" for
// "/etc/*.conf"), which is what the shell reads to expand it. The matches are
// names in that directory; a pattern component that could match ".." (one
// starting with "." or "["), or a ".." after the pattern, would leave it.
func globPrefix(f field) (string, error) {
	prefix := f.s[:strings.LastIndexByte(f.s[:f.glob], '/')+1]
	for comp := range strings.SplitSeq(f.s[len(prefix):], "/") {
		if comp == ".." || strings.ContainsAny(comp, "*?[") && (comp[0] == '.' || comp[0] == '[') {
			return "", unverifiable(f, "glob %q may match ..", f.s)
		}
	}
	return prefix, nil
}
