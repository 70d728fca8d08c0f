package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/charlievieth/fastwalk"
	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/dac"
	"github.com/landjail/landjail/internal/linkscan"
	"github.com/landjail/landjail/internal/setid"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/internal/threadcaps"
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
	// SourceDenyPattern: a deny pattern (jail.WithDeny) matches.
	SourceDenyPattern = "deny-pattern"
	// SourcePrivateKey: the file held a private key when Compile ran: a
	// private-key pattern (jail.WithDenyPrivateKeys) matches and its
	// content holds one, or jail.WithDenyPrivateKeyHeaders found a key
	// header in its first jail.KeyHeadScan bytes.
	SourcePrivateKey = "private-key"
	// SourceReadOnly: jail.WithReadOnly.
	SourceReadOnly = "read-only"
	// SourceAgentConfig: jail.WithProtectedAgentConfig.
	SourceAgentConfig = "agent-config"
	// SourceNestedRoot: a read-only root inside a writable one.
	SourceNestedRoot = "nested-root"
	// SourceUnlistable: a directory the walk could not list (EACCES),
	// carved out whole so that no entry of it is reachable by name.
	SourceUnlistable = "unlistable"
	// SourceSetID: a set-user-ID, set-group-ID or file-capability
	// program in a writable root (jail.Workspace.ProtectsSetID,
	// internal/setid), read-only: stores through a shared writable
	// mapping keep the bits (red team round 31, R31a-5).
	SourceSetID = "set-id"
)

