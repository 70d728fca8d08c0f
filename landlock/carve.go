package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/landjail/landjail/jail"
)

// Carve-outs.
//
// Landlock rules only allow, and a rule on a directory covers everything
// beneath it. To deny (or make read-only) a path P below an allowed
// directory R, R is not granted as a whole; it is compiled as its
// children minus P:
//
//   - every directory on the chain from R down to P's parent (a "chain
//     directory") gets chainRights only;
//   - every other entry of a chain directory (a "sibling") gets R's full
//     rights: a directory for everything beneath it, a regular file (or
//     FIFO, socket, device) the file rights only; a symbolic link gets no
//     rule, because Landlock checks the path a link resolves to, and a
//     rule added on a link's path would land on its target (O_PATH
//     follows it), possibly the carved-out file itself;
//   - P gets nothing (deny) or its read-only rights.
//
// chainRights is READ_DIR and nothing else. Every right granted on a
// directory is inherited by everything beneath it, so a chain directory
// may only hold rights that P may have too:
//   - the file rights (read_file, write_file, truncate, execute,
//     ioctl_dev) would reach P directly;
//   - remove_file/remove_dir would let a child delete P, or rename a
//     sibling it may write over P (rename(sibling, P) replaces P by an
//     inode that carries the sibling's rule: the read-only .git/config
//     becomes writable);
//   - refer would let a child link or rename P into a sibling directory
//     (Landlock still refuses a rename that gains rights, but refer has
//     no use without make_* and remove_*);
//   - make_sym would let a child create a protected name that does not
//     exist yet as a symlink to a file it controls (.git/hooks/pre-commit
//     -> ../../src/evil.sh, .mcp.json -> src/x.json), or inside a
//     read-only directory;
//   - make_reg, make_dir, make_fifo, make_sock: measured on Linux 6.18
//     (TestChainDirCreateIsUseless), open(O_CREAT) in a directory that has
//     make_reg but no write_file creates the file and then fails with
//     EACCES, leaving an empty file the child can neither write nor read
//     (a stale .git/index.lock that blocks git for the user afterwards);
//     a new directory is as dead. Refusing creation outright fails fast
//     and leaves nothing behind.
//
// So chain directories are frozen: their list of entries cannot change
// (no create, remove or rename directly in them), while every existing
// sibling stays fully usable (a sibling directory with everything
// beneath it; a sibling file in place, but not replaced by rename).
// Landlock attaches rules to inodes, not names, so renaming a chain
// directory within its parent keeps every rule (and is refused anyway:
// no remove_dir on the parent), and a hard link to P made in a chain
// directory is the same inode with no rule.
const chainRights = golandlock.AccessFSSet(ll.AccessFSReadDir)

// Carve-out modes, for CarveOut.Mode.
const (
	// CarveDeny: children get no right on the path.
	CarveDeny = "deny"
	// CarveReadOnly: children may read (and execute, where the enclosing
	// root allows it) but not write, create, remove or rename.
	CarveReadOnly = "read-only"
)

// Carve-out sources, for CarveOut.Source.
const (
	SourceDenyPattern = "deny-pattern"
	SourceReadOnly    = "read-only"
	SourceAgentConfig = "agent-config"
	SourceNestedRoot  = "nested-root"
)

// AgentConfigPaths are the entries of the workspace root that
// Options.ProtectAgentConfig makes read-only for children: files whose
// modification would run code outside the sandbox later (git hooks and
// configuration such as core.hooksPath or core.fsmonitor, shell start-up
// files, editor tasks, agent and MCP server configuration). Paths are
// relative to the workspace root; a trailing "/" marks a directory.
var AgentConfigPaths = []string{
	".git/hooks/", ".git/config", ".gitmodules",
	".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".envrc",
	".vscode/", ".idea/", ".mcp.json", ".claude/", ".codex/",
}

// DefaultWalkLimit is the number of entries Compile visits at most when
// it expands deny and read-only patterns against the tree, per top-level
// root (Options.WalkLimit 0). Measured on a shared 2-core VM (Linux 6.18,
// TestCarveOutScale): a 10,000-file workspace compiles in ~45 ms (100
// directories of 100 files, 129 rules) to ~85 ms (10,000 files in the
// workspace root, 10,029 rules); the walk's cost is one lstat per path
// component per entry (pattern matching through jail.Workspace.Resolve).
const DefaultWalkLimit = 100_000

