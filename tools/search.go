package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/landjail/landjail/internal/gitignore"
)

// dirFS is an fs.FS over one directory of the policy (base, a name for
// the Workspace: relative to the workspace root or absolute inside an
// allowed root). Every operation is a Workspace call on base/name, so it
// is exactly as confined as the Workspace; it exists (rather than
// ws.FS()) so that glob and grep work in allowed roots outside the
// workspace too, and so that grep's opens are non-blocking.
type dirFS struct {
	k    *Toolkit
	base string
	// hiddenGit, when not nil, makes ReadDir leave out directories named
	// ".git" and collects their names (glob: as grep, it does not list
	// git's internals unless the pattern names .git). A set: doublestar
	// may read a directory more than once.
	hiddenGit map[string]bool
	// large collects the directories ReadDir refused as holding more
	// than Limits.DirEntries entries (a set, as hiddenGit).
	large map[string]bool
	// ops counts the directory reads and stats of one call; past
	// Limits.WalkOps each fails with errWalkBudget (stopped set).
	ops     *int
	stopped *bool
	// until is when the call's walk must stop (Limits.WalkTime).
	until time.Time
	// ctx is the call's context: once it ends (the client canceled the
	// call, the session ended), every read, stat and open fails with
	// ErrCanceled, so the walk stops at its next step instead of running
	// on to its budget (red team round 26, R26e-6: a canceled call went
	// on for its whole budget). nil: never.
	ctx context.Context
}

// errWalkBudget is dirFS's error once a call's directory reads and
// stats spent Limits.WalkOps (a unit per path component): glob and grep
// then stop walking and say their result is cut.
var errWalkBudget = errors.New("the call's budget of directory reads is spent")

// spend charges one read or stat of op on name against the call's
// budget: one unit per component of name.
func (d dirFS) spend(op, name string) error {
	if err := d.canceled(op, name); err != nil {
		return err
	}
	if d.ops == nil {
		return nil
	}
	if *d.ops >= d.k.limits().WalkOps || (!d.until.IsZero() && time.Now().After(d.until)) {
		*d.stopped = true
		return &fs.PathError{Op: op, Path: name, Err: errWalkBudget}
	}
	// Each read resolves its path from the root, a component at a time:
	// charged by its depth (red team round 26, R26e-6: counted as one,
	// a chain of 80 directories still cost two minutes in a call).
	*d.ops += 1 + strings.Count(name, "/")
	return nil
}

// canceled is ErrCanceled (in a *fs.PathError) once d's call's context
// ended, else nil.
func (d dirFS) canceled(op, name string) error {
	if d.ctx == nil || d.ctx.Err() == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %w", ErrCanceled, context.Cause(d.ctx))}
}

// budgeted returns a dirFS for one glob or grep call, with its own
// budget of Limits.WalkOps reads and stats (doublestar and fs.WalkDir
// call it from the calling goroutine only), that stops when ctx ends.
func budgeted(ctx context.Context, k *Toolkit, base string) dirFS {
	return dirFS{k: k, base: base, large: map[string]bool{}, ops: new(int), stopped: new(bool), ctx: ctx, until: time.Now().Add(k.limits().WalkTime)}
}

// errDirTooLarge is ReadDir's error for a directory past
// Limits.DirEntries: glob and grep skip it and count it.
var errDirTooLarge = errors.New("directory has more entries than the tools walk")

var (
	_ fs.StatFS    = dirFS{}
	_ fs.ReadDirFS = dirFS{}
)

func (d dirFS) name(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return path.Join(d.base, name), nil
}

