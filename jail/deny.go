package jail

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/landjail/landjail/internal/gitignore"
)

// denyMatcher holds the always-denied patterns, in gitignore syntax
// (gitignore(5), "PATTERN FORMAT"), matched by internal/gitignore: our
// own small implementation, checked against git itself (git
// check-ignore) by FuzzDenyMatcher. A deny list is policy, so it is kept
// in the auditable core instead of pulling a VCS library (go-git's
// matcher cost 0.3 ms of start-up in every `landjail run`).
type denyMatcher struct {
	all *gitignore.Matcher // every pattern, against the path relative to its root
	abs *gitignore.Matcher // patterns starting with "/", also against the absolute path (nil when none)
	// anywhere are the patterns of literal names that match at any
	// depth (".aws/", "**/.kube/config": no "/" but a trailing one, or a
	// leading "**/", and no wildcard) and begin with a hidden name, with
	// such re-includes, in order:
	// a root inside a directory one of them names (--ro ~/.aws under
	// .aws/) is inside it whatever the root, so the root's absolute
	// path and its parents are matched against them too (red team round
	// 11, R11a-4: --deny-secrets --ro ~/.aws read ~/.aws/credentials in
	// clear). A wildcard ("*", "*.env") is left out: it would name the
	// directories above every root.
	anywhere *gitignore.Matcher
	// spans are anywhere's patterns of several components
	// (**/.config/gh/hosts.yml): below a root whose name is one of their
	// inner components (--ro ~/.config), an entry's absolute path is
	// matched against them too. spanComps are those inner components.
	spans     *gitignore.Matcher
	spanComps map[string]bool
	// wildPrefix holds, for each pattern of spans with a wildcard
	// (**/.mozilla/firefox/*/key4.db), its leading components as
	// directory patterns (**/.mozilla/, **/.mozilla/firefox/, ...): a
	// root at or below a directory they match is crossed (crosses;
	// wildIn caches the answer per root).
	wildPrefix *gitignore.Matcher
	wildIn     sync.Map // root -> bool
	inside     sync.Map // root -> bool: is the root itself matched by anywhere (rootInside)
	// aliases are, by canonical root, the absolute paths the root was
	// given as where they differ (a link on the way: ~/.aws ->
	// dotfiles/aws): rootInside and the spans are matched against them
	// too (red team round 12, R12-1). Set once by New, read-only after.
	aliases map[string][]string
	// roots are the policy's canonical roots: a path below a root that
	// lies inside another (--ro ./config in the workspace) is matched
	// relative to each of them, so a narrower root never lifts a pattern
	// written for a wider one (red team round 12, R12-7: --deny
	// config/prod.key --ro ./config read prod.key). Set once by New.
	roots []string
	// copies: an editor's copy of a matched name is matched too
	// (editorOriginals; the deny patterns only).
	copies bool
}