// CarveOut is one path carved out of an allowed root, in a Report.
type CarveOut struct {
	// Path is the canonical absolute path.
	Path string `json:"path"`
	// Mode is CarveDeny or CarveReadOnly.
	Mode string `json:"mode"`
	// Source is SourceDenyPattern, SourceReadOnly, SourceAgentConfig or
	// SourceNestedRoot.
	Source string `json:"source"`
	// Exists is false for a protected name that does not exist at
	// compile time: its parent is made a chain directory so that a child
	// cannot create it.
	Exists bool `json:"exists"`
}

// carve is one narrowing below a policy root, the planner's input.
type carve struct {
	path   string
	access golandlock.AccessFSSet // 0: deny
	source string
	exists bool
}

// entryKind is what a directory entry is, as far as rules care.
type entryKind uint8

const (
	kindFile    entryKind = iota // regular file, FIFO, socket, device: file rights
	kindDir                      // directory: every right
	kindSymlink                  // no rule
)

type dirEntry struct {
	name string
	kind entryKind
}

// listFunc lists the entries of a directory without following symlinks;
// an error wrapping fs.ErrNotExist for a missing one.
type listFunc func(dir string) ([]dirEntry, error)

// listDir is the real listFunc.
func listDir(dir string) ([]dirEntry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]dirEntry, 0, len(des))
	for _, de := range des {
		out = append(out, dirEntry{de.Name(), kindOf(de.Type())})
	}
	return out, nil
}

func kindOf(m fs.FileMode) entryKind {
	switch {
	case m&fs.ModeSymlink != 0:
		return kindSymlink
	case m.IsDir():
		return kindDir
	}
	return kindFile
}

// within reports whether p is strictly below dir (whole components).
func within(p, dir string) bool {
	if dir == "/" {
		return p != "/" && strings.HasPrefix(p, "/")
	}
	return strings.HasPrefix(p, dir+"/")
}

// carveRoot compiles the policy-root rule root (on a directory) minus the
// carves below it into rules, listing chain directories with list. It is
// pure apart from list. chains counts the chain directories.
func carveRoot(root Rule, carves []carve, list listFunc, kinds map[string]bool) (rules []Rule, chains int, err error) {
	byPath := map[string]golandlock.AccessFSSet{}
	chain := map[string]bool{}
	for _, c := range carves {
		if !within(c.path, root.Path) || c.access&root.Access == root.Access {
			continue // not below root, or not narrower than it
		}
		if a, ok := byPath[c.path]; ok {
			byPath[c.path] = a & c.access
		} else {
			byPath[c.path] = c.access
		}
		for d := filepath.Dir(c.path); d != root.Path && within(d, root.Path); d = filepath.Dir(d) {
			chain[d] = true
		}
	}
	if len(byPath) == 0 {
		return []Rule{root}, 0, nil
	}
	chain[root.Path] = true
	var walk func(dir string, d golandlock.AccessFSSet, src string) error
	walk = func(dir string, d golandlock.AccessFSSet, src string) error {
		chains++
		kinds[dir] = true
		if a := d & chainRights; a != 0 {
			rules = append(rules, Rule{Path: dir, Access: a, Source: "chain", Optional: root.Optional})
		}
		ents, err := list(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a protected name below a missing directory
		}
		if err != nil {
			return &fs.PathError{Op: "readdir", Path: dir, Err: err}
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].name < ents[j].name })
		for _, e := range ents {
			p := filepath.Join(dir, e.name)
			if e.kind == kindSymlink {
				continue
			}
			dp, s := d, src
			if a, ok := byPath[p]; ok {
				dp, s = a&d, carveSource(carves, p)
			}
			if dp == 0 {
				continue
			}
			if e.kind == kindDir && chain[p] {
				if err := walk(p, dp, s); err != nil {
					return err
				}
				continue
			}
			a := dp
			if e.kind != kindDir {
				a &= fileRights
			}
			if a != 0 {
				rules = append(rules, Rule{Path: p, Access: a, Source: s})
				kinds[p] = e.kind == kindDir
			}
		}
		return nil
	}
	if err := walk(root.Path, root.Access, root.Source); err != nil {
		return nil, 0, err
	}
	return rules, chains, nil
}

func carveSource(carves []carve, p string) string {
	for _, c := range carves {
		if c.path == p {
			return c.source
		}
	}
	return "carve"
}