func (d dirFS) Open(name string) (fs.File, error) {
	n, err := d.name("open", name)
	if err != nil {
		return nil, err
	}
	if err := d.canceled("open", name); err != nil {
		return nil, err
	}
	f, err := d.k.WS.OpenFile(n, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) {
	n, err := d.name("stat", name)
	if err != nil {
		return nil, err
	}
	if err := d.spend("stat", name); err != nil {
		return nil, err
	}
	return d.k.WS.Stat(n)
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := d.name("readdir", name)
	if err != nil {
		return nil, err
	}
	if err := d.spend("readdir", name); err != nil {
		return nil, err
	}
	limit := d.k.limits().DirEntries
	ents, total, err := d.k.WS.ReadDirN(n, limit)
	if err == nil && total > limit {
		if d.large != nil {
			d.large[name] = true
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errDirTooLarge}
	}
	if d.hiddenGit == nil || err != nil {
		return ents, err
	}
	return slices.DeleteFunc(ents, func(e fs.DirEntry) bool {
		if e.Name() == ".git" && e.IsDir() {
			d.hiddenGit[path.Join(name, e.Name())] = true
			return true
		}
		return false
	}), nil
}

// GlobArgs are glob's arguments.
type GlobArgs struct {
	// Pattern is a doublestar pattern relative to Path.
	Pattern string `json:"pattern"`
	// Path is the directory searched; "" means the workspace root (or
	// the first root of a narrowed Toolkit).
	Path string `json:"path,omitempty"`
}

// GlobResult is what glob returns.
type GlobResult struct {
	Pattern string `json:"pattern"`
	// Matches are paths as the agent can pass them back: Path joined with
	// the match; directories end with "/".
	Matches   []string `json:"matches"`
	Truncated bool     `json:"truncated"`
	// SkippedGitDirs counts the ".git" directories glob did not walk
	// (as grep does not search them): name .git in the pattern, or pass
	// one as Path, to list git's internals.
	SkippedGitDirs int `json:"skipped_git_dirs,omitempty"`
	// SkippedLargeDirs counts the directories not walked because they
	// hold more than Limits.DirEntries entries.
	SkippedLargeDirs int `json:"skipped_large_dirs,omitempty"`
	// BudgetSpent: the walk stopped after Limits.WalkOps directory
	// reads; more matches may exist.
	BudgetSpent bool `json:"budget_spent,omitempty"`
}

// String renders the result for a model.
func (r *GlobResult) String() string {
	var b strings.Builder
	for _, m := range r.Matches {
		b.WriteString(m)
		b.WriteByte('\n')
	}
	switch {
	case r.Truncated:
		fmt.Fprintf(&b, "[glob %q: truncated at %d matches; use a narrower pattern or path]", r.Pattern, len(r.Matches))
	case len(r.Matches) == 0:
		fmt.Fprintf(&b, "[glob %q: no matches]", r.Pattern)
	default:
		fmt.Fprintf(&b, "[glob %q: %d matches]", r.Pattern, len(r.Matches))
	}
	if r.SkippedGitDirs > 0 {
		fmt.Fprintf(&b, "\n[%d .git directories not listed; name .git in the pattern to list one]", r.SkippedGitDirs)
	}
	if r.SkippedLargeDirs > 0 {
		fmt.Fprintf(&b, "\n[%d directories not walked: each holds more entries than the tools read of one directory; use bash (find, ls) for them]", r.SkippedLargeDirs)
	}
	if r.BudgetSpent {
		b.WriteString("\n[the walk stopped: the pattern needed more directory reads than one call makes; use fewer ** or alternatives, or a narrower path]")
	}
	return b.String()
}

// Glob is glob: doublestar matching (**, {a,b}, [..]) over a directory of
// the policy, walked through the Workspace. Symbolic links are matched by
// name but never followed (doublestar.WithNoFollow), so "**" cannot leave
// the directory through a link; entries matching a deny pattern are not
// seen. As grep, glob does not enter ".git" directories below Path
// (counted in SkippedGitDirs) unless a component of the pattern is
// literally ".git". Results are sorted; at most Limits.GlobResults. Errors:
// ErrInvalidArgs for a bad, absolute or ".." pattern, the Workspace's for
// Path.
func (k *Toolkit) Glob(a GlobArgs) (*GlobResult, error) {
	return k.glob(context.Background(), a)
}

// glob is Glob, stopping its walk once ctx ends (then it returns
// ErrCanceled): Call passes the call's context.
func (k *Toolkit) glob(ctx context.Context, a GlobArgs) (*GlobResult, error) {
	const tool = ToolGlob
	if a.Pattern == "" || !doublestar.ValidatePattern(a.Pattern) {
		return nil, k.fail(tool, a.Pattern, fmt.Errorf("%w: invalid glob pattern", ErrInvalidArgs))
	}
	if strings.HasPrefix(a.Pattern, "/") || slices.Contains(strings.Split(a.Pattern, "/"), "..") {
		return nil, k.fail(tool, a.Pattern, fmt.Errorf("%w: the pattern must be relative to path and must not contain \"..\"; put the directory in path", ErrInvalidArgs))
	}
	pattern, err := boundGlob(a.Pattern)
	if err != nil {
		return nil, k.fail(tool, a.Pattern, err)
	}
	base, err := k.path(a.Path, ".")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	fi, err := k.WS.Stat(base)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	max := k.limits().GlobResults
	r := &GlobResult{Pattern: a.Pattern}
	shownBase := a.Path
	if shownBase == "" {
		shownBase = base
	}
	fsys := budgeted(ctx, k, base)
	if !slices.Contains(strings.Split(a.Pattern, "/"), ".git") {
		fsys.hiddenGit = map[string]bool{}
	}
	err = doublestar.GlobWalk(fsys, pattern, func(p string, d fs.DirEntry) error {
		if p == "." {
			return nil
		}
		if len(r.Matches) == max {
			r.Truncated = true
			return errCapReached
		}
		m := joinShown(shownBase, p)
		if d.IsDir() {
			m += "/"
		}
		r.Matches = append(r.Matches, m)
		return nil
	}, doublestar.WithNoFollow())
	if err == nil {
		err = fsys.canceled("glob", a.Pattern)
	}
	if err != nil && !errors.Is(err, errCapReached) {
		return nil, k.fail(tool, a.Pattern, err)
	}
	slices.Sort(r.Matches)
	r.SkippedGitDirs = len(fsys.hiddenGit)
	r.SkippedLargeDirs = len(fsys.large)
	r.BudgetSpent = *fsys.stopped
	return r, nil
}

// Bounds of a glob pattern's work (boundGlob).
const (
	maxGlobDoubleStars  = 3   // "**" components, consecutive ones counted once
	maxGlobAlternatives = 256 // the product of the {a,b} groups' sizes
)

// boundGlob returns pattern with consecutive "**" components collapsed
// ("**/**" is "**"), or ErrInvalidArgs when walking it could take without
// bound: more than maxGlobDoubleStars "**" components (each walks every
// depth below the one before: 12 of them on a 15-deep tree never
// answered) or brace groups whose alternatives multiply past
// maxGlobAlternatives ("{a,b}" 40 times is 2^40 patterns): red team
// round 25, R25c-4, one argument of a model stalled landjail-mcp.
func boundGlob(pattern string) (string, error) {
	comps := strings.Split(pattern, "/")
	out := comps[:0:0]
	stars := 0
	for _, c := range comps {
		if c == "**" {
			if len(out) > 0 && out[len(out)-1] == "**" {
				continue
			}
			stars++
		}
		out = append(out, c)
	}
	if stars > maxGlobDoubleStars {
		return "", fmt.Errorf("%w: at most %d \"**\" components (this pattern has %d)", ErrInvalidArgs, maxGlobDoubleStars, stars)
	}
	pattern = strings.Join(out, "/")
	// Each group's alternatives, nested ones multiplied in as if they
	// were their own groups (an upper bound).
	alts := 1
	var open []int // the count of commas of each open group, +1
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '{':
			open = append(open, 1)
		case ',':
			if len(open) > 0 {
				open[len(open)-1]++
			}
		case '}':
			if len(open) > 0 {
				alts *= open[len(open)-1]
				open = open[:len(open)-1]
				if alts > maxGlobAlternatives {
					return "", fmt.Errorf("%w: the {...} groups of the pattern give more than %d alternatives", ErrInvalidArgs, maxGlobAlternatives)
				}
			}
		}
	}
	return pattern, nil
}