// DefaultWalkLimit is the number of entries Compile visits at most, in
// all roots, when it expands the policy's patterns against the tree
// (Options.WalkLimit 0). Measured on a shared 2-core VM (Linux 6.18,
// BenchmarkCarveWalk1M, warm cache): 1,000,000 entries take well under a
// second, so the default bounds the walk to seconds before Compile
// refuses with ErrWalkLimit. It exists so that a policy over a huge tree
// fails with a clear error instead of hanging, never to drop patterns.
// With jail.WithDenyPrivateKeyHeaders (--deny-secrets) every regular
// file is opened and its head read too: 10-16 µs per file on the same VM
// under load (BenchmarkCarveWalkKeyHeaders), so the limit then allows
// minutes rather than seconds.
const DefaultWalkLimit = 10_000_000

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
	source := map[string]string{} // the source of a carved path's first carve
	chain := map[string]bool{}
	// A carve of the root itself narrows the whole root: a root inside
	// a denied directory, or one a deny pattern names from a wider root
	// (red team round 11, R11a-4: --ro ~/.aws under .aws/), is dropped.
	for _, c := range carves {
		if c.path == root.Path {
			root.Access &= c.access
		}
	}
	if root.Access == 0 {
		return nil, 0, nil
	}
	for _, c := range carves {
		if _, ok := source[c.path]; !ok {
			source[c.path] = c.source
		}
		if !within(c.path, root.Path) || c.access&root.Access == root.Access {
			continue // not below root, or not narrower than it
		}
		if a, ok := byPath[c.path]; ok {
			byPath[c.path] = a & c.access
		} else {
			byPath[c.path] = c.access
		}
		// Once a directory is a chain directory, so are those above it.
		for d := filepath.Dir(c.path); d != root.Path && within(d, root.Path) && !chain[d]; d = filepath.Dir(d) {
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
				dp, s = a&d, source[p]
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

// carveAll expands every rule marked as a policy root (the first n rules)
// or CarveBelow that has carves below it, and merges rules on the same
// path (Landlock grants their union anyway). Other rules are kept as
// they are. kinds
// maps the path of every rule the expansion made to whether it is a
// directory (as listed).
func carveAll(rules []Rule, n int, carves []carve, list listFunc) (out []Rule, chains int, kinds map[string]bool, err error) {
	kinds = map[string]bool{}
	if len(carves) == 0 {
		return rules, 0, kinds, nil
	}
	var carved []Rule // the rules expanded: policy roots and CarveBelow
	for i, r := range rules {
		if i >= n && !r.CarveBelow {
			out = append(out, r)
			continue
		}
		carved = append(carved, r)
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
	for _, r := range carved {
		if j, ok := idx[r.Path]; ok && merged[j].Source != "chain" {
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

// walkCarves walks the top-level roots in parallel (fastwalk; no symlink
// is followed: access through a link is checked on its target, which is
// met where it lives) and returns what the policy narrows, as
// ws.Narrowing says: a denied entry (not descended into), a non-directory
// matching a private-key pattern whose content holds a key (or cannot be
// examined), a regular file whose first bytes hold a key header
// (jail.NarrowKeyHeaders: every regular file is opened), and the topmost
// entry of each read-only subtree (descended into, so that denied
// entries below it are carved out too). A directory that cannot be
// listed is carved out whole, denied (fail closed: its entries would be
// reachable by name). More than limit entries in all fail with
// ErrWalkLimit. The result is sorted by path.
func walkCarves(ws *jail.Workspace, roots []string, limit int) ([]carve, error) {
	keys, err := newKeyScan(nil)
	if err != nil {
		return nil, err
	}
	return walkCarvesGranted(ws, roots, nil, limit, keys)
}

// walkCarvesGranted is walkCarves for a policy whose ruleset also grants
// the rules granted (paths canonical or not) outside its roots, listing
// and reading as keys decides (keyScan.as: the command's credentials).
func walkCarvesGranted(ws *jail.Workspace, roots []string, granted []Rule, limit int, keys *keyScan) ([]carve, error) {
	var (
		mu     sync.Mutex
		out    []carve
		seen   atomic.Int64
		roDirs sync.Map // directories met that are read-only, with all below
	)
	add := func(c carve) {
		mu.Lock()
		out = append(out, c)
		mu.Unlock()
	}
	conf := fastwalk.Config{Follow: false}
	multi := multiComponentPatterns(ws)
	lk := &links{ws: ws, roots: roots, add: add, seen: &seen, limit: limit, keys: keys, multi: multi}
	var writable []string
	for _, g := range granted {
		lk.granted = append(lk.granted, g.Path)
		if g.Access&linkable != 0 {
			writable = append(writable, g.Path)
		}
	}
	canon := func(paths []string) func() []string {
		return sync.OnceValue(func() []string {
			var out []string
			for _, g := range paths {
				if c, err := filepath.EvalSymlinks(g); err == nil {
					out = append(out, c)
				}
			}
			return out
		})
	}
	lk.grantedCanon, lk.writableCanon = canon(lk.granted), canon(writable)
	// HOME's links into the policy: ~/.aws -> dotfiles/aws with the
	// dotfiles repository as the workspace gives dotfiles/aws the
	// verdict of .aws/, as a link inside a root does (red team round 13,
	// R13-5: the credentials read under their dotfiles names).
	hl, err := homeLinks(ws, multi)
	if err != nil {
		return nil, err
	}
	// HOME's links lead by the directories above them too (leads.under:
	// ~/.mozilla/firefox/abc.default -> ~/sync/profile under
	// **/.mozilla/firefox/*/logins.json, red team round 18, R18a-10).
	home := jail.HomeDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	for _, p := range hl {
		v := ws.NameNarrowing(p) & (jail.NarrowDenied | jail.NarrowPrivateKey)
		var err error
		switch {
		case v != 0:
			err = lk.target(p, v)
		case linkLeads(p, home, multi):
			// ~/.kube -> dotfiles/kube under **/.kube/config: what is
			// below the target is matched by the names through the link.
			err = lk.homeTree(p)
		}
		if err != nil {
			return nil, err
		}
	}
	// The links in the four directories above each root: app/.env ->
	// settings/production names a file of the workspace app/settings
	// (red team round 15, R15a-18; --learn looks there too, R13-1).
	above := map[string]bool{}
	for _, root := range roots {
		for d, i := filepath.Dir(root), 0; i < 4 && d != root; d, i = filepath.Dir(d), i+1 {
			if !above[d] {
				above[d] = true
				if err := lk.above(d); err != nil {
					return nil, err
				}
			}
			if d == "/" {
				break
			}
		}
	}
	setID := setIDCarver(ws, add)
	for _, root := range roots {
		err := keys.walk(&conf, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				switch {
				case p == root:
					return err
				case errors.Is(err, fs.ErrNotExist):
					return nil // removed during the walk
				case errors.Is(err, fs.ErrPermission):
					if keys.ownUnlistable(p) {
						return fmt.Errorf("%w: %s is the command's own directory and cannot be listed (its mode refuses it): a link in it to a denied or read-only path would be missed, and the command may make it listable again; restore its mode (chmod u+rx)", ErrNotEnforceable, termsafe.Quote(p))
					}
					add(carve{path: p, source: SourceUnlistable, exists: true})
					return nil
				}
				return err
			}
			if p == root {
				return nil
			}
			if seen.Add(1) > int64(limit) {
				return fmt.Errorf("%w: more than %d entries below %s; a pattern could match beyond them, so nothing is run (raise Options.WalkLimit; landjail: --walk-limit N)", ErrWalkLimit, limit, root)
			}
			typ := d.Type()
			// Entries of the root get the full match (their parents lie
			// above the root); deeper ones only their own level, their
			// parents having been matched when the walk met them.
			parent := filepath.Dir(p)
			var n jail.Narrowing
			if parent == root {
				n = ws.Narrowing(p)
			} else {
				n = ws.EntryNarrowing(p)
			}
			if typ&fs.ModeSymlink != 0 {
				// No rule names a link itself; but the kernel reads
				// through it, so what a denied or read-only name (or
				// one below a read-only directory) leads to in the
				// policy gets that name's verdict (red team round 9,
				// R9-3: .env -> settings/production, a denied secrets
				// -> vault, a --read-only name that is a link).
				_, roParent := roDirs.Load(filepath.Dir(p))
				v := verdictOf(n, roParent)
				if v != 0 {
					if err := lk.target(p, v); err != nil {
						return err
					}
					if v&jail.NarrowDenied != 0 {
						return nil
					}
					// A read-only or private-key verdict is the
					// target's own rule; the deny patterns below it
					// by this name are matched by the walk by name
					// (red team round 20, R20a-4: --deny
					// config/prod.key --read-only config/ with config
					// -> conf.d read prod.key).
					into, err := lk.intoWritable(p)
					if err != nil {
						return err
					}
					if linkLeads(p, root, multi) || v&jail.NarrowPrivateKey != 0 || into {
						return lk.tree(p, p)
					}
					return nil
				}
				// A directory link whose name a pattern with several
				// components goes through (config -> conf.d under
				// --deny config/prod.key, a stowed .kube): what is
				// below its target is matched by the names through it.
				// So is one into a directory the ruleset lets the
				// command write outside the roots (intoWritable).
				into, err := lk.intoWritable(p)
				if err != nil {
					return err
				}
				if linkLeads(p, root, multi) || into {
					return lk.tree(p, p)
				}
				return nil
			}
			_, roParent := roDirs.Load(parent)
			isDir := typ.IsDir()
			if isDir && (roParent || n&jail.NarrowReadOnly != 0) {
				roDirs.Store(p, true)
			}
			if n == 0 {
				if roParent {
					return nil
				}
				return setID(p, typ)
			}
			if n&jail.NarrowDenied != 0 {
				add(carve{path: p, source: SourceDenyPattern, exists: true})
				if isDir {
					// Its carve covers the names below it, not where
					// the links among them lead (red team round 10,
					// R10-1: .aws/credentials -> ../dotfiles/aws/credentials).
					if err := lk.below(p, jail.NarrowDenied); err != nil {
						return err
					}
					return fastwalk.SkipDir
				}
				return nil
			}
			if n&(jail.NarrowPrivateKey|jail.NarrowKeyHeaders) != 0 && !isDir && keys.holdsKey(p, typ, n) {
				add(carve{path: p, source: SourcePrivateKey, exists: true})
				return nil
			}
			if n&jail.NarrowReadOnly != 0 && !roParent {
				src := SourceReadOnly
				if n&jail.NarrowAgentConfig != 0 {
					src = SourceAgentConfig // AgentConfigNestedPatterns
				}
				add(carve{path: p, access: RightsReadExec, source: src, exists: true})
				return nil
			}
			if roParent {
				return nil
			}
			return setID(p, typ)
		})
		if err != nil {
			return nil, err
		}
	}
	more, err := hardLinkCarves(roots, lk.writableCanon(), out, limit, keys)
	if err != nil {
		return nil, err
	}
	out = append(out, more...)
	// The private TMPDIR's .shm is also the view's /dev/shm: a carve or
	// mask of one name would leave the other readable (red team round
	// 26's verification, R26e-1; grantedTarget refuses a denied link
	// there by name, this any carve: a file a link's name reaches
	// through a directory, a hard link's other name).
	for _, g := range lk.grantedCanon() {
		shm := filepath.Join(g, ".shm")
		for _, c := range out {
			if c.path == shm || within(c.path, shm) {
				return nil, fmt.Errorf("%w: %s, denied or read-only by the policy, is in %s, which the command also sees as /dev/shm: its verdict cannot be carved at both names; remove it or the link that leads there", ErrNotEnforceable, termsafe.Quote(c.path), termsafe.Quote(shm))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// setIDCarver returns the walk's look at a regular file p it meets (typ:
// its type from the directory listing) when ws protects set-ID programs
// (jail.Workspace.ProtectsSetID): one that is a set-ID or
// file-capability program (internal/setid: an lstat, and a getxattr for
// an executable file) in a root that grants writing, and not in a
// read-only root nested in it, is carved out read-only
// (SourceSetID), with the execute right where its root grants it. One
// that cannot be examined is carved too (fail closed); one removed
// meanwhile is not. Without the protection it does nothing.
func setIDCarver(ws *jail.Workspace, add func(carve)) func(p string, typ fs.FileMode) error {
	if !ws.ProtectsSetID() {
		return func(string, fs.FileMode) error { return nil }
	}
	roots := ws.Roots()
	return func(p string, typ fs.FileMode) error {
		if !typ.IsRegular() {
			return nil
		}
		var deepest *jail.AllowedRoot
		for i := range roots {
			if within(p, roots[i].Path) && (deepest == nil || len(roots[i].Path) > len(deepest.Path)) {
				deepest = &roots[i]
			}
		}
		if deepest == nil || !deepest.Mode.Allows(jail.Write) {
			return nil
		}
		is, err := setid.Path(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if is || err != nil {
			access := RightsRead
			if deepest.Mode.Allows(jail.Execute) {
				access = RightsReadExec
			}
			add(carve{path: p, access: access, source: SourceSetID, exists: true})
		}
		return nil
	}
}

// hardLinkCarves gives every other name of a carved regular file with
// several hard links the carve of that file: the content a pattern
// denies (or makes read-only) by one name is the same by every name
// (red team round 26, R26c-1: a command made .env, not yet denied, and
// the hard link .cache/x; the user filled .env in place, as editors and
// `>` do; the next run read the secret as .cache/x in every layer). The
// carved files are lstat'ed (one call each), and the files below a
// carved directory (a walk of it: denied, R26e-2; read-only, R26e-2's
// read-only half: --read-only conf/ with conf/deploy.sh linked as
// tools/x); only when one has st_nlink > 1 are the roots walked again,
// each regular file lstat'ed and matched by device and inode. When the
// roots do not hold all st_nlink names of such a file, the directories
// granted outside them where the command can make a link (writable:
// canonical; the private HOME and TMPDIR kept between runs) are walked
// too (R26e-7: run 1 made $HOME/stash, its hard link $HOME/s2 and .env
// -> $HOME/stash; the user filled .env; run 2 read $HOME/s2). A name
// anywhere else is out of the command's reach or not of its making
// (README). limit bounds the entries walked (ErrWalkLimit).
func hardLinkCarves(roots, writable []string, carves []carve, limit int, keys *keyScan) ([]carve, error) {
	type ident struct{ dev, ino uint64 }
	type file struct {
		c     carve
		nlink uint64
		names map[string]bool // the names met by the walks
	}
	linked := map[ident]*file{}
	note := func(c carve, st *syscall.Stat_t) {
		id := ident{uint64(st.Dev), st.Ino}
		if prev, ok := linked[id]; ok {
			if deniedSource(c.source) && !deniedSource(prev.c.source) {
				prev.c = c // a denied name wins over a read-only one
			}
			return
		}
		linked[id] = &file{c: c, nlink: uint64(st.Nlink), names: map[string]bool{}}
	}
	var (
		mu   sync.Mutex
		out  []carve
		seen atomic.Int64
	)
	conf := fastwalk.Config{Follow: false}
	for _, c := range carves {
		if !c.exists || !(deniedSource(c.source) || readOnlySource(c.source)) {
			continue
		}
		var st syscall.Stat_t
		if syscall.Lstat(c.path, &st) != nil {
			continue
		}
		switch st.Mode & syscall.S_IFMT {
		case syscall.S_IFREG:
			if st.Nlink > 1 {
				note(c, &st)
			}
		case syscall.S_IFDIR:
			// The files below a carved directory (.aws/credentials
			// under .aws/) are carved by it, not one by one: their
			// other names too.
			err := keys.walk(&conf, c.path, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				if seen.Add(1) > int64(limit) {
					return fmt.Errorf("%w: more than %d entries below %s looking for hard-linked files (raise Options.WalkLimit; landjail: --walk-limit N)", ErrWalkLimit, limit, c.path)
				}
				var fst syscall.Stat_t
				if syscall.Lstat(p, &fst) == nil && fst.Nlink > 1 {
					mu.Lock()
					note(carve{path: p, access: c.access, source: c.source, exists: true}, &fst)
					mu.Unlock()
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if len(linked) == 0 {
		return nil, nil
	}
	walked := map[string]bool{}
	var unseen string // a directory a walk could not examine
	walk := func(dir, what string) error {
		walked[dir] = true
		seen.Store(0)
		return keys.walk(&conf, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					mu.Lock()
					if unseen == "" {
						why := err
						var en syscall.Errno
						if errors.As(err, &en) {
							why = en
						}
						unseen = fmt.Sprintf("%s (%v)", termsafe.Quote(shortPath(p)), why)
					}
					mu.Unlock()
				}
				return nil
			}
			if seen.Add(1) > int64(limit) {
				return fmt.Errorf("%w: more than %d entries below %s looking for the other names of a hard-linked carved file (%s; raise Options.WalkLimit; landjail: --walk-limit N)", ErrWalkLimit, limit, dir, what)
			}
			if d.IsDir() && p != dir && walked[p] {
				return fastwalk.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			var st syscall.Stat_t
			if syscall.Lstat(p, &st) != nil || st.Nlink < 2 {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			f, ok := linked[ident{uint64(st.Dev), st.Ino}]
			if !ok || f.names[p] {
				return nil
			}
			f.names[p] = true
			if f.c.path != p {
				out = append(out, carve{path: p, access: f.c.access, source: f.c.source, exists: true})
			}
			return nil
		})
	}
	for _, root := range roots {
		if err := walk(root, "the policy's roots"); err != nil {
			return nil, err
		}
	}
	missing := func() bool {
		for _, f := range linked {
			if uint64(len(f.names)) < f.nlink {
				return true
			}
		}
		return false
	}
	for _, dir := range writable {
		if !missing() {
			break
		}
		if dir == "/" || slices.ContainsFunc(roots, func(r string) bool { return dir == r || within(dir, r) || within(r, dir) }) {
			continue // walked with the roots, or holding one
		}
		if err := walk(dir, "a directory the command may write outside the roots"); err != nil {
			return nil, err
		}
	}
	// A name not found where a walk could not look (a directory made
	// unlistable, a path past PATH_MAX) may be the command's: refused
	// (red team round 27, R27d-1: the hard link of the carved
	// $HOME/stash 5,000 bytes deep in the private HOME, or below a
	// chmod 000 directory of a non-root user's, read the secret).
	if unseen != "" && missing() {
		for _, f := range linked {
			if uint64(len(f.names)) < f.nlink {
				return nil, fmt.Errorf("%w: %s has %d hard links, and %d of them were not found where the command can make one; %s could not be examined, so nothing is run (make it readable, or remove the other names: find / -xdev -samefile %s)", ErrNotEnforceable, termsafe.Quote(f.c.path), f.nlink, f.nlink-uint64(len(f.names)), unseen, termsafe.Quote(f.c.path))
			}
		}
	}
	return out, nil
}

// shortPath is p for a message: a path of more than 160 bytes keeps its
// first 100 and last 50, "..." between them.
func shortPath(p string) string {
	if len(p) <= 160 {
		return p
	}
	return p[:100] + "..." + p[len(p)-50:]
}

// DeniedPaths returns what the carve walk of ws's policy denies and
// makes read-only (canonical, absolute): the paths its deny, read-only
// and private-key patterns match, and what they name through symbolic
// links (the target of a denied name that is a link; an entry named by
// a pattern through a directory link). For jail.Workspace.DenyPaths,
// so that in-process checks agree with the Landlock rules and the
// namespace view of the same policy (red team round 9, R9-3). It walks
// ws's roots (give it the policy without the system preset); nil, nil
// when the policy has no such pattern. limit as Options.WalkLimit (0:
// DefaultWalkLimit). Errors: ErrWalkLimit, and the walk's.
func DeniedPaths(ws *jail.Workspace, limit int) (denied, readOnly []string, err error) {
	if len(ws.DenyPatterns()) == 0 && len(ws.ReadOnlyPatterns()) == 0 && len(ws.PrivateKeyPatterns()) == 0 && !ws.PrivateKeyHeaders() {
		return nil, nil, nil
	}
	if limit <= 0 {
		limit = DefaultWalkLimit
	}
	var roots []Rule
	for _, r := range ws.Roots() {
		roots = append(roots, Rule{Path: r.Path})
	}
	carves, err := walkCarves(ws, topRoots(roots), limit)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range carves {
		switch {
		case deniedSource(c.source):
			denied = append(denied, c.path)
		case readOnlySource(c.source):
			readOnly = append(readOnly, c.path)
		}
	}
	return denied, readOnly, nil
}

// deniedSource and readOnlySource say which carve sources deny a path
// and which make it read-only (DeniedPaths, Report.DeniedPaths).
func deniedSource(s string) bool { return s == SourceDenyPattern || s == SourcePrivateKey }
func readOnlySource(s string) bool {
	return s == SourceReadOnly || s == SourceAgentConfig || s == SourceSetID
}

// DeniedPaths is DeniedPaths' answer from a compiled Ruleset's report,
// with no second walk: what the namespace view masks or mounts
// read-only (Masks, ReadOnlyMounts but "/") and what Landlock-only
// carves out (CarveOuts, by source). For jail.Workspace.DenyPaths, so
// that in-process checks (landjail-mcp's file tools) agree with the
// children's rules of the same compile (red team rounds 9 and 10).
func (r *Report) DeniedPaths() (denied, readOnly []string) {
	denied = slices.Clone(r.Masks)
	for _, m := range r.ReadOnlyMounts {
		if m != "/" {
			readOnly = append(readOnly, m)
		}
	}
	for _, c := range r.CarveOuts {
		switch {
		case deniedSource(c.Source):
			denied = append(denied, c.Path)
		case readOnlySource(c.Source):
			readOnly = append(readOnly, c.Path)
		}
	}
	return denied, readOnly
}

// leads are what makes a directory link lead a pattern through it
// (linkLeads).
type leads struct {
	// names: the components but the last of every deny, read-only and
	// private-key pattern with more than one component (a wildcard-only
	// one left out).
	names []string
	// under: each literal component followed by a wildcard-only one
	// ("config" of config/*/secret.txt and config/**/secret.txt).
	under []string
	// top: the most leading "*"-only components of a pattern
	// (*/config/master.key: 1): a directory link that many levels or
	// fewer below a root leads (red team round 18, R18a-4: web ->
	// services/web was read by both names).
	top int
	// depth: the most components of a pattern ("**" not counted): how
	// many levels below a name outside walks (outside).
	depth int
	// roots are the policy's roots: top counts from each that holds the
	// link (a pattern is matched relative to every root holding a path:
	// R12-7; red team round 18, R18a-15).
	roots []string
}

// multiComponentPatterns returns the leads of ws's patterns: a
// directory link named like a component of a pattern with several
// components can make a path match the pattern that the link's target,
// walked where it is, does not (red team round 9, R9-3). A pattern of
// one name matches the target's entries where they are. A component
// that is only a wildcard ("*" in .git/worktrees/*/config) would send
// every directory link of the tree through a walk of its target (red
// team R10-4: a pnpm node_modules): only the links below a directory
// named like the literal component before it lead (under; red team
// round 17, R17a-6: config/prod -> ../deploy/prod under --deny
// 'config/*/secret.txt' was read by both names).
func multiComponentPatterns(ws *jail.Workspace) leads {
	var out leads
	for _, r := range ws.Roots() {
		out.roots = append(out.roots, r.Path)
	}
	for _, set := range [][]string{ws.DenyPatterns(), ws.ReadOnlyPatterns(), ws.PrivateKeyPatterns()} {
		for _, p := range set {
			p = strings.Trim(strings.TrimPrefix(p, "!"), "/")
			comps := strings.Split(p, "/")
			lead := 0
			for i, c := range comps[:len(comps)-1] {
				// git's negated class "[!a]" is filepath.Match's "[^a]"
				// (red team round 18, R18a-12).
				c = strings.ReplaceAll(c, "[!", "[^")
				if strings.Trim(c, "*?") != "" {
					out.names = append(out.names, c)
				} else if i > 0 && strings.Trim(comps[i-1], "*?") != "" {
					out.under = append(out.under, strings.ReplaceAll(comps[i-1], "[!", "[^"))
				}
				if c != "**" && strings.Trim(c, "*?") == "" && lead == i {
					lead = i + 1
				}
			}
			out.top = max(out.top, lead)
			out.depth = max(out.depth, len(comps)-strings.Count("/"+p+"/", "/**/"))
		}
	}
	return out
}

// outsideLeads is linkLeads for a directory out of the policy (outside,
// above): its name, or an editor copy's original, is a literal component
// of a pattern (.kube, gh), or its parent's name is one followed by a
// wildcard-only component (firefox of .mozilla/firefox/*/logins.json).
// A component with a wildcard in it ("[!a]*" of cfg/[!a]*/secret.txt)
// matches nearly every name: out of the policy it would send the walk
// through /tmp and HOME (CI on a fresh runner: 4,096 directories of /tmp
// walked, ErrLinkNames).
func outsideLeads(p string, l leads) bool {
	base := filepath.Base(p)
	for _, name := range append([]string{base}, jail.CopySpellings(base)...) {
		if slices.Contains(l.names, name) {
			return true
		}
	}
	parent := filepath.Base(filepath.Dir(p))
	return slices.ContainsFunc(l.under, func(u string) bool { ok, _ := filepath.Match(u, parent); return ok })
}

// linkLeads reports whether the link p leads a pattern through it: its
// name matches one of l.names, or (root given: p is below it) it lies at
// most l.top levels below root, or a directory between root and p is
// named like one of l.under.
func linkLeads(p, root string, l leads) bool {
	// By the names an editor's copy spells too: a .kube.bak link is
	// matched as .kube is (red team round 20, R20a-5).
	for _, name := range append([]string{filepath.Base(p)}, jail.CopySpellings(filepath.Base(p))...) {
		for _, c := range l.names {
			if ok, _ := filepath.Match(c, name); ok {
				return true
			}
		}
	}
	if root == "" {
		return false
	}
	for _, r := range append([]string{root}, l.roots...) {
		if rel, ok := strings.CutPrefix(p, r+"/"); ok && strings.Count(rel, "/") < l.top {
			return true
		}
	}
	if len(l.under) == 0 {
		return false
	}
	// The root itself too: a pattern spelled from it (./*/x, $PWD/*/x:
	// the root's path, then a wildcard) leads the links right below it
	// (red team round 18, R18a-4).
	for d := filepath.Dir(p); d == root || strings.HasPrefix(d, root+"/"); d = filepath.Dir(d) {
		for _, c := range l.under {
			if ok, _ := filepath.Match(c, filepath.Base(d)); ok {
				return true
			}
		}
		if d == root {
			break
		}
	}
	return false
}

// homeTree carves what is below the target of the directory link of
// HOME link, in the policy or a root itself, by the names through the
// link (jail.Workspace.NameNarrowing): denied, or a private key. A root
// that ~/.kube or ~/.config leads to keeps what no name denies, but not
// kube/config or gh/hosts.yml (red team round 15, R15a-6: the workspace
// was the target). Counted toward the walk's limit; each target walked
// once.
func (l *links) homeTree(link string) error { return l.drain(l.homeTreeFirst(link)) }

// homeTreeFirst is homeTree's first walk; the walks of links met in it
// are queued.
func (l *links) homeTreeFirst(link string) error {
	t, err := filepath.EvalSymlinks(link)
	if err != nil {
		return nil
	}
	if fi, err := os.Stat(t); err != nil || !fi.IsDir() {
		return nil
	}
	if l.inPolicy(t) || slices.Contains(l.roots, t) {
		return l.homeWalk(t, link, l.ws.NameNarrowing(link), noKey)
	}
	// Roots below the target (--ro ~/dotfiles/config/gh with ~/.config ->
	// dotfiles/config), each by its name through the link (red team
	// round 16, R16-6: gh/hosts.yml read in clear).
	for _, r := range l.roots {
		if strings.HasPrefix(r, t+"/") {
			v := link + r[len(t):]
			if err := l.homeWalk(r, v, l.ws.NameNarrowing(v), noKey); err != nil {
				return err
			}
		}
	}
	return l.outside(t, link, true)
}

// holdsRoot reports whether the directory t is a root or holds one (or
// is "/"): what is below it is the policy's own walk's, and it may be
// HOME or the file system.
func (l *links) holdsRoot(t string) bool {
	return t == "/" || slices.ContainsFunc(l.roots, func(r string) bool { return within(r, t) })
}

// outside walks the directory t, outside the policy, reached by the name
// virtual (matched by NameNarrowing with byName, else by Narrowing)
// through a link or a directory whose name leads a pattern. No entry of
// t is a file of the policy, but a link in it may lead into the policy,
// and gives its target the verdict of its name through virtual (red team
// round 22, R22a-2: ~/.config -> sync/config, sync/config/gh ->
// ../../sync2/gh, sync2/gh/hosts.yml -> ../../dotfiles/private/gh-hosts.yml
// read in clear; R22a-3, R22a-5). A directory in it, or a directory link
// out of the policy, is walked the same way by its name while that name
// leads a pattern (linkLeads), whole (below) where it is denied; a
// directory link into the policy is walked as walkTree and homeWalk walk
// one. Once per directory and key (enter: ErrLinkNames past MaxLinkNames);
// nothing in t is carved. A directory that is or holds a root is left to
// the policy's own walk.
func (l *links) outside(t, virtual string, byName bool) error {
	return l.outsideDepth(t, virtual, byName, 0)
}

// pseudoFS are the file systems outside walks never enters: their links
// are the kernel's (/proc/self/cwd), not the user's.
var pseudoFS = []string{"/proc", "/sys", "/dev"}

// outsideDepth is outside at depth levels below the first directory out
// of the policy; it goes no deeper than the policy's longest pattern
// (leads.depth): a name no pattern can match below does not lead (red
// team round 18's R18a-12 row: "cfg/[!a]*/secret.txt" leads through
// nearly every name).
func (l *links) outsideDepth(t, virtual string, byName bool, depth int) error {
	if l.holdsRoot(t) || depth >= l.multi.depth || slices.ContainsFunc(pseudoFS, func(p string) bool { return within(t, p) }) {
		return nil
	}
	narrow := l.ws.Narrowing
	if byName {
		narrow = l.ws.NameNarrowing
	}
	id := l.memo.intern("outside", l.ws.BelowKey(virtual, byName))
	if ok, err := l.enter("outside", t, id); !ok {
		return err
	}
	if !l.keys.listable(t) {
		return nil // unreadable to the command: as below
	}
	ents, err := os.ReadDir(t)
	if err != nil {
		return nil // unreadable: no link of it is read either
	}
	for _, e := range ents {
		if err := l.count(virtual); err != nil {
			return err
		}
		p, v := filepath.Join(t, e.Name()), virtual+"/"+e.Name()
		n := narrow(v)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			if vd := verdictOf(n, false); vd != 0 {
				if err := l.target(p, vd); err != nil {
					return err
				}
				if vd&jail.NarrowDenied != 0 {
					continue
				}
			}
			tt, err := l.resolve(p)
			if err != nil || !l.isDir(tt) || !outsideLeads(v, l.multi) {
				continue
			}
			l.later(func() error {
				switch {
				case !l.inPolicy(tt) && !slices.Contains(l.roots, tt):
					return l.outsideDepth(tt, v, byName, depth+1)
				case byName:
					return l.homeWalk(tt, v, n, noKey)
				default:
					return l.walkTreeDir(tt, v, n, noKey)
				}
			})
		case e.IsDir():
			if n&jail.NarrowDenied != 0 {
				if err := l.below(p, jail.NarrowDenied); err != nil {
					return err
				}
				continue
			}
			if outsideLeads(v, l.multi) {
				l.later(func() error { return l.outsideDepth(p, v, byName, depth+1) })
			}
		}
	}
	return nil
}

// homeWalk is homeTree's walk of the directory t, named virtual through
// HOME's link: each entry is carved by NameNarrowing(virtual + its path
// below t). Each directory is walked once by each name (enter): a decoy
// link the command planted beside the user's (dotfiles/config/aa ->
// ../private/gh, or in another HOME link's target) must not spare the
// user's name (red team round 19, R19-1).
func (l *links) homeWalk(t, virtual string, top jail.Narrowing, id int) error {
	if carried != nil {
		carried(l.ws, virtual, top, true)
	}
	if id == noKey {
		id = l.memo.intern("home", l.ws.BelowKeyOf(virtual, top))
	}
	if ok, err := l.enter("home", t, id); !ok {
		return err
	}
	// t itself, when it is a root below the target, by its own name
	// (~/.config/gcloud/ granted as --ro dotfiles/config/gcloud).
	if top&jail.NarrowDenied != 0 && slices.Contains(l.roots, t) && !within(l.ws.Root(), t) {
		l.add(carve{path: t, source: SourceDenyPattern, exists: true})
		return nil
	}
	// Each entry by its name at its own level, as walkTreeDir's (red
	// team round 21, R21-1), but whole below a denied name.
	narrow := l.ws.NameEntryNarrowing
	if top&jail.NarrowDenied != 0 {
		narrow = l.ws.NameNarrowing
	}
	conf := fastwalk.Config{Follow: false}
	return l.keys.walk(&conf, t, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == t {
			return nil
		}
		if err := l.count(virtual); err != nil {
			return err
		}
		n := narrow(virtual + p[len(t):])
		typ := d.Type()
		if typ&fs.ModeSymlink != 0 {
			// No rule names a link; what it leads to gets the name's
			// verdict (red team round 15, R15a-15: config/gh/hosts.yml
			// -> ../../secrets/gh-hosts.yml below ~/.config ->
			// dotfiles/config read in clear, and the namespace view
			// failed to mask the link itself).
			if v := n & (jail.NarrowDenied | jail.NarrowPrivateKey); v != 0 {
				return l.target(p, v)
			}
			// A directory link inside the target (dotfiles/config/gh ->
			// ../private/gh) is walked by the names through both links
			// (red team round 18, R18a-18: ~/.config/gh/hosts.yml read).
			if tt, err := l.resolve(p); err == nil && (l.inPolicy(tt) || slices.Contains(l.roots, tt)) {
				if fi, err := os.Stat(tt); err == nil && fi.IsDir() {
					v, rel := virtual+p[len(t):], p[len(t):]
					l.later(func() error {
						return l.homeWalk(tt, v, n, l.memo.step("home", id, rel, func() string { return l.ws.BelowKeyOf(v, n) }))
					})
					return nil
				}
			}
			return nil
		}
		switch {
		case n&jail.NarrowDenied != 0:
			l.add(carve{path: p, source: SourceDenyPattern, exists: true})
			if typ.IsDir() {
				if err := l.below(p, jail.NarrowDenied); err != nil {
					return err
				}
				return fastwalk.SkipDir
			}
		case n&jail.NarrowPrivateKey != 0 && typ&fs.ModeSymlink == 0 && !typ.IsDir() && l.keys.holdsKey(p, typ, n):
			l.add(carve{path: p, source: SourcePrivateKey, exists: true})
		}
		return nil
	})
}

// HomeLinks returns the symbolic links in HOME (and $XDG_CONFIG_HOME)
// that the carve walk of a policy built from ws looks at: homeLinks with
// ws's patterns. For --learn's check of a path by the names HOME gives
// it (red team round 15, R15a-5). Errors: ErrWalkLimit, as DeniedPaths.
func HomeLinks(ws *jail.Workspace) ([]string, error) {
	return homeLinks(ws, multiComponentPatterns(ws))
}

// homeLinks returns the symbolic links in HOME and, down to four
// levels, in its hidden directories (not its caches and package stores;
// below their second level only in directories a pattern of ws, or one
// of multi's components, can still lead through), and in
// $XDG_CONFIG_HOME as in ~/.config wherever it is (red team round 15,
// R15a-3): what a stowed or dotbot-linked dotfiles repository puts into
// HOME (~/.aws, ~/.config/gh, ~/.docker/config.json, ~/.ssh/keys/deploy:
// red team rounds 13 and 14, R13-5, R14-1). Directories the command can
// write (at or below a ReadWrite root) are not read: their links are the
// main walk's, and what the command puts there must not use up the scan
// (R15a-1: padding in a ~/.dotfiles workspace hid ~/.kube/config). At
// most maxHomeLinkScan directories and links are counted in all; more
// fail closed with ErrHomeScanLimit (a link beyond them would lead a
// denied name into the policy unseen).
// homeScanDepth is how many levels below HOME homeLinks reads, below the
// second only where a pattern can still lead (deeper): the preset names
// files seven and eight levels down (a Flatpak's
// ~/.var/app/org.mozilla.firefox/.mozilla/firefox/x.default/logins.json;
// five levels left them unseen: red team round 22, R22a-8).
const homeScanDepth = 10

func homeLinks(ws *jail.Workspace, multi leads) ([]string, error) {
	var err error
	home := jail.HomeDir() // the user database's entry where HOME is unset (R16-16)
	if home == "" {
		return nil, nil
	}
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	var writable []string
	for _, r := range ws.Roots() {
		if r.Mode == jail.ReadWrite {
			writable = append(writable, r.Path)
		}
	}
	isWritable := func(p string) bool {
		for _, r := range writable {
			if p == r || strings.HasPrefix(p, r+"/") || r == "/" {
				return true
			}
		}
		return false
	}
	if isWritable(home) {
		return nil, nil // HOME is the command's: the main walk's links
	}
	var out []string
	seen := map[string]bool{}
	found := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	budget := maxHomeLinkScan
	lead := map[string]bool{}
	for _, c := range multi.names {
		lead[c] = true
	}
	// deeper reports whether a directory below the second level of a
	// hidden directory of HOME (the first of $XDG_CONFIG_HOME) is read:
	// only where a pattern can still match (a component of one, or a
	// denied directory): a perf .debug/.build-id tree of 250 directories
	// cost 2.7 ms at every start under --deny-secrets.
	under := map[string]bool{}
	for _, c := range multi.under {
		under[c] = true
	}
	deeper := func(p string) bool {
		// A directory at a pattern's wildcard level too (~/.mozilla/
		// firefox/abc.default under **/.mozilla/firefox/*/logins.json:
		// a file link inside it, red team round 19, R19-9).
		for _, n := range append([]string{filepath.Base(p)}, jail.CopySpellings(filepath.Base(p))...) {
			if lead[n] { // a copy's name too (.kube.bak, R20a-5)
				return true
			}
		}
		return under[filepath.Base(filepath.Dir(p))] || ws.NameNarrowing(p)&jail.NarrowDenied != 0
	}
	err = linkscan.Walk(home, homeScanDepth, &budget, func(p string, level int) bool {
		name := filepath.Base(p)
		switch {
		case homeSkip[name] || isWritable(p):
			return false
		case level == 1:
			return strings.HasPrefix(name, ".") // HOME's hidden directories
		case level == 2 && !inCache(p):
			return true // and what is directly in them (~/.ssh/keys, ~/.config/gh)
		}
		return deeper(p)
	}, found)
	xdg := ""
	// $XDG_CONFIG_HOME wherever it is, as ~/.config; a moved
	// $XDG_DATA_HOME and $XDG_STATE_HOME as ~/.local/share and
	// ~/.local/state: their own entries, and below them where a pattern
	// leads (the preset's names are denied there: red team round 20,
	// R20a-2, a stowed keyrings/login.keyring link in a moved
	// XDG_DATA_HOME was never seen).
	for _, x := range []struct {
		env, dflt string
		config    bool
	}{{"XDG_CONFIG_HOME", ".config", true}, {"XDG_DATA_HOME", ".local/share", false}, {"XDG_STATE_HOME", ".local/state", false}} {
		v := os.Getenv(x.env)
		if err != nil || !filepath.IsAbs(v) {
			continue
		}
		c, e := filepath.EvalSymlinks(v)
		if e != nil || c == filepath.Join(home, x.dflt) || isWritable(c) {
			continue
		}
		if fi, e := os.Stat(c); e != nil || !fi.IsDir() {
			continue
		}
		if x.config {
			xdg = c
		}
		err = linkscan.Walk(c, homeScanDepth-1, &budget, func(p string, level int) bool {
			switch {
			case homeSkip[filepath.Base(p)] || isWritable(p):
				return false
			case level == 1 && x.config:
				return true // ~/.config/gh's place
			}
			return deeper(p)
		}, found)
	}
	// A directory of HOME that is a link out of the policy (~/.config
	// -> /data/config, moved to another disk; ~/.config -> ~/.xdgreal):
	// its links are read through the link, by the names HOME gives them
	// (red team round 15, R15a-10: ~/.config/gh/hosts.yml ->
	// ~/dotfiles/gh/hosts.yml there was never seen). A link into the
	// policy is homeTree's; links found this way are not followed again.
	inRoot := func(t string) bool {
		for _, r := range ws.Roots() {
			if t == r.Path || strings.HasPrefix(t, r.Path+"/") || r.Path == "/" {
				return true
			}
		}
		return false
	}
	followed := map[string]bool{}
	for _, l := range slices.Clone(out) {
		if err != nil {
			break
		}
		level := 0 // of l, as HOME's walk counts it
		if rel, ok := strings.CutPrefix(l, home+"/"); ok {
			level = strings.Count(rel, "/") + 1
		} else if rel, ok := strings.CutPrefix(l, xdg+"/"); ok && xdg != "" {
			level = strings.Count(rel, "/") + 2
		}
		if level == 0 || level > 2 {
			continue
		}
		t, e := filepath.EvalSymlinks(l)
		if e != nil || followed[t] || inRoot(t) {
			continue
		}
		if fi, e := os.Stat(t); e != nil || !fi.IsDir() {
			continue
		}
		followed[t] = true
		err = linkscan.Walk(l, homeScanDepth-level, &budget, func(p string, lv int) bool {
			switch {
			case homeSkip[filepath.Base(p)]:
				return false
			case level+lv == 2 && !inCache(p):
				return true
			}
			return deeper(p)
		}, found)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: more than %d directories and links in HOME's configuration directories (stopped at %s); a symbolic link there could lead a denied name into the policy, so nothing is run (move that tree under ~/.cache, which is read only where a pattern leads)", ErrHomeScanLimit, maxHomeLinkScan, linkscan.StoppedAt(err, home))
	}
	return out, nil
}

// homeSkip are the directories of HOME homeLinks does not descend into:
// caches, package stores and repositories, large and not configuration.
var homeSkip = map[string]bool{
	".npm": true, "registry": true, ".rustup": true, "caches": true,
	"repository": true, "node_modules": true, ".git": true, "go": true, ".pyenv": true, ".nvm": true,
	".vscode-server": true, "pkg": true, "mod": true,
	// Not ~/.local/share or ~/.local/state: their own entries are read
	// (a stowed ~/.local/share/keyrings -> dotfiles/keyrings, red team
	// round 19, R19-5), below them only where a pattern leads (deeper).
	// Nor ~/.cache: its own entries are read (~/.cache/huggingface ->
	// /data/hf, a model cache moved to a data disk, R19-5's third
	// shape), below them only where a pattern leads (inCache).
}

// inCache reports whether the directory p is directly in a directory
// named .cache (~/.cache/pip): entered only where a pattern leads, not
// as the second level of HOME's other hidden directories is.
func inCache(p string) bool { return filepath.Base(filepath.Dir(p)) == ".cache" }

// maxHomeLinkScan bounds the links and entered directories homeLinks
// counts in all (linkscan: plain files and directories it does not enter
// are read, not counted, so that a command cannot trip it with them:
// R16-3). 199,000 entries of HOME's hidden directories took 0.1 s to
// read here (warm cache); only a HOME that holds such trees outside its
// caches and package stores (skipped) comes near it. A variable for
// tests.
var maxHomeLinkScan = 200_000

// links carves what symbolic links lead to on behalf of walkCarves (red
// team rounds 9 and 10, R9-3, R10-1): the target of a link a pattern
// names gets the name's verdict; a link inside a denied or read-only
// directory gives its target the directory's verdict (a stowed
// .aws/credentials -> ../dotfiles/aws/credentials); what a pattern with
// several components names through a directory link is carved where it
// is. Every directory it walks is walked once by each name it is reached
// by that the patterns tell apart (enter; a loop such as sub/.kube -> .
// ends when its names begin nothing new, red team R10-3), and every
// entry counts toward the main walk's limit.
type links struct {
	ws    *jail.Workspace
	roots []string
	// granted are the paths of the rules granted outside the policy's
	// roots (the system preset, presets, the private TMPDIR and HOME,
	// Extra): a denied link's target there is carved too
	// (grantedTarget). grantedCanon makes them canonical once, when a
	// denied link first needs it.
	granted      []string
	grantedCanon func() []string
	// writableCanon are the canonical paths of the granted rules with a
	// linkable right (writableDir, hardLinkCarves).
	writableCanon func() []string
	add           func(carve)
	seen          *atomic.Int64
	limit         int
	visited       sync.Map // directories walked here, by kind and key (enter)
	memo          keyMemo  // the keys of the names walks start from
	pendMu        sync.Mutex
	pending       []func() error // link walks queued (later)
	multi         leads          // what makes a link lead a pattern (linkLeads)
	keys          *keyScan
	// resolved memoises resolve: link path -> resolution (a chain of
	// links is followed once, not once per member: red team round 17,
	// R17b-5, 1 ms a link of a planted chain at every start).
	resolved sync.Map
	dirs     sync.Map // isDir's answers
	// belowLinks holds the link inodes below has met, by verdict and
	// directory: hard links of one symbolic link in one directory are
	// one link (red team round 23,
	// R23a-12: 3M of them in a denied .aws/ cost every later start 81 s
	// and 1.6 GB, resolved and memoised one path each).
	belowLinks sync.Map
	names      sync.Map     // directory -> *atomic.Int32, the keys it was entered by
	walks      atomic.Int64 // walks entered in all (enter; maxLinkWalks)
}

// ruleDirs are the directories of the rules a command may reach paths
// by: the policy's top roots and the granted rules outside them, as
// given and canonical (reaches).
func (l *links) ruleDirs() []string {
	out := append(slices.Clone(l.roots), l.granted...)
	return append(out, l.grantedCanon()...)
}

// resolution is one memoised resolve.
type resolution struct {
	path string
	err  error
}

// resolve is filepath.EvalSymlinks(p) for a link p whose directory is
// canonical (as the walk meets it), memoised by link: the link's target
// is taken a component at a time from p's directory while each directory
// on the way is a real one (so ".." is the physical parent and the
// result the same as EvalSymlinks'), and resolved again by the same
// function when it is a link itself; anything else (a link on the way, an
// absolute target, 40 links deep) is left to EvalSymlinks.
func (l *links) resolve(p string) (string, error) {
	// The directory as the kernel reads it: a caller may hand a path
	// through a link (homeLinks below ~/.config -> /data/config), where
	// ".." in the target is the physical parent (round 19's note).
	d, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	return l.resolveDepth(filepath.Join(d, filepath.Base(p)), 0)
}

// isDir reports whether the canonical path t is a directory, memoised
// (a target is reached by many walks begun through links to it).
func (l *links) isDir(t string) bool {
	if d, ok := l.dirs.Load(t); ok {
		return d.(bool)
	}
	fi, err := os.Stat(t)
	d := err == nil && fi.IsDir()
	l.dirs.Store(t, d)
	return d
}

func (l *links) resolveDepth(p string, depth int) (string, error) {
	if r, ok := l.resolved.Load(p); ok {
		return r.(resolution).path, r.(resolution).err
	}
	t, err := l.resolveOnce(p, depth)
	l.resolved.Store(p, resolution{t, err})
	return t, err
}

func (l *links) resolveOnce(p string, depth int) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return p, nil // the walk's paths have canonical directories
	}
	dest, err := os.Readlink(p)
	if err != nil || depth >= 40 || filepath.IsAbs(dest) {
		return filepath.EvalSymlinks(p)
	}
	cur := filepath.Dir(p)
	comps := strings.Split(dest, "/")
	for i, c := range comps {
		switch {
		case c == "" || c == ".":
			continue
		case c == "..":
			cur = filepath.Dir(cur)
			continue
		case i == len(comps)-1:
			return l.resolveDepth(filepath.Join(cur, c), depth+1)
		}
		next := filepath.Join(cur, c)
		if st, err := os.Lstat(next); err != nil || !st.IsDir() {
			return filepath.EvalSymlinks(p) // a link or a missing directory on the way
		}
		cur = next
	}
	return filepath.EvalSymlinks(p) // a target ending in "/", ".", ".."
}

// above gives the target of each symbolic link directly in dir (a
// directory above a root, outside the policy) the verdict of the link's
// name, denied or a private key; the links inside roots are the main
// walk's.
func (l *links) above(dir string) error {
	if !l.keys.listable(dir) {
		return nil // unreadable to the command: as below
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // unreadable: best effort, as --learn's look
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			// A real directory named by a pattern, holding a link into
			// the policy (proj/.kube/config -> ../app/private/kc above
			// the workspace proj/app: red team round 22, R22a-5).
			if l.holdsRoot(p) || l.inPolicy(p) {
				continue
			}
			var err error
			switch {
			case l.ws.NameNarrowing(p)&jail.NarrowDenied != 0:
				err = l.below(p, jail.NarrowDenied)
			case outsideLeads(p, l.multi):
				err = l.drain(l.outside(p, p, true))
			}
			if err != nil {
				return err
			}
			continue
		}
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if l.inPolicy(p) || slices.Contains(l.roots, p) {
			continue
		}
		if v := l.ws.NameNarrowing(p) & (jail.NarrowDenied | jail.NarrowPrivateKey); v != 0 {
			if err := l.target(p, v); err != nil {
				return err
			}
			if v&jail.NarrowDenied != 0 {
				continue
			}
		}
		// A directory link whose name leads a pattern (proj/.kube ->
		// app/k8s above the workspace proj/app): what is below its
		// target is matched by the names through it, as for HOME's
		// links (red team round 20, R20a-6).
		if linkLeads(p, "", l.multi) {
			if err := l.homeTree(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// inPolicy reports whether t lies inside one of the roots, and is not a
// root or above one (not a file of the policy to carve).
func (l *links) inPolicy(t string) bool {
	in := false
	for _, r := range l.roots {
		if t == r || strings.HasPrefix(r, t+"/") || t == "/" {
			return false
		}
		if strings.HasPrefix(t, r+"/") || r == "/" {
			in = true
		}
	}
	return in
}

// processDependent returns the first link on p's way (jail.LinkChain)
// that lies in /proc (/proc/self, /proc/thread-self, /proc/PID/cwd;
// /dev/fd and /dev/stdin lead there), or "": a link such as .env ->
// /proc/self/cwd/notes.txt leads, for the command, to a file of its
// working directory, and for landjail, resolving it, to one of its own
// (red team round 26, R26c-8: landjail started outside the workspace
// carved nothing, and the command read what the user had written
// through .env as notes.txt). The walk never enters /proc; a denied or
// read-only name leading there cannot be judged, so the policy is
// refused (fail closed).
func processDependent(p string) string {
	for _, l := range jail.LinkChain(p) {
		if l == "/proc" || strings.HasPrefix(l, "/proc/") {
			return l
		}
	}
	return ""
}

// inGranted reports whether t, canonical, lies in a rule granted
// outside the policy's roots (l.granted).
func (l *links) inGranted(t string) bool {
	if len(l.granted) == 0 || t == "/" {
		return false
	}
	for _, g := range l.grantedCanon() {
		if g == "/" || t == g || strings.HasPrefix(t, g+"/") {
			return true
		}
	}
	return false
}

// linkable are the rights that let the command make an entry (a file, a
// hard link, a directory) in a directory: a rule granting one of them
// outside the roots is where it can plant what a workspace link leads
// to (writableDir) or a file's second name (hardLinkCarves).
const linkable = golandlock.AccessFSSet(ll.AccessFSMakeReg | ll.AccessFSMakeDir)

// writableDir reports whether t, canonical, is a directory in a rule
// granted outside the roots with a linkable right (the private HOME and
// TMPDIR kept between runs, a preset's cache, an Extra rule), and
// neither is nor holds a root: what a workspace link leads to there is
// walked by the link's name, as a target in a root is (red team round
// 26's verification, R26e-4: run 1 made $HOME/cfg and config ->
// $HOME/cfg, the user wrote config/.env through it, run 2 read it by
// either name in every layer). Directories granted read-only outside
// the roots (the system preset's /usr, /etc/ssl/certs) are not: the
// command cannot make what is in them.
func (l *links) writableDir(t string) bool {
	if t == "/" || l.writableCanon == nil || l.holdsRoot(t) || l.inPolicy(t) {
		return false
	}
	in := slices.ContainsFunc(l.writableCanon(), func(g string) bool { return g != "/" && (t == g || within(t, g)) })
	return in && l.isDir(t)
}

// intoWritable reports whether the link p, met by a walk of the roots,
// leads to a writableDir. A relative link whose target, read and joined
// to its directory, lies in a root is not resolved (one readlink, not
// an lstat of every component: a pnpm tree's ten thousand links cost
// 85 ms more): a link out on its way is one of the roots' links, walked
// by its own name where it leads out, and what p's target is lies below
// that link's target.
func (l *links) intoWritable(p string) (bool, error) {
	if l.writableCanon == nil || len(l.writableCanon()) == 0 {
		return false, nil
	}
	dest, err := os.Readlink(p)
	if err != nil {
		return false, nil
	}
	// Joined lexically only where that is where the kernel goes: ".."
	// before every other component, from p's directory, canonical as
	// the walk met it (x/../inner with x -> $HOME/cfg/sub is
	// $HOME/cfg/inner, below no link's target in the roots).
	lexical := !filepath.IsAbs(dest)
	named := false
	for _, c := range strings.Split(dest, "/") {
		switch {
		case c == ".." && named:
			lexical = false
		case c != ".." && c != "." && c != "":
			named = true
		}
	}
	if lexical {
		dest = filepath.Join(filepath.Dir(p), dest)
		inWritable := slices.ContainsFunc(l.writableCanon(), func(g string) bool { return dest == g || within(dest, g) })
		if !inWritable && slices.ContainsFunc(l.roots, func(r string) bool { return dest == r || within(dest, r) }) {
			return false, nil
		}
	}
	t, err := l.resolve(p)
	if err != nil {
		if unresolvable(err) {
			return false, unresolvableErr(p, err)
		}
		return false, nil
	}
	return l.writableDir(t), nil
}

// unresolvable reports whether err, resolving a link, says where it
// leads cannot be told from here rather than that it leads nowhere: a
// path past PATH_MAX on its way (two short links in the private HOME
// whose canonical path is 4,300 bytes long: the kernel follows them
// component by component), or a directory landjail may not search that
// the command, its owner, can make searchable again. Taken for dangling,
// nothing was carved and .env, or config/.env below a link into the
// private HOME, was read (red team round 27, R27d-7). ENOENT, ENOTDIR and
// a loop do lead nowhere.
func unresolvable(err error) bool {
	return errors.Is(err, syscall.ENAMETOOLONG) || errors.Is(err, fs.ErrPermission)
}

// unresolvableErr is the refusal of the link p that unresolvable(err).
func unresolvableErr(p string, err error) error {
	why := err
	var en syscall.Errno
	if errors.As(err, &en) {
		why = en
	}
	return fmt.Errorf("%w: the symbolic link %s cannot be resolved by landjail (%v), so what it leads to cannot be judged; nothing is run (remove the link, or make its way shorter or searchable)", ErrNotEnforceable, termsafe.Quote(shortPath(p)), why)
}

// grantedTarget gives t, the target of a link named with verdict v that
// lies outside the policy's roots but in a rule the ruleset grants
// anyway (the private HOME or TMPDIR, a preset's or the system preset's
// directory), the link's verdict: carved like a target in a root
// (carveBelowOutside then carves the granting rule). The command could
// write there: .env -> HOME/stash planted by one run, the user's secret
// written through the link, read by the next (red team round 26,
// R26c-3). Only a regular file or a directory is carved: a device
// (.env -> /dev/null, a common way to disable a file) holds no secret,
// and refusing it would break the command; a target holding a policy
// root was handled by the caller.
func (l *links) grantedTarget(t string, v jail.Narrowing) error {
	for _, g := range l.grantedCanon() {
		if shm := filepath.Join(g, ".shm"); t == shm || strings.HasPrefix(t, shm+"/") {
			// The private TMPDIR's .shm is also the view's /dev/shm:
			// a carve or mask of one name left the other readable (red
			// team round 26, R26e-1). Refused, as a link through /proc.
			return fmt.Errorf("%w: a denied or read-only name is a link to %s, in %s, which the command also sees as /dev/shm: its verdict cannot be carved at both names; remove the link", ErrNotEnforceable, termsafe.Quote(t), termsafe.Quote(shm))
		}
	}
	fi, err := os.Lstat(t)
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) || l.holdsRoot(t) {
		return nil
	}
	l.carveAs(t, fi, v)
	return nil
}

// carveAs carves t (lstat'ed as fi) with the verdict v of a link's name:
// denied; a private key when t holds one; else read-only (agent
// configuration when v says so). It reports whether a directory t needs
// its links searched (below): not for a private key.
func (l *links) carveAs(t string, fi fs.FileInfo, v jail.Narrowing) bool {
	switch {
	case v&jail.NarrowDenied != 0:
		l.add(carve{path: t, source: SourceDenyPattern, exists: true})
	case v&jail.NarrowPrivateKey != 0:
		if fi.Mode().IsRegular() && l.keys.holdsKey(t, fi.Mode().Type(), jail.NarrowPrivateKey) {
			l.add(carve{path: t, source: SourcePrivateKey, exists: true})
		}
		return false
	default:
		src := SourceReadOnly
		if v&jail.NarrowAgentConfig != 0 {
			src = SourceAgentConfig
		}
		l.add(carve{path: t, access: RightsReadExec, source: src, exists: true})
	}
	return true
}

// count counts one entry toward the walk limit.
func (l *links) count(where string) error {
	if l.seen.Add(1) > int64(l.limit) {
		return fmt.Errorf("%w: more than %d entries walked (%s, through symbolic links); a pattern could match beyond them, so nothing is run (raise Options.WalkLimit; landjail: --walk-limit N)", ErrWalkLimit, l.limit, where)
	}
	return nil
}

// verdictOf is what a link's name (narrowing n, below a read-only
// directory when roParent) passes to its target: denied, a private key
// by name, read-only (with agent configuration), or 0. A head scan
// alone (NarrowKeyHeaders) is not one: the target is scanned where the
// walk meets it (red team R10-4: a pnpm tree's links each resolved).
func verdictOf(n jail.Narrowing, roParent bool) jail.Narrowing {
	switch {
	case n&jail.NarrowDenied != 0:
		return jail.NarrowDenied
	case n&jail.NarrowPrivateKey != 0:
		return jail.NarrowPrivateKey
	case n&jail.NarrowReadOnly != 0 || roParent:
		return jail.NarrowReadOnly | n&jail.NarrowAgentConfig
	}
	return 0
}

// target carves the target of the link p with verdict v (verdictOf); a
// denied or read-only directory target is then searched for links of
// its own (a chain secrets -> vault, vault/key -> ../store/key).
func (l *links) target(p string, v jail.Narrowing) error {
	if v == 0 {
		return nil
	}
	if via := processDependent(p); via != "" {
		return fmt.Errorf("%w: %s is a symbolic link through %s: where it leads depends on the process that follows it (the command's working directory, descriptors), not on landjail's, so its verdict cannot be carved; remove the link or name its target", ErrNotEnforceable, termsafe.Quote(p), termsafe.Quote(via))
	}
	t, err := l.resolve(p)
	if err != nil {
		if unresolvable(err) {
			return unresolvableErr(p, err)
		}
		return nil // dangling: what the command makes it knows
	}
	if !l.keys.reaches(p, t, l.ruleDirs()) {
		// The command cannot follow the link there (a directory on
		// the way it cannot search): it reads nothing through it, and
		// whatever is there is nobody's business of its (red team
		// round 31, R31d-1, R31d-2: links planted toward another
		// user's 0700 directory had their targets masked, listed in
		// the report and examined for keys, by existence and content).
		return nil
	}
	// A root below the target (secrets -> ../vault/app with --ro
	// vault/app/sub) gets the verdict whole, as a root inside a
	// directory a pattern names does (red team round 15, R15a-12: its
	// own rule lifted the deny under Landlock alone); a target that is
	// a root keeps it (README: R10-7), and so do all when the target
	// holds the workspace (.env -> .. names no file of the policy).
	for _, r := range l.roots {
		if !strings.HasPrefix(r, t+"/") || t == "/" || within(l.ws.Root(), t) {
			continue
		}
		switch {
		case v&jail.NarrowDenied != 0:
			l.add(carve{path: r, source: SourceDenyPattern, exists: true})
		case v&jail.NarrowReadOnly != 0:
			src := SourceReadOnly
			if v&jail.NarrowAgentConfig != 0 {
				src = SourceAgentConfig
			}
			l.add(carve{path: r, access: RightsReadExec, source: src, exists: true})
		}
	}
	if !l.inPolicy(t) && l.inGranted(t) {
		return l.grantedTarget(t, v)
	}
	if !l.inPolicy(t) {
		// Not a file of the policy; but a directory out of it may hold
		// links back into it, which the name through p reaches (red
		// team round 22, R22a-3, R22a-4: w/.aws -> ../out/aws with
		// out/aws/credentials -> ../../w/private/cred).
		if l.isDir(t) && !l.holdsRoot(t) {
			return l.below(t, v)
		}
		return nil
	}
	fi, err := os.Lstat(t)
	if err != nil {
		return nil
	}
	if !l.carveAs(t, fi, v) {
		return nil
	}
	if fi.IsDir() {
		return l.below(t, v)
	}
	return nil
}

// below gives the target of every link below the directory dir (denied
// or read-only, verdict v) that verdict: the directory's carve covers
// the link's name, not where it leads.
func (l *links) below(dir string, v jail.Narrowing) error {
	// By directory and verdict: a decoy link with a read-only verdict met
	// first must not spare the denied walk (red team round 18, R18a-1).
	if _, done := l.visited.LoadOrStore(fmt.Sprintf("below\x00%s\x00%d", dir, v), true); done {
		return nil
	}
	conf := fastwalk.Config{Follow: false}
	return l.keys.walk(&conf, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if err := l.count(dir); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				// In one directory: a relative target depends on it.
				if _, met := l.belowLinks.LoadOrStore(linkInode{uint64(st.Dev), st.Ino, v, filepath.Dir(p)}, true); met {
					return nil // a hard link of a link met here: same target
				}
			}
		}
		if belowResolveHook != nil {
			belowResolveHook()
		}
		if t, err := l.resolve(p); err == nil && (t == dir || strings.HasPrefix(t, dir+"/")) {
			return nil // stays inside: covered
		}
		return l.target(p, v)
	})
}

// belowResolveHook, when set (by tests), is called for each link below
// resolves.
var belowResolveHook func()

// linkInode is a symbolic link's identity (st_dev, st_ino) with the
// verdict below met it by and the directory it is in.
type linkInode struct {
	dev, ino uint64
	v        jail.Narrowing
	dir      string
}

// tree walks what is below the target of the directory link real (named
// virtual through the links above it), matching each entry by its name
// through the link (virtual + its path below the target) and carving it
// where it is, as walkCarves does for the entries it meets. A target is
// walked once for each name the walk reaches it by that the patterns
// tell apart (jail.Workspace.BelowKey): a decoy link to the same
// directory met first under a name no pattern matches (a .mozilla ->
// conf.d at the top, red team round 18, R18a-1, R18a-14, or a conf.d/aa
// -> ../deploy/prod beside the user's conf.d/prod, round 19, R19-2) must
// not spare the user's name. A loop (sub/.kube -> ., a link back to a
// directory above) ends when its names reach no new key.
func (l *links) tree(real, virtual string) error {
	return l.drain(l.walkTree(real, virtual, l.ws.Narrowing(virtual), noKey))
}

// later queues the walk f of a link met by a walk: the walks are made in
// the order their links were met (drain), so a directory reached through
// planted loops is keyed first by its shortest names, which cost least to
// key, and not by a name that grows a turn deeper at each nested call
// (red team round 22, R22a-1: 938 keys, names hundreds of components
// deep, 48 s).
func (l *links) later(f func() error) {
	l.pendMu.Lock()
	l.pending = append(l.pending, f)
	l.pendMu.Unlock()
}

// drain makes the queued walks, oldest first, after err (the first
// walk's) if it is nil, until none is left or one fails.
func (l *links) drain(err error) error {
	for err == nil {
		l.pendMu.Lock()
		if len(l.pending) == 0 {
			l.pendMu.Unlock()
			return nil
		}
		f := l.pending[0]
		l.pending[0] = nil
		l.pending = l.pending[1:]
		l.pendMu.Unlock()
		err = f()
	}
	return err
}

// walkTree walks the target of real by the name virtual, whose
// narrowing is top (jail.Workspace.Narrowing, or as walkTreeDir carries
// it from the entry's own level and its read-only parent).
func (l *links) walkTree(real, virtual string, top jail.Narrowing, id int) error {
	// real is met by a walk, in a canonical directory: resolved once per
	// link, not once per walk begun through it (R22a-1).
	t, err := l.resolveDepth(real, 0)
	if err != nil {
		if unresolvable(err) {
			return unresolvableErr(real, err)
		}
		return nil
	}
	if !l.isDir(t) {
		return nil
	}
	// A target in a rule that the command cannot reach (below another
	// user's 0700 directory of the workspace) is not walked: the names
	// it would carve are nobody's business of the command's, and were
	// listed in --print-rules, the report and the view's mounts (red
	// team round 32, R32d-1, R32d-2; R31d-1's question for a file
	// target). One in no rule is walked as before (roots below it).
	if in, ok := l.keys.reachesInRule(t, l.ruleDirs()); in && !ok {
		return nil
	}
	if l.inPolicy(t) || slices.Contains(l.roots, t) || l.writableDir(t) {
		return l.walkTreeDir(t, virtual, top, id)
	}
	// A target above roots: each root below it by its name through the
	// link; a target that is a root is walked too (red team round 18,
	// R18a-11: config -> ../shared/config with --ro ../shared/config
	// read config/prod.key under --deny config/prod.key), as homeTree
	// does for HOME's links. Only what the names through the link match
	// is carved: the root itself stays granted (R10-7).
	for _, r := range l.roots {
		if t != "/" && strings.HasPrefix(r, t+"/") {
			v := virtual + r[len(t):]
			if err := l.walkTreeDir(r, v, l.ws.Narrowing(v), noKey); err != nil {
				return err
			}
		}
	}
	return l.outside(t, virtual, false)
}

// carried, when a test sets it, is shown each name a link walk starts
// with and the narrowing the walk carried to it (byName: a walk by
// NameNarrowing), to check it against the name's whole match.
var carried func(ws *jail.Workspace, virtual string, n jail.Narrowing, byName bool)

// MaxLinkNames is the number of names, told apart by the policy's
// patterns (jail.Workspace.BelowKeyOf), that the carve walk walks one
// directory by through symbolic links before it fails with ErrLinkNames.
// A real tree reaches a directory by a few (a package manager's links to
// one package name it alike); planted loops reached hundreds.
const MaxLinkNames = 256

// maxLinkWalks bounds the walks by link names in all, over every
// directory (enter): directories cross-linked by links named like the
// patterns' components, each under MaxLinkNames, made the next run
// start after 45 s (red team round 22, R22c-5: 100 directories, 48 links
// and 400 files each). A variable for the tests.
var maxLinkWalks = 16 * MaxLinkNames

// dirCount is the number of directories enter was asked about.
func (l *links) dirCount() int {
	n := 0
	l.names.Range(func(any, any) bool { n++; return true })
	return n
}

// enter reports whether the walk of the canonical directory t by a name
// whose key is id (keyMemo; kind: "tree", by Narrowing, or "home", by
// NameNarrowing) is to be made: not when t was walked by a name with the
// same key already (every path below gets the same verdicts; there are
// finitely many keys, so a loop ends). More than MaxLinkNames keys for
// one t, or more than maxLinkWalks in all, fail with ErrLinkNames.
func (l *links) enter(kind, t string, id int) (bool, error) {
	if _, done := l.visited.LoadOrStore(fmt.Sprintf("%s\x00%s\x00%d", kind, t, id), true); done {
		return false, nil
	}
	c, _ := l.names.LoadOrStore(t, new(atomic.Int32))
	if c.(*atomic.Int32).Add(1) > MaxLinkNames {
		return false, &fs.PathError{Op: "walk", Path: t, Err: fmt.Errorf("%w: more than %d; nothing is run (links planted back to it? find -L %s -samefile %s)", ErrLinkNames, MaxLinkNames, l.ws.Root(), t)}
	}
	if l.walks.Add(1) > int64(maxLinkWalks) {
		return false, &fs.PathError{Op: "walk", Path: t, Err: fmt.Errorf("%w: more than %d walks by link names in all, %d directories; nothing is run (links planted across directories? find -L %s -type l)", ErrLinkNames, maxLinkWalks, l.dirCount(), l.ws.Root())}
	}
	return true, nil
}

// noKey asks walkTreeDir and homeWalk to key the name they are given
// themselves (a walk's first name, a root below a link's target).
const noKey = -1

// keyMemo numbers the keys of the names link walks start from
// (jail.Workspace.BelowKeyOf) and remembers, for a walk keyed id, the key
// of the name of each link met at rel below its directory: the same for
// every name keyed id, since names with equal keys get equal verdicts
// for every path below them, rel's and what is below it included. A walk
// begun through a link then costs a lookup, not the states of a name
// that grows by rel at each turn of a planted loop (red team round 22,
// R22a-1: self-links named like the secrets preset's components and
// their editor copies, 938 keys and 155,396 walks begun, 48 s, nearly
// all of it keying names hundreds of components deep). Safe for
// concurrent use.
type keyMemo struct {
	mu    sync.Mutex
	ids   map[string]int
	steps map[keyStep]int
}

// keyStep is a link at rel below a directory walked by a name keyed
// parent.
type keyStep struct {
	kind   string
	parent int
	rel    string
}

// intern returns the number of kind's key k.
func (m *keyMemo) intern(kind, k string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.internLocked(kind + "\x00" + k)
}

func (m *keyMemo) internLocked(k string) int {
	if m.ids == nil {
		m.ids, m.steps = map[string]int{}, map[keyStep]int{}
	}
	id, ok := m.ids[k]
	if !ok {
		id = len(m.ids)
		m.ids[k] = id
	}
	return id
}

// step returns the key number of the name of the link at rel below a
// walk keyed parent, computing it with key the first time.
func (m *keyMemo) step(kind string, parent int, rel string, key func() string) int {
	st := keyStep{kind, parent, rel}
	m.mu.Lock()
	id, ok := m.steps[st]
	m.mu.Unlock()
	if ok {
		return id
	}
	k := key()
	m.mu.Lock()
	defer m.mu.Unlock()
	id = m.internLocked(kind + "\x00" + k)
	m.steps[st] = id
	return id
}

// walkTreeDir is walkTree's walk of the directory t (canonical), named
// virtual (narrowing top) through the links that lead to it, once by
// that name.
func (l *links) walkTreeDir(t, virtual string, top jail.Narrowing, id int) error {
	if carried != nil {
		carried(l.ws, virtual, top, false)
	}
	if id == noKey {
		id = l.memo.intern("tree", l.ws.BelowKeyOf(virtual, top))
	}
	if ok, err := l.enter("tree", t, id); !ok {
		return err
	}
	var roDirs sync.Map // read-only directories met (their entries are)
	// The entries are matched at their own level (EntryNarrowing), as
	// the main walk's are: the name t is reached by was matched whole
	// and is not denied, and the walk does not go below a denied
	// directory. A deep name costs its level's match, not its every
	// parent's again (red team round 21, R21-1: 4 ms an entry of a name
	// 90 components deep). A link met is walked with the narrowing so
	// computed, its read-only parent's added: its whole Narrowing in
	// what decides the walk below it (the walk enters no denied
	// directory), without matching each of its parents again.
	if top&jail.NarrowReadOnly != 0 {
		roDirs.Store(t, true)
	}
	// A root below a link's target is reached by a name whose last
	// components no walk met (config -> ../shared with --ro
	// ../shared/app): denied there, each entry is matched whole, as the
	// root itself stays granted (R10-7).
	narrow := l.ws.EntryNarrowing
	if top&jail.NarrowDenied != 0 {
		narrow = l.ws.Narrowing
	}
	conf := fastwalk.Config{Follow: false}
	return l.keys.walk(&conf, t, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != t && errors.Is(err, fs.ErrPermission) {
				l.add(carve{path: p, source: SourceUnlistable, exists: true})
			}
			return nil
		}
		if p == t {
			return nil
		}
		if err := l.count(virtual); err != nil {
			return err
		}
		v := virtual + p[len(t):]
		n := narrow(v)
		typ := d.Type()
		_, roParent := roDirs.Load(filepath.Dir(p))
		if typ&fs.ModeSymlink != 0 {
			vd := verdictOf(n, roParent)
			if vd != 0 {
				if err := l.target(p, vd); err != nil {
					return err
				}
			}
			if vd&jail.NarrowDenied != 0 {
				return nil
			}
			// A read-only or private-key verdict covers the target's
			// own rule, not the deny patterns below it by this name
			// (red team round 20, R20a-4).
			if roParent {
				n |= jail.NarrowReadOnly
			}
			rel := p[len(t):]
			l.later(func() error {
				return l.walkTree(p, v, n, l.memo.step("tree", id, rel, func() string { return l.ws.BelowKeyOf(v, n) }))
			})
			return nil
		}
		isDir := typ.IsDir()
		if isDir && (roParent || n&jail.NarrowReadOnly != 0) {
			roDirs.Store(p, true)
		}
		switch {
		case n&jail.NarrowDenied != 0:
			l.add(carve{path: p, source: SourceDenyPattern, exists: true})
			if isDir {
				if err := l.below(p, jail.NarrowDenied); err != nil {
					return err
				}
				return fastwalk.SkipDir
			}
		case n&(jail.NarrowPrivateKey|jail.NarrowKeyHeaders) != 0 && !isDir && l.keys.holdsKey(p, typ, n):
			l.add(carve{path: p, source: SourcePrivateKey, exists: true})
		case n&jail.NarrowReadOnly != 0 && !roParent:
			src := SourceReadOnly
			if n&jail.NarrowAgentConfig != 0 {
				src = SourceAgentConfig
			}
			l.add(carve{path: p, access: RightsReadExec, source: src, exists: true})
			if isDir {
				// Walked on below it: a name there may be denied
				// (--deny config/prod.key with --read-only config/
				// through config -> conf.d, red team round 20, R20a-4).
				if err := l.below(p, jail.NarrowReadOnly|n&jail.NarrowAgentConfig); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// holdsKey examines the file at p (met by the walk, so canonical) for a
// private key by the rule n names, opening it without following a
// symlink. Only regular files are opened (by the walk's dirent type; the
// open is O_NONBLOCK should it have become a FIFO since): a FIFO or
// device matching a private-key pattern counts as a key (fail closed, and
// no open with side effects), one met by the header rule
// (NarrowKeyHeaders) is not examined. A file that vanished holds nothing.
func (k *keyScan) holdsKey(p string, typ fs.FileMode, n jail.Narrowing) bool {
	whole := n&jail.NarrowPrivateKey != 0
	if !typ.IsRegular() {
		return whole
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return whole || !errors.Is(err, unix.ENOENT)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return whole // swapped since the walk met it
	}
	id := keyFile{uint64(st.Dev), uint64(st.Ino), whole}
	if v, ok := k.seen.Load(id); ok {
		return v.(bool)
	}
	// Only whole reads count: a head read is at most KeyHeadScan bytes
	// per entry the walk limit lets through, as a plain walk of a large
	// tree costs; 33,000 ordinary files over 16 KiB spent the budget and
	// then denied plain sources (red team round 12, R12-5).
	if whole && k.bytes.Add(min(st.Size, jail.MaxKeyScan)) > maxKeyScanBytes {
		return true // past the budget: a key, unread (fail closed)
	}
	var held bool
	if whole {
		held = jail.PathHoldsPrivateKeyAs(p, k.mayRead())
	} else {
		held = jail.PathHeadHoldsPrivateKeyAs(p, k.mayRead())
	}
	k.seen.Store(id, held)
	return held
}

// maxKeyScanBytes bounds what one compile reads whole to decide which
// files matching a private-key pattern (*.pem, *.crt, id_*) hold a key
// (512 MiB): past it, every such file left to examine counts as a key,
// unread. A tree of 65,000 hard links to one 1 MiB
// *.pem, or as many sparse ones, made start-up take minutes (red team
// round 11, R11b-1); a checkout's own certificates and keys are far
// below it.
var maxKeyScanBytes int64 = 512 << 20

// keyScan decides for one compile which files hold a private key: each
// file (device and inode: its hard links are the same content) is read
// once, and the bytes read are bounded by maxKeyScanBytes. It also
// decides what the walks may list and read as the command (as).
type keyScan struct {
	seen  sync.Map // keyFile -> bool
	bytes atomic.Int64
	// as are the command's credentials when this process's permission
	// checks differ from them (dac.Differs: root, or --user), else nil.
	// The walks then list only the directories the command may list and
	// read only the files it may read: the rest is unreadable to it and
	// carved out unread (red team round 30, R30d-6: a root planning walk
	// listed another user's 0700 directory and read the heads of its
	// files, and the masks and verdicts named what was there).
	as *dac.Creds
	// cred is the command's Credential as given (Options.Credential),
	// for the threads that resolve as it (reaches).
	cred *syscall.Credential
}

// newKeyScan is the keyScan of a compile for a command run with cred
// (Options.Credential). Errors: dac.Of's.
func newKeyScan(cred *syscall.Credential) (*keyScan, error) {
	c, err := dac.Of(cred)
	if err != nil {
		return nil, err
	}
	k := &keyScan{cred: cred}
	if dac.Differs(c) {
		k.as = &c
	}
	return k, nil
}

// reaches reports whether the command can reach t, the target of the
// link p, by any path it has: t lies in a rule the ruleset grants (a
// policy root, or one of the granted rules outside them), and every
// directory from that rule down to t is one the command may search
// (dac, its own directories always: it may chmod them). Carving a target the command
// reaches reveals nothing it could not see; one it cannot reach (below
// another user's 0700 directory) is no business of its, and carving it
// would name it (red team round 31, R31d-1, R31d-2). Whether the command
// can follow the link p itself is not the question: it may reach t by
// t's own name, and the directories above the policy's roots do not
// count, as the view rebuilds the roots' paths and a command in the
// workspace uses relative names (red team round 32, R32d-3: with the
// workspace below a 0700 HOME, .env -> settings/production was not
// carved and both names read the secret). A target in no rule is reached
// when the command can follow p there (filepath.EvalSymlinks on that
// thread). Always true when those checks
// are this process's, and when the thread could not take them (fail
// closed: the target is carved).
func (k *keyScan) reaches(p, t string, rules []string) bool {
	if k == nil || k.as == nil {
		return true
	}
	if in, ok := k.reachesInRule(t, rules); in {
		return ok
	}
	// In no rule: the command reads nothing there, but the walk of a
	// directory target finds the links back into the policy its name
	// gives a verdict (red team round 22, R22a-4), and a root below the
	// target takes it (R15a-12): as before, whether the command can
	// follow the link p there.
	ok := false
	err := threadcaps.RunAs(k.cred, func() error {
		r, err := filepath.EvalSymlinks(p)
		ok = err == nil && r == t
		return nil
	})
	return ok || err != nil
}

// reachesInRule is reaches for a target in a rule (in true): whether the
// command may search every directory from the deepest rule holding t
// down to t. in is false for a target in no rule (ok is then
// meaningless), and true with ok true when the checks are this
// process's own.
func (k *keyScan) reachesInRule(t string, rules []string) (in, ok bool) {
	base := ""
	for _, r := range rules {
		if within(t, r) && len(r) > len(base) {
			base = r
		}
	}
	if base == "" {
		return false, false
	}
	if k == nil || k.as == nil || t == base {
		return true, true
	}
	return true, k.searchable(base, t)
}

// searchable walks from base down to t (below it), one directory at a
// time through descriptors (O_NOFOLLOW: t is canonical), each checked
// for search as the command: one it owns counts as searchable whatever
// its mode, as it may chmod it (red team round 32, R32d-6: a command
// that toggled its own directory between 000 and 755 made this look and
// the walk's see different modes, and nothing was carved). Anything but
// a refused search answers true (fail closed: carved).
func (k *keyScan) searchable(base, t string) bool {
	fd, err := unix.Open(base, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true // fail closed: carved
	}
	comps := strings.Split(strings.TrimPrefix(t[len(base):], "/"), "/")
	for _, c := range comps {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
			return true
		}
		if !k.owns(&st) {
			if ok, err := k.as.MayFd(fd, dac.Exec); err != nil || !ok {
				unix.Close(fd)
				return err != nil // refused: unreachable; an error: carved
			}
		}
		next, err := unix.Openat(fd, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return true // changed meanwhile: carved
		}
		fd = next
	}
	unix.Close(fd)
	return true
}

// listable reports whether the command may list the directory p and
// reach its entries (read and search: dac.MayPath). A directory that
// vanished is listable (the walk finds it gone); any other error is not
// (fail closed).
func (k *keyScan) listable(p string) bool {
	if k == nil || k.as == nil {
		return true
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) == nil && k.owns(&st) {
		return true
	}
	ok, err := k.as.MayPath(p, dac.Read|dac.Exec)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	return ok
}

// mayRead is the reader check for jail.PathHoldsPrivateKeyAs: whether
// the command may read the file open as pfd (nil: this process's own
// checks are the command's).
func (k *keyScan) mayRead() func(pfd int) bool {
	if k == nil || k.as == nil {
		return nil
	}
	return func(pfd int) bool {
		var st unix.Stat_t
		if unix.Fstat(pfd, &st) == nil && k.owns(&st) {
			return true
		}
		ok, err := k.as.MayFd(pfd, dac.Read)
		return ok && err == nil
	}
}

// ownUnlistable reports whether the directory p, which the walk could
// not list, is the command's own while the walk runs with this
// process's own permission checks (a non-root landjail: as nil): its
// owner may make it listable again, and the links in it would then
// lead where the walk never looked (red team round 32, R32d-7: chmod
// 000 of its own directory holding .env -> ../cfg/production left the
// target uncarved in the next run). With the command's credentials
// given, owns makes such a directory listable instead.
func (k *keyScan) ownUnlistable(p string) bool {
	if k != nil && k.as != nil {
		return false
	}
	var st unix.Stat_t
	return unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == unix.Geteuid()
}

// owns reports whether the command owns the file st describes: its owner
// may chmod(2) it readable (or listable) whatever its mode, so what its
// mode refuses the command is no secret from it. Such a file is
// examined, and masked only when it holds a key, as the command's other
// files are: masked unread, a 0000 build product of its own could no
// longer be removed, renamed or chmod'ed back (red team round 31,
// R31d-3).
func (k *keyScan) owns(st *unix.Stat_t) bool {
	return k.as != nil && st.Uid == k.as.UID
}

// walk is fastwalk.Walk of root as the command would list it: a
// directory the command may not list (read and search) is handed to fn
// with EACCES, as fastwalk reports one it cannot read, and not
// descended into; so is root itself. The walk is walkFd's: each
// directory opened O_NOFOLLOW from its parent's descriptor, checked
// (dac.MayFd, with credentials to decide for; else the kernel's own
// check of this process at the open) and listed through that
// descriptor, so the directory examined is the one read. A check by path
// and fastwalk's open by path were two lookups: a command that exchanged
// its own directory with a link between them made a root landjail list
// any directory of the host, and masks named what was there (red team
// round 31, R31d-5); without credentials (a non-root landjail, a library
// caller), fastwalk's open by path followed a directory the command had
// exchanged for a link since the last call, and listed what it led to
// (red team round 27, R27e-5's walk half). conf is not used (kept for
// the callers' symmetry with fastwalk: no link is followed).
func (k *keyScan) walk(conf *fastwalk.Config, root string, fn fs.WalkDirFunc) error {
	_ = conf
	if k == nil {
		k = &keyScan{}
	}
	denied := func(p string) error { return &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES} }
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fn(root, nil, &fs.PathError{Op: "open", Path: root, Err: err})
	}
	if ok, err := k.mayList(fd); err != nil || !ok {
		unix.Close(fd)
		return fn(root, nil, denied(root))
	}
	rf := os.NewFile(uintptr(fd), root)
	fi, err := rf.Stat()
	if err != nil {
		rf.Close()
		return fn(root, nil, err)
	}
	if err := fn(root, fs.FileInfoToDirEntry(fi), nil); err != nil {
		rf.Close()
		if err == fastwalk.SkipDir {
			return nil
		}
		return err
	}
	w := &fdWalk{k: k, fn: fn, denied: denied, sem: make(chan struct{}, max(runtime.GOMAXPROCS(0), 2))}
	err = k.walkFd(w, rf, root)
	w.wg.Wait()
	if err != nil {
		return err
	}
	return w.firstErr()
}

// mayList reports whether the command may list the directory open as
// fd (read and search): dac.MayFd with credentials to decide for; without
// them the open that gave fd was this process's own check, which is the
// command's.
func (k *keyScan) mayList(fd int) (bool, error) {
	if k.as == nil {
		return true, nil
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && k.owns(&st) {
		return true, nil
	}
	return k.as.MayFd(fd, dac.Read|dac.Exec)
}

// fdWalk is one walkFd walk: subdirectories are walked on other
// goroutines while a slot of sem is free (as fastwalk's workers, so a
// walk that examines every file keeps its speed), inline otherwise; the
// first error stops it.
type fdWalk struct {
	k      *keyScan
	fn     fs.WalkDirFunc
	denied func(string) error
	sem    chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	stop   atomic.Bool
}

func (w *fdWalk) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.stop.Store(true)
}

func (w *fdWalk) firstErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// walkFd lists the directory open as f (named dir; walkFd closes f)
// and calls fn for each entry, descending into each subdirectory the
// command may list through a descriptor opened from fd (O_NOFOLLOW: a
// directory exchanged for a link meanwhile is not followed, ELOOP, and
// handed to fn as unlistable: fail closed).
func (k *keyScan) walkFd(w *fdWalk, f *os.File, dir string) error {
	defer f.Close()
	if w.stop.Load() {
		return nil
	}
	fn, denied := w.fn, w.denied
	ents, err := f.ReadDir(-1)
	if err != nil {
		return fn(dir, nil, &fs.PathError{Op: "readdirent", Path: dir, Err: err})
	}
	fd := int(f.Fd())
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	for _, e := range ents {
		p := prefix + e.Name() // dir is clean, the name one component: no Join
		if !e.IsDir() {
			if err := fn(p, e, nil); err != nil && err != fastwalk.SkipDir {
				return err
			}
			continue
		}
		if len(p) >= unix.PathMax {
			// As fastwalk, which opens by path, reports it: the names
			// below could not be used by path anyway (the callers fail
			// closed on it).
			if err := fn(p, e, &fs.PathError{Op: "open", Path: p, Err: unix.ENAMETOOLONG}); err != nil && err != fastwalk.SkipDir {
				return err
			}
			continue
		}
		cfd, err := unix.Openat(fd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			continue // removed during the walk
		}
		ok := false
		if err == nil {
			ok, err = k.mayList(cfd)
			ok = ok && err == nil
		}
		if !ok {
			if cfd >= 0 {
				unix.Close(cfd)
			}
			if err := fn(p, e, denied(p)); err != nil && err != fastwalk.SkipDir {
				return err
			}
			continue
		}
		switch err := fn(p, e, nil); {
		case err == fastwalk.SkipDir:
			unix.Close(cfd)
			continue
		case err != nil:
			unix.Close(cfd)
			return err
		}
		sub := os.NewFile(uintptr(cfd), p)
		select {
		case w.sem <- struct{}{}:
			w.wg.Add(1)
			go func() {
				defer func() { <-w.sem; w.wg.Done() }()
				if err := k.walkFd(w, sub, p); err != nil {
					w.fail(err)
				}
			}()
		default:
			if err := k.walkFd(w, sub, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyFile names a file and the rule it was examined by.
type keyFile struct {
	dev, ino uint64
	whole    bool
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

// collectCarves gathers every carve of ws: nested read-only roots, what
// the walk of the top roots finds (deny, private-key and read-only
// patterns, absolute read-only paths), the absolute read-only paths and
// the agent-config paths whether they exist or not (a missing one makes
// its parent a chain directory, so it cannot be created). Patterns that
// cannot be expanded are an error, never a dropped feature.
func collectCarves(ws *jail.Workspace, opt Options, roots []Rule, granted ...Rule) ([]carve, error) {
	carves := nestedCarves(roots)
	limit := opt.WalkLimit
	if limit <= 0 {
		limit = DefaultWalkLimit
	}
	patterns := len(ws.DenyPatterns()) > 0 || len(ws.ReadOnlyPatterns()) > 0 || len(ws.PrivateKeyPatterns()) > 0 ||
		ws.PrivateKeyHeaders()
	if patterns && ws.Unrestricted() {
		if opt.NoCarve {
			return carves, nil
		}
		return nil, fmt.Errorf("%w: the policy is unrestricted: carving its patterns out would walk the whole file system (Options.NoCarve compiles without them, reported as dropped)", ErrNotEnforceable)
	}
	// The walk expands patterns. Absolute read-only paths alone need none:
	// each is carved below (a --config file under a --rw / root is one
	// carve, not a walk of the whole file system).
	if patterns {
		keys, err := newKeyScan(opt.Credential)
		if err != nil {
			return nil, err
		}
		found, err := walkCarvesGranted(ws, topRoots(roots), granted, limit, keys)
		if err != nil {
			return nil, err
		}
		carves = append(carves, found...)
	}
	for _, p := range ws.ReadOnlyPaths() {
		carves = append(carves, carve{path: p, access: RightsReadExec, source: SourceReadOnly, exists: true})
	}
	// What ws was told a link denied or made read-only before this
	// compile (jail.Workspace.DenyPaths: landjail-mcp's earlier calls),
	// kept though the link is gone: a command that removes .env ->
	// settings/production in one call must not read the target in the
	// next (red team round 15, R15a-24). Paths no longer in a root, or
	// gone, are left out.
	inRoots := func(p string) bool {
		for _, r := range roots {
			if within(p, r.Path) {
				return true
			}
		}
		return false
	}
	prevDenied, prevRO := ws.DenyPathsSet()
	for _, p := range prevDenied {
		if _, err := os.Lstat(p); err == nil && inRoots(p) {
			carves = append(carves, carve{path: p, source: SourceDenyPattern, exists: true})
		}
	}
	for _, p := range prevRO {
		if _, err := os.Lstat(p); err == nil && inRoots(p) {
			carves = append(carves, carve{path: p, access: RightsReadExec, source: SourceReadOnly, exists: true})
		}
	}
	// A root inside a directory a pattern denies or makes read-only
	// (--deny-secrets --rw ./.aws/sso/cache, --read-only deploy/ --rw
	// ./deploy/build) gets the pattern's verdict whole: Landlock's rules
	// only add, so its own rule would lift the carve-out of the directory
	// above it (red team round 13, R13-9).
	// Absolute read-only paths and agent configuration too (R14-3:
	// --read-only /abs/deploy --rw ./deploy/build; R14-6: --rw
	// ./.vscode/x under --protect-agent-config).
	for _, r := range roots {
		switch n := ws.Narrowing(r.Path); {
		case n&jail.NarrowDenied != 0:
			carves = append(carves, carve{path: r.Path, source: SourceDenyPattern, exists: true})
		case n&jail.NarrowReadOnly != 0:
			carves = append(carves, carve{path: r.Path, access: RightsReadExec, source: SourceReadOnly, exists: true})
		case n&jail.NarrowAgentConfig != 0:
			carves = append(carves, carve{path: r.Path, access: RightsReadExec, source: SourceAgentConfig, exists: true})
		}
	}
	// And a root inside what a link's name gives a verdict where the
	// link leads (secrets -> ../vault/app with --deny secrets/ and --ro
	// vault/app/sub): the pattern does not name the root's path, the
	// walk's carve of the target does (red team round 15, R15a-12: under
	// Landlock alone the root's rule lifted it).
	byPath := map[string]string{}
	for _, c := range carves {
		if deniedSource(c.source) || (readOnlySource(c.source) && byPath[c.path] == "") {
			byPath[c.path] = c.source
		}
	}
	for _, r := range roots {
		for d := filepath.Dir(r.Path); d != "/" && d != "."; d = filepath.Dir(d) {
			src, ok := byPath[d]
			if !ok {
				continue
			}
			if deniedSource(src) {
				carves = append(carves, carve{path: r.Path, source: SourceDenyPattern, exists: true})
			} else {
				carves = append(carves, carve{path: r.Path, access: RightsReadExec, source: src, exists: true})
			}
			break
		}
	}
	for _, p := range ws.AgentConfigProtected() {
		fi, err := os.Lstat(p)
		exists := err == nil
		if exists && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling link (.envrc -> tools/envrc not made yet) is
			// carved as the missing name it leads to: no mount can be
			// put on the link itself (the view failed to start: red
			// team round 17, R17a-15), and what the command makes at its
			// target is the sweep's, as for any missing protected name.
			if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
				exists = false
			}
		}
		carves = append(carves, carve{path: p, access: RightsReadExec, source: SourceAgentConfig, exists: exists})
	}
	// One carve per path and access (the walk meets absolute read-only
	// paths too).
	type key struct {
		path   string
		access golandlock.AccessFSSet
	}
	seen := map[key]bool{}
	out := carves[:0]
	for _, c := range carves {
		if k := (key{c.path, c.access}); !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// widenedCarves names carve-outs that a rule outside the carving (TmpDir,
// Extra, the system preset, an unrestricted policy) widens again: rules
// are unions along the path, so such a carve-out does not hold.
//
// Each carve looks up the rules on its path and on each directory above
// it (an index by path), not every rule: a tree with 30,000 carve-outs
// has as many rules again for their siblings.
func widenedCarves(rules []Rule, carves []carve) []string {
	byPath := map[string][]int{}
	for i, r := range rules {
		byPath[r.Path] = append(byPath[r.Path], i)
	}
	var out []string
	var idx []int
	for _, cv := range carves {
		idx = append(idx[:0], byPath[cv.path]...)
		for d := cv.path; d != "/"; {
			d = filepath.Dir(d)
			idx = append(idx, byPath[d]...)
		}
		slices.Sort(idx) // in the rules' order, as a scan of them reports
		for _, i := range idx {
			r := rules[i]
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
	"carve-outs: a file holding a private key at compile time is carved out (a file matching a private-key pattern, *.pem, id_*, by its whole content; with --deny-secrets any other regular file by its first 16 KiB); one that becomes a key later is not, as every start-time match",
	"carve-outs: a denied directory can still be listed (read_dir is inherited from its chain), its files cannot be read, written, removed or renamed; hard links to a carved-out file that existed before compile time are the same inode and get the rights of wherever they live",
}