// carveAll expands every rule marked as a policy root (the first n rules)
// that has carves below it, and merges rules on the same path (Landlock
// grants their union anyway). Other rules are kept as they are. kinds
// maps the path of every rule the expansion made to whether it is a
// directory (as listed).
func carveAll(rules []Rule, n int, carves []carve, list listFunc) (out []Rule, chains int, kinds map[string]bool, err error) {
	kinds = map[string]bool{}
	if len(carves) == 0 {
		return rules, 0, kinds, nil
	}
	for i, r := range rules {
		if i >= n {
			out = append(out, r)
			continue
		}
		rs, c, err := carveRoot(r, carves, list, kinds)
		if err != nil {
			return nil, 0, nil, err
		}
		out = append(out, rs...)
		chains += c
	}
	idx := map[string]int{}
	merged := out[:0:0]
	for _, r := range out {
		if j, ok := idx[r.Path]; ok {
			merged[j].Access |= r.Access
			continue
		}
		idx[r.Path] = len(merged)
		merged = append(merged, r)
	}
	for _, r := range rules[:n] {
		if merged[idx[r.Path]].Source != "chain" {
			delete(kinds, r.Path) // a root compiled whole: stat it as usual
		}
	}
	return merged, chains, kinds, nil
}

// nestedCarves turns policy roots lying below another, wider policy root
// into carves of it (a read-only root inside the read-write workspace).
func nestedCarves(roots []Rule) []carve {
	var out []carve
	for _, in := range roots {
		for _, r := range roots {
			if within(in.Path, r.Path) && r.Access&^in.Access != 0 {
				out = append(out, carve{path: in.Path, access: in.Access, source: SourceNestedRoot, exists: true})
				break
			}
		}
	}
	return out
}