// joinShown joins the agent's base path and a slash-separated name below
// it, as the agent can pass it back.
func joinShown(base, name string) string {
	if base == "" || base == "." {
		return name
	}
	return path.Join(base, name)
}

// GrepArgs are grep's arguments.
type GrepArgs struct {
	// Pattern is a Go regexp (RE2).
	Pattern string `json:"pattern"`
	// Path is the file or directory searched; "" means the workspace
	// root (or the first root of a narrowed Toolkit).
	Path string `json:"path,omitempty"`
	// Include keeps only files whose path relative to Path matches this
	// doublestar pattern; a pattern without "/" matches the base name.
	Include    string `json:"include,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	// MaxResults caps the matching lines (0 or more than
	// Limits.GrepMatches: Limits.GrepMatches).
	MaxResults int `json:"max_results,omitempty"`
}

// Match is one matching line.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepResult is what grep returns.
type GrepResult struct {
	Pattern string  `json:"pattern"`
	Matches []Match `json:"matches"`
	// Files counts the files searched; FilesMatched those with a match.
	Files, FilesMatched int
	// SkippedBinary and SkippedLarge count files left out (SkippedLarge:
	// larger than Limits.GrepFileBytes). CutLarge counts files searched
	// only up to Limits.GrepFileBytes because reading returned more than
	// their size said (a file growing, a /proc file).
	SkippedBinary, SkippedLarge, CutLarge int
	// SkippedIgnoredDirs counts directories not searched because a
	// .gitignore ignores them or they are .git; the result says so, so
	// the model knows to grep such a directory by path.
	SkippedIgnoredDirs int
	// SkippedLargeDirs counts directories not searched because they hold
	// more than Limits.DirEntries entries.
	SkippedLargeDirs int
	// BudgetSpent: the walk stopped after Limits.WalkOps directory
	// reads; other files may match.
	BudgetSpent bool
	// Truncated: the cap was reached, more matches may exist.
	Truncated bool `json:"truncated"`
}

// String renders the result for a model.
func (r *GrepResult) String() string {
	var b strings.Builder
	for _, m := range r.Matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	fmt.Fprintf(&b, "[grep %q: %d matches in %d files; %d files searched", r.Pattern, len(r.Matches), r.FilesMatched, r.Files)
	if r.SkippedBinary > 0 {
		fmt.Fprintf(&b, "; %d binary files skipped", r.SkippedBinary)
	}
	if r.SkippedLarge > 0 {
		fmt.Fprintf(&b, "; %d files skipped as larger than the size cap (--max-file-size)", r.SkippedLarge)
	}
	if r.SkippedIgnoredDirs > 0 {
		fmt.Fprintf(&b, "; %d ignored directories skipped (.git, .gitignore'd; grep one by path to search it)", r.SkippedIgnoredDirs)
	}
	if r.SkippedLargeDirs > 0 {
		fmt.Fprintf(&b, "; %d directories skipped as holding more entries than the tools read of one directory (use bash for them)", r.SkippedLargeDirs)
	}
	if r.BudgetSpent {
		b.WriteString("; the walk stopped after the directory reads one call makes: grep a narrower path")
	}
	if r.CutLarge > 0 {
		fmt.Fprintf(&b, "; %d files searched only up to the size cap (--max-file-size) because they grew while read", r.CutLarge)
	}
	if r.Truncated {
		b.WriteString("; truncated at the result cap, narrow the pattern, path or include")
	}
	b.WriteString("]")
	return b.String()
}

// grepLineBytes caps a matching line in grep's output (a minified file
// must not fill the context with one match).
const grepLineBytes = 300

// Grep is grep: a Go regexp over the lines of every regular file under
// Path, walked with fs.WalkDir through the Workspace. Symbolic links are
// not followed (neither to files nor to directories); ".git" directories
// are skipped; .gitignore files are honoured, from the workspace root
// down when Path is inside the workspace (else from Path down); binary
// files (a NUL byte in the first 8000 bytes) and files larger than
// Limits.GrepFileBytes are skipped and counted; a file read is streamed
// (64 KiB buffered, a line at most Limits.GrepFileBytes) and stops at
// Limits.GrepFileBytes even when its size said less (counted in
// CutLarge). With Toolkit.Tracker set,
// files grep opens are not left marked read. Errors: ErrInvalidArgs for a
// bad regexp or include pattern, the Workspace's for Path. Unreadable
// files below Path are skipped silently.
func (k *Toolkit) Grep(a GrepArgs) (*GrepResult, error) {
	return k.grep(context.Background(), a)
}

// grep is Grep, stopping its walk once ctx ends (then it returns
// ErrCanceled): Call passes the call's context.
func (k *Toolkit) grep(ctx context.Context, a GrepArgs) (*GrepResult, error) {
	const tool = ToolGrep
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if a.Pattern == "" || err != nil {
		return nil, k.fail(tool, a.Pattern, fmt.Errorf("%w: invalid regular expression: %v", ErrInvalidArgs, err))
	}
	if a.Include != "" && !doublestar.ValidatePattern(a.Include) {
		return nil, k.fail(tool, a.Include, fmt.Errorf("%w: invalid include pattern", ErrInvalidArgs))
	}
	if a.Include != "" {
		if a.Include, err = boundGlob(a.Include); err != nil {
			return nil, k.fail(tool, a.Include, err)
		}
	}
	lim := k.limits()
	maxMatches := a.MaxResults
	if maxMatches <= 0 || maxMatches > lim.GrepMatches {
		maxMatches = lim.GrepMatches
	}
	base, err := k.path(a.Path, ".")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	fi, err := k.WS.Stat(base)
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	r := &GrepResult{Pattern: a.Pattern}
	g := &grepper{k: k, re: re, r: r, max: maxMatches, lim: lim}
	shownBase := a.Path
	if shownBase == "" {
		shownBase = base
	}
	if !fi.IsDir() {
		if err := regular(fi); err != nil {
			return nil, k.fail(tool, a.Path, err)
		}
		g.file(base, shownBase)
		return r, nil
	}
	ign := k.ignores(base)
	fsys := budgeted(ctx, k, base)
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if cerr := fsys.canceled("grep", p); cerr != nil {
			return cerr
		}
		if err != nil {
			return nil // unreadable: skip (the root's error was checked by Stat)
		}
		if d.IsDir() {
			if p != "." && (d.Name() == ".git" || ign.match(p, true)) {
				r.SkippedIgnoredDirs++
				return fs.SkipDir
			}
			ign.load(p)
			return nil
		}
		if !d.Type().IsRegular() || ign.match(p, false) {
			return nil
		}
		if a.Include != "" && !includes(a.Include, p) {
			return nil
		}
		if !g.file(path.Join(base, p), joinShown(shownBase, p)) {
			return fs.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	r.SkippedLargeDirs = len(fsys.large)
	r.BudgetSpent = *fsys.stopped
	return r, nil
}

// includes reports whether the slash-separated name p matches the
// include pattern: a pattern without "/" matches the base name.
func includes(pattern, p string) bool {
	if !strings.Contains(pattern, "/") {
		ok, _ := doublestar.Match(pattern, path.Base(p))
		return ok
	}
	ok, _ := doublestar.Match(pattern, p)
	return ok
}

type grepper struct {
	k   *Toolkit
	re  *regexp.Regexp
	r   *GrepResult
	max int
	lim Limits
}

// file searches one file (name for the Workspace, shown for the result);
// false when the match cap is reached.
func (g *grepper) file(name, shown string) bool {
	f, done, err := g.k.openQuiet(name)
	if err != nil {
		return true
	}
	defer done()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return true
	}
	if fi.Size() > g.lim.GrepFileBytes {
		g.r.SkippedLarge++
		return true
	}
	// The size may lie (a /proc file says 0) or grow: read at most one
	// byte past the cap.
	lr := &io.LimitedReader{R: f, N: g.lim.GrepFileBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	head, _ := br.Peek(binarySniff)
	if bytes.IndexByte(head, 0) >= 0 {
		g.r.SkippedBinary++
		return true
	}
	g.r.Files++
	matched := false
	defer func() {
		if lr.N == 0 {
			g.r.CutLarge++
		}
	}()
	for n := 1; ; n++ {
		l, err := readLine(br, int(g.lim.GrepFileBytes))
		if err != nil {
			break
		}
		if !g.re.MatchString(l.text) {
			continue
		}
		if len(g.r.Matches) == g.max {
			g.r.Truncated = true
			return false
		}
		if !matched {
			matched = true
			g.r.FilesMatched++
		}
		text := l.text
		if len(text) > grepLineBytes {
			text = text[:grepLineBytes] + " … [line cut]"
		}
		g.r.Matches = append(g.r.Matches, Match{Path: shown, Line: n, Text: strings.ToValidUTF8(text, "\uFFFD")})
	}
	return true
}

// openQuiet opens name for reading through the Workspace (non-blocking)
// and returns a done func that closes it and, when the Toolkit knows the
// tracker and the file was not read before, un-marks it: a file only
// grep (or .gitignore loading) opened does not count as read.
func (k *Toolkit) openQuiet(name string) (*os.File, func(), error) {
	var canon string
	wasRead := true
	if k.Tracker != nil {
		if c, err := k.WS.Resolve(name); err == nil {
			canon, wasRead = c, k.Tracker.HasBeenRead(c)
		}
	}
	f, err := k.WS.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	done := func() {
		if f != nil {
			f.Close()
		}
		if !wasRead {
			k.Tracker.Forget(canon)
		}
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return f, done, nil
}

// ignorer holds the .gitignore files met so far, per directory
// (slash-separated, relative to the walk's base): for each, the stack of
// matchers in force there, outermost first, each with its own directory
// as base relative to the top (the workspace root when base is inside
// it, else base). As in git, a pattern is relative to the directory of
// its .gitignore, and a deeper file's verdict overrides a shallower
// one's (gitignore(5), "PATTERN FORMAT").
type ignorer struct {
	k      *Toolkit
	base   string   // Workspace name of the walk's base
	prefix []string // base's components relative to the top
	dirs   map[string][]*gitignore.Matcher
}

// ignores loads the .gitignore files from the top down to base.
func (k *Toolkit) ignores(base string) *ignorer {
	ig := &ignorer{k: k, base: base, dirs: map[string][]*gitignore.Matcher{}}
	var stack []*gitignore.Matcher
	if canon, err := k.WS.Resolve(base); err == nil && within(canon, k.WS.Root()) {
		rel, _ := filepath.Rel(k.WS.Root(), canon)
		if rel != "." {
			ig.prefix = strings.Split(filepath.ToSlash(rel), "/")
		}
		for i := range ig.prefix {
			dir := strings.Join(ig.prefix[:i], "/")
			if dir == "" {
				dir = "."
			}
			stack = k.pushIgnore(stack, path.Join(dir, ".gitignore"), ig.prefix[:i])
		}
	}
	ig.dirs["."] = k.pushIgnore(stack, path.Join(base, ".gitignore"), ig.prefix)
	return ig
}

// load adds dir's .gitignore (dir relative to base) to the matchers in
// force below it. The base itself was loaded by ignores.
func (ig *ignorer) load(dir string) {
	if dir == "." {
		return
	}
	parent := ig.dirs[path.Dir(dir)]
	ig.dirs[dir] = ig.k.pushIgnore(slices.Clip(parent), path.Join(ig.base, dir, ".gitignore"), ig.domain(dir))
}

func (ig *ignorer) domain(p string) []string {
	d := slices.Clone(ig.prefix)
	if p != "." {
		d = append(d, strings.Split(p, "/")...)
	}
	return d
}

// match reports whether p (relative to base) is ignored by the
// .gitignore files of its directory and above: the deepest one with a
// matching pattern decides. Parents are not checked: the walk does not
// enter an ignored directory.
func (ig *ignorer) match(p string, isDir bool) bool {
	stack := ig.dirs[path.Dir(p)]
	if len(stack) == 0 {
		return false
	}
	parts := ig.domain(p)
	for i := len(stack) - 1; i >= 0; i-- {
		switch stack[i].Match(parts, isDir) {
		case gitignore.Excluded:
			return true
		case gitignore.Included:
			return false
		}
	}
	return false
}

// pushIgnore returns stack with the matcher of the .gitignore file name
// (read through the Workspace, at most 1 MiB) appended, dir being its
// directory's components relative to the top; stack unchanged when the
// file is missing, unreadable or holds no pattern. A malformed pattern
// is dropped, as git drops it.
func (k *Toolkit) pushIgnore(stack []*gitignore.Matcher, name string, dir []string) []*gitignore.Matcher {
	f, done, err := k.openQuiet(name)
	if err != nil {
		return stack
	}
	defer done()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return stack
	}
	var pats []string
	s := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for s.Scan() {
		pats = append(pats, strings.TrimSuffix(s.Text(), "\r"))
	}
	m := gitignore.NewSkippingInvalid(strings.Join(dir, "/"), pats)
	if m.Empty() {
		return stack
	}
	return append(stack, m)
}