// copyOriginals returns the paths canon may be a copy of: its name and
// each directory's below root taken as a copy's (editorOriginals: a
// ~/.kube.bak/config copied with its directory, secrets.bak/ under
// secrets/**, red team round 18, R18a-3), and a copy of a copy's name
// (.env.bak~) once more.
func copyOriginals(canon, root string) []string {
	var out []string
	for _, o := range editorOriginals(canon) {
		out = append(out, o)
		out = append(out, editorOriginals(o)...)
	}
	rel, ok := strings.CutPrefix(canon, root+"/")
	if !ok || root == "/" {
		rel, root = strings.TrimPrefix(canon, "/"), ""
	}
	for i := strings.IndexByte(rel, '/'); i >= 0; {
		dir := root + "/" + rel[:i]
		for _, o := range editorOriginals(dir) {
			out = append(out, o+"/"+rel[i+1:])
		}
		j := strings.IndexByte(rel[i+1:], '/')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return out
}

// editorOriginals returns the paths of the files canon may be an
// editor's or a backup tool's copy of, by its name: NAME~ and NAME.~N~
// (Emacs and GNU backups), #NAME# (Emacs auto-save), .NAME.swp (Vim's
// swap files, .sw[a-p]; for a NAME that starts with "." Vim adds no dot:
// .npmrc.swp), .NAME.un~ (Vim's undo file), .NAME.kate-swp (Kate),
// NAME___jb_old___ and NAME___jb_tmp___ (JetBrains' safe write), and
// NAME.bak, .orig, .old, .save, .backup, .rej, in any case and with a
// number after them (NAME.save.1, nano's second save). These hold the
// content of NAME, or lines of it: a denied .env's .env~ read in clear
// (red team round 17, R17a-9; round 18, R18a-3: .npmrc.swp, .un~,
// .save.1).
func editorOriginals(canon string) []string {
	dir, b := filepath.Split(canon)
	var out []string
	add := func(o string) {
		if o != "" && o != "." && o != ".." {
			out = append(out, dir+o)
		}
	}
	switch {
	case len(b) > 2 && b[0] == '#' && b[len(b)-1] == '#':
		add(b[1 : len(b)-1])
	case len(b) > 4 && b[0] == '.' && strings.HasSuffix(b, ".un~"):
		add(b[1 : len(b)-4])
	case len(b) > 1 && strings.HasSuffix(b, "~"):
		o := strings.TrimSuffix(b, "~")
		if i := strings.LastIndex(o, ".~"); i > 0 && i+2 < len(o) && strings.Trim(o[i+2:], "0123456789") == "" {
			o = o[:i] // NAME.~1~
		}
		add(o)
	case len(b) > 4 && b[0] == '.' && b[len(b)-4:len(b)-1] == ".sw" && b[len(b)-1] >= 'a' && b[len(b)-1] <= 'p':
		add(b[1 : len(b)-4]) // .NAME.swp of NAME
		add(b[:len(b)-4])    // .NAME.swp of .NAME
	case len(b) > 10 && b[0] == '.' && strings.HasSuffix(b, ".kate-swp"):
		add(b[1 : len(b)-9])
	case strings.HasSuffix(b, "___jb_old___") || strings.HasSuffix(b, "___jb_tmp___"):
		add(b[:len(b)-12])
	default:
		o := b
		if i := strings.LastIndexByte(o, '.'); i > 0 && i+1 < len(o) && strings.Trim(o[i+1:], "0123456789") == "" {
			o = o[:i] // NAME.save.1
		}
		lower := strings.ToLower(o)
		for _, ext := range []string{".bak", ".orig", ".old", ".save", ".backup", ".rej"} {
			if len(o) > len(ext) && strings.HasSuffix(lower, ext) {
				add(o[:len(o)-len(ext)])
				break
			}
		}
	}
	return out
}

// outer calls fn with the path of canon relative to each root other
// than root that holds it (the wider roots root lies in), until fn
// returns true.
func (d *denyMatcher) outer(canon, root string, fn func(rel string) bool) bool {
	for _, r := range d.roots {
		if r == root || !withinRoot(root, r) {
			continue
		}
		if rel := strings.TrimPrefix(strings.TrimPrefix(canon, r), "/"); rel != "" && fn(rel) {
			return true
		}
	}
	return false
}

// withinRoot reports whether p is r or below it.
func withinRoot(p, r string) bool {
	return r == "/" || p == r || strings.HasPrefix(p, r+"/")
}

func newDenyMatcher(patterns []string) (*denyMatcher, error) {
	all, err := gitignore.New("", patterns)
	if pe := (*gitignore.PatternError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("jail: WithDeny(%q): %w", pe.Pattern, pe.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("jail: WithDeny: %w", err) // cannot happen: New fails only with *PatternError
	}
	d := &denyMatcher{all: all}
	var absPats []string
	for _, p := range patterns {
		if strings.HasPrefix(strings.TrimPrefix(p, "!"), "/") {
			absPats = append(absPats, p)
		}
	}
	if len(absPats) > 0 {
		if d.abs, err = gitignore.New("", absPats); err != nil {
			return nil, fmt.Errorf("jail: WithDeny: %w", err) // cannot happen: the same patterns compiled above
		}
	}
	var anyPats, spanPats, wildPrefixes []string
	for _, p := range patterns {
		body := strings.TrimSuffix(strings.TrimPrefix(p, "!"), "/")
		lead := strings.HasPrefix(body, "**/")
		body = strings.TrimPrefix(body, "**/")
		if body == "" || strings.HasPrefix(p, "#") || strings.Contains(body, "\\") || strings.Contains(body, "//") ||
			strings.Contains(body, "/") && !lead {
			continue
		}
		if strings.ContainsAny(body, "*?[") {
			// A pattern of several components with a wildcard among
			// them (**/.mozilla/firefox/*/key4.db): a root below one
			// of its prefixes (--ro ~/.mozilla/firefox/abc.default)
			// has its entries matched by their absolute path, as the
			// literal spans are (red team round 31, R31b-2: --learn
			// granted such a directory, and the deny patterns,
			// matched from the new root, no longer named key4.db).
			// wildPrefixes say which roots lie below one.
			if comps := strings.Split(body, "/"); len(comps) > 1 {
				spanPats = append(spanPats, p)
				if !strings.HasPrefix(p, "!") {
					for k := 1; k <= len(comps); k++ {
						wildPrefixes = append(wildPrefixes, "**/"+strings.Join(comps[:k], "/")+"/")
					}
				}
			} else if len(body) > 1 && body[0] == '.' && !strings.ContainsAny(body[1:2], "*?[") {
				// One component that begins with a literal hidden name
				// (.env*): a root at or below a directory it names
				// (cookiecutter-django's .envs/) is inside it, as for
				// .aws/ (red team round 32, R32c-9: --ro proj/.envs
				// read .envs/.production/.django). It cannot name an
				// unrelated directory above every root as "*.env"
				// would.
				anyPats = append(anyPats, p)
			}
			continue
		}
		if strings.HasPrefix(body, ".") {
			// A hidden directory (.aws/, .config/gcloud/): a root is
			// inside one only for that reason. A project's own name
			// (data/, build/) would also name a directory above the
			// workspace by chance (/data/projects/foo) and deny all of
			// it (red team round 12, R12-9).
			anyPats = append(anyPats, p)
		}
		if comps := strings.Split(body, "/"); len(comps) > 1 {
			spanPats = append(spanPats, p)
			if d.spanComps == nil {
				d.spanComps = map[string]bool{}
			}
			for _, c := range comps[:len(comps)-1] {
				d.spanComps[c] = true
			}
			// Its leading components as directory patterns too, as
			// for a pattern with a wildcard: a root at or below a
			// directory they match, at any depth and not only by the
			// root's own name (spanComps), crosses the pattern, and
			// the root itself is matched against it (red team round
			// 32, R32c-1: --ro ~/snap/chromium/common/chromium/Default/
			// "Local Storage" read the tokens **/Default/Local Storage/
			// denies). Several literal components name a place, not a
			// project's own word (R12-9's worry is one component).
			if !strings.HasPrefix(p, "!") {
				for k := 1; k <= len(comps); k++ {
					wildPrefixes = append(wildPrefixes, "**/"+strings.Join(comps[:k], "/")+"/")
				}
			}
		}
	}
	if len(anyPats) > 0 {
		if d.anywhere, err = gitignore.New("", anyPats); err != nil {
			return nil, fmt.Errorf("jail: WithDeny: %w", err) // cannot happen: the same patterns compiled above
		}
	}
	if len(spanPats) > 0 {
		if d.spans, err = gitignore.New("", spanPats); err != nil {
			return nil, fmt.Errorf("jail: WithDeny: %w", err) // cannot happen: the same patterns compiled above
		}
	}
	if len(wildPrefixes) > 0 {
		if d.wildPrefix, err = gitignore.New("", wildPrefixes); err != nil {
			return nil, fmt.Errorf("jail: WithDeny: %w", err) // cannot happen: prefixes of patterns compiled above
		}
	}
	return d, nil
}

// rootInside reports whether the root itself, or a directory above it,
// is matched by a pattern that matches at any depth (a root inside
// .aws/): then everything in it is (R11a-4). Cached per root.
func (d *denyMatcher) rootInside(root string) bool {
	if d.anywhere.Empty() && d.wildPrefix.Empty() || root == "/" || root == "" {
		return false
	}
	if v, ok := d.inside.Load(root); ok {
		return v.(bool)
	}
	// By the literal patterns (anywhere), and by the spans with a
	// wildcard when the root crosses them: a root at or below a
	// directory **/.var/app/*/data/TelegramDesktop/tdata/ denies (red
	// team round 31, R31b-2: --rw of it listed the keys).
	inside := func(p string) bool {
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		return excludedDirs(d.anywhere, parts) || !d.wildPrefix.Empty() && d.crosses(p) && excludedDirs(d.spans, parts)
	}
	in := inside(root)
	for _, a := range d.aliases[root] {
		in = in || a != "/" && inside(a)
	}
	d.inside.Store(root, in)
	return in
}

// spansMatch reports whether the entry rel of root, by its absolute path
// or by the path under one of the root's aliases, matches a pattern of
// spans, by match (excluded for every level, ExcludedBoth or Match for
// the entry's own).
func (d *denyMatcher) spansMatch(root, rel string, match func(parts []string) bool) bool {
	if rel == "" || d.spans.Empty() {
		return false
	}
	if d.crosses(root) && match(strings.Split(strings.TrimPrefix(filepath.Join(root, rel), "/"), "/")) {
		return true
	}
	for _, a := range d.aliases[root] {
		if d.crosses(a) && match(strings.Split(strings.TrimPrefix(filepath.Join(a, rel), "/"), "/")) {
			return true
		}
	}
	return false
}

// crosses reports whether a pattern of spans can match a path that
// begins above the root and ends below it: the root's own name is one
// of its inner components (R11a-4: --ro ~/.config under
// **/.config/gh/hosts.yml).
func (d *denyMatcher) crosses(root string) bool {
	if d.spans.Empty() || root == "/" {
		return false
	}
	if d.spanComps[filepath.Base(root)] {
		return true
	}
	if d.wildPrefix.Empty() {
		return false
	}
	if v, ok := d.wildIn.Load(root); ok {
		return v.(bool)
	}
	in := excludedDirs(d.wildPrefix, strings.Split(strings.TrimPrefix(root, "/"), "/"))
	d.wildIn.Store(root, in)
	return in
}

func (d *denyMatcher) empty() bool { return d == nil || d.all.Empty() }

// patterns returns the patterns as given (nil for a nil d).
func (d *denyMatcher) patterns() []string {
	if d == nil {
		return nil
	}
	return d.all.Patterns()
}

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
	if d.copies {
		for _, o := range copyOriginals(canon, root) {
			if d.deniedName(o, root) {
				return true
			}
		}
	}
	return d.deniedName(canon, root)
}

// deniedName is denied for canon alone, not the name it is a copy of.
func (d *denyMatcher) deniedName(canon, root string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" && excluded(d.all, strings.Split(rel, "/")) {
		return true
	}
	if d.outer(canon, root, func(rel string) bool { return excluded(d.all, strings.Split(rel, "/")) }) {
		return true
	}
	if d.rootInside(root) {
		return true
	}
	if !d.abs.Empty() && canon != "/" && excluded(d.abs, strings.Split(strings.TrimPrefix(canon, "/"), "/")) {
		return true
	}
	return d.spansMatch(root, rel, func(parts []string) bool { return excluded(d.spans, parts) })
}

// excludedDirs applies m to every prefix of parts as a directory.
func excludedDirs(m *gitignore.Matcher, parts []string) bool {
	for k := 1; k <= len(parts); k++ {
		if m.Match(parts[:k], true) == gitignore.Excluded {
			return true
		}
	}
	return false
}

// excluded applies m to every prefix of parts, shortest first.
func excluded(m *gitignore.Matcher, parts []string) bool {
	for k := 1; k <= len(parts); k++ {
		prefix := parts[:k]
		// Ancestors are directories; the entry itself may be either:
		// it is tried both ways and denied if either way denies it.
		if m.Match(prefix, true) == gitignore.Excluded || (k == len(parts) && m.Match(prefix, false) == gitignore.Excluded) {
			return true
		}
	}
	return false
}