// expandPatterns walks each top-level root (not following symlinks,
// visiting at most limit entries per root) and returns the canonical
// paths that match: denied(p) true. A matching directory is not descended
// into. Symlinks are never returned (access through them is checked on
// their target, which is matched where it lives). over lists the roots
// whose walk stopped at the limit; their matches so far are returned.
func expandPatterns(roots []string, denied func(string) bool, limit int) (out, over []string, err error) {
	seen := 0
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := listDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
				return nil
			}
			return err
		}
		for _, e := range ents {
			seen++
			if seen > limit {
				return errWalkLimit
			}
			if e.kind == kindSymlink {
				continue
			}
			p := filepath.Join(dir, e.name)
			if denied(p) {
				out = append(out, p)
				continue
			}
			if e.kind == kindDir {
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range roots {
		seen = 0
		err := walk(r)
		if errors.Is(err, errWalkLimit) {
			over = append(over, r)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
	}
	return out, over, nil
}

var errWalkLimit = errors.New("walk limit reached")

// matcher builds a Workspace with ws's roots and the given patterns as
// deny patterns, so that a path matches exactly as jail's deny patterns
// do (relative to the deepest root). The caller closes it.
func matcher(ws *jail.Workspace, patterns []string) (*jail.Workspace, error) {
	roots := ws.Roots()
	var opts []jail.Option
	for _, r := range roots[1:] {
		opts = append(opts, jail.WithAllowed(r.Path, r.Mode))
	}
	opts = append(opts, jail.WithDeny(patterns...))
	return jail.New(roots[0].Path, opts...)
}

func matches(m *jail.Workspace) func(string) bool {
	return func(p string) bool {
		_, err := m.Resolve(p)
		return errors.Is(err, jail.ErrDenied)
	}
}

// topRoots returns the policy roots that lie inside no other policy root.
func topRoots(roots []Rule) []string {
	var out []string
	for _, r := range roots {
		inside := false
		for _, o := range roots {
			if within(r.Path, o.Path) {
				inside = true
			}
		}
		if !inside && !slices.Contains(out, r.Path) {
			out = append(out, r.Path)
		}
	}
	return out
}

// collectCarves gathers every carve of ws and opt: deny patterns and
// Options.ReadOnly patterns expanded against the tree, absolute
// Options.ReadOnly paths, the agent-config preset and nested roots.
// A failure to expand patterns (walk limit, unrestricted policy) is
// returned as a reason string for the report, not an error.
func collectCarves(ws *jail.Workspace, opt Options, roots []Rule) (carves []carve, dropped string, err error) {
	carves = nestedCarves(roots)
	limit := opt.WalkLimit
	if limit <= 0 {
		limit = DefaultWalkLimit
	}
	readRights := RightsReadExec
	expand := func(patterns []string, access golandlock.AccessFSSet, source string) error {
		if len(patterns) == 0 {
			return nil
		}
		if ws.Unrestricted() {
			dropped = "the policy is unrestricted: expanding patterns would walk the whole file system"
			return nil
		}
		m, err := matcher(ws, patterns)
		if err != nil {
			return err
		}
		defer m.Close()
		paths, over, err := expandPatterns(topRoots(roots), matches(m), limit)
		if err != nil {
			return err
		}
		if len(over) > 0 {
			dropped = fmt.Sprintf("more than %d entries below %s (Options.WalkLimit)", limit, strings.Join(over, ", "))
		}
		for _, p := range paths {
			carves = append(carves, carve{path: p, access: access, source: source, exists: true})
		}
		return nil
	}
	if err := expand(ws.DenyPatterns(), 0, SourceDenyPattern); err != nil {
		return nil, "", err
	}
	var roPatterns []string
	for _, p := range opt.ReadOnly {
		if filepath.IsAbs(p) {
			c, err := filepath.EvalSymlinks(p)
			if err != nil {
				return nil, "", fmt.Errorf("landlock: Options.ReadOnly: %w", err)
			}
			carves = append(carves, carve{path: c, access: readRights, source: SourceReadOnly, exists: true})
			continue
		}
		roPatterns = append(roPatterns, p)
	}
	if err := expand(roPatterns, readRights, SourceReadOnly); err != nil {
		return nil, "", err
	}
	if opt.ProtectAgentConfig {
		carves = append(carves, agentCarves(ws.Root())...)
	}
	return carves, dropped, nil
}

// agentCarves returns the agent-config preset below root: existing entries
// at their canonical path, missing ones as names whose parent becomes a
// chain directory. An entry that is a symlink is protected where it
// points (if that is inside the workspace; elsewhere it is as the policy
// says) and at its own name.
//
// A .git that is a file (a worktree's or submodule's "gitdir: ..." link)
// is itself protected: pointed elsewhere, it would select another
// repository's hooks and configuration.
func agentCarves(root string) []carve {
	var out []carve
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		out = append(out, carve{path: filepath.Join(root, ".git"), access: RightsReadExec, source: SourceAgentConfig, exists: true})
	}
	for _, rel := range AgentConfigPaths {
		p := filepath.Join(root, strings.TrimSuffix(rel, "/"))
		_, err := os.Lstat(p)
		c := carve{path: p, access: RightsReadExec, source: SourceAgentConfig, exists: err == nil}
		out = append(out, c)
		if err != nil {
			continue
		}
		if t, err := filepath.EvalSymlinks(p); err == nil && t != p && within(t, root) {
			c.path = t
			out = append(out, c)
		}
	}
	return out
}

// widenedCarves names carve-outs that a rule outside the carving (TmpDir,
// Extra, the system preset, an unrestricted policy) widens again: rules
// are unions along the path, so such a carve-out does not hold.
func widenedCarves(rules []Rule, carves []carve) []string {
	var out []string
	for _, cv := range carves {
		for _, r := range rules {
			if r.Path != cv.path && !within(cv.path, r.Path) {
				continue
			}
			if extra := r.Access &^ cv.access &^ chainRights; extra != 0 && r.Source != cv.source {
				out = append(out, fmt.Sprintf("carve-out %s (%s) is widened by rule %s: children get %v there", cv.path, cv.source, r, extra))
			}
		}
	}
	return out
}

// carveNotes are the limits of carve-outs, stated in every report that
// has carve-outs (measured by TestCarveOut* on Linux 6.18, ABI 7).
var carveNotes = []string{
	"carve-outs: directories on the way to a carved-out path (chain directories) get read_dir only: a child cannot create, remove or rename entries directly in them (EACCES), and a sibling file replaced by rename (editors, git's index.lock -> index) would lose its rule; files and directories below other entries are fully usable",
	"carve-outs: patterns are expanded when the ruleset is compiled; a file that starts to match later (created or renamed by another process, or by the child below a sibling directory, which it fully owns) is not carved out",
	"carve-outs: a denied directory can still be listed (read_dir is inherited from its chain), its files cannot be read, written, removed or renamed; hard links to a carved-out file that existed before compile time are the same inode and get the rights of wherever they live",
}
