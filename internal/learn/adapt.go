package learn

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"github.com/landjail/landjail/internal/setid"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// Classifier says whether a file-system refusal is by design: a
// protection --learn must never lift.
type Classifier interface {
	// Classify returns the protection that refused (or would still
	// refuse) right on path, "" when a grant would allow it; notLearnable
	// when that cannot be decided (fail closed: nothing is granted).
	Classify(path string, right Right) (byDesign, notLearnable string)
}

// FromDenials turns the Landlock denials of a run (internal/denials, read
// from its audit records; root and Landlock ABI 7) into refusals, each
// classified by c. One denial becomes one refusal per blocker. Network
// and scope denials, device ioctls and mount changes are not learnable.
func FromDenials(ds []denials.Denial, c Classifier) []Refusal {
	var out []Refusal
	for _, d := range ds {
		for _, b := range d.Blockers {
			r := Refusal{Path: d.Path}
			switch {
			case b == "fs.read_file":
				r.Right = Read
			case b == "fs.read_dir":
				r.Right, r.Dir = Read, true
			case b == "fs.execute":
				r.Right = Exec
			case b == "fs.write_file" || b == "fs.truncate":
				r.Right = Write
			case strings.HasPrefix(b, "fs.make_") || strings.HasPrefix(b, "fs.remove_") || b == "fs.refer":
				r.Right = Create
			case strings.HasPrefix(b, "net."):
				r.Path = fmt.Sprintf("TCP port %d", d.Port)
				r.NotLearnable = strings.TrimPrefix(b, "net.") + ": --learn grants files and --allow-domain hosts only (--connect-tcp, --bind-tcp, --allow-domain)"
			default:
				if r.Path == "" {
					r.Path = b
				}
				r.NotLearnable = b + ": no grant allows it"
			}
			if r.NotLearnable == "" {
				if r.Path == "" || !filepath.IsAbs(r.Path) {
					r.NotLearnable = "the audit record's path is not absolute (a detached or other mount)"
				} else if c != nil {
					r.ByDesign, r.NotLearnable = c.Classify(r.Path, r.Right)
				}
			}
			out = append(out, r)
		}
	}
	return out
}

// Proxy refusal reasons, as internal/netproxy records them
// (netproxy.Reason*; a test checks they are equal: that package is not
// linked into landjail).
const (
	proxyNotListed   = "not on the allowlist"
	proxyPort        = "port not allowed for this host"
	proxySpecial     = "resolves to a loopback/private/special address and is not listed exactly"
	proxyLocal       = "resolves to an address of this host and is not listed exactly"
	proxyBelowSuffix = "under a public suffix below the wildcard (another owner's name)"
)

// FromProxy turns one kind of request the --allow-domain proxy refused
// (cliopts.Refusal: host as requested, port, reason) into a refusal. A
// host not listed, or not on that port, is learnable; a name resolving to
// a private or local address (the DNS-rebinding defence) or under a public
// suffix below a wildcard is by design; the rest (unparseable, did not
// resolve, not a proxy request) are not learnable.
func FromProxy(host string, port uint16, reason string) Refusal {
	r := Refusal{Host: host, Port: port}
	switch reason {
	case proxyNotListed, proxyPort:
		// The proxy refuses a host not listed before resolving it, so
		// the rebinding defence never ran; a listed name is exact, and
		// lifts it (red team round 27, R27a-1: localhost:18080,
		// 127.0.0.1:18080, 0.0.0.0:18080, 169.254.169.254:80 were
		// learned, and the next run of the loop reached the host's
		// loopback services and the metadata endpoint).
		r.ByDesign, r.NotLearnable = localTarget(host)
	case proxySpecial, proxyLocal:
		r.ByDesign = "the proxy's DNS-rebinding defence: " + reason + "; list it by hand if it is meant"
	case proxyBelowSuffix:
		r.ByDesign = "the proxy's public-suffix rule: " + reason
	default:
		r.NotLearnable = "proxy: " + reason
	}
	if r.Host == "" {
		r.Host = "(no host)"
	}
	return r
}

// hostAddrs lists this host's own addresses (a variable for the tests).
var hostAddrs = func() []netip.Addr {
	var out []netip.Addr
	as, _ := net.InterfaceAddrs()
	for _, a := range as {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

// localTarget says why the proxy target host, refused as not listed,
// must not be learned: "localhost" or a name below it, or an address
// that is loopback, private, link-local, unspecified or otherwise
// special (allowlist.IsSpecial), or one of this host's: by design
// (byDesign), for the proxy would reach it once listed exactly. Empty:
// learnable. A name is never resolved here: the command chose it, and
// a lookup by landjail, outside the sandbox, carried whatever the
// command encoded in it to the name's DNS servers (red team round 30,
// R30b-4: --learn resolved every refused name, an exfiltration channel
// out of a run whose own network reached nothing but the proxy). A name
// is learned as "public:NAME:PORT" instead (decideProxy), which keeps
// the proxy's rebinding defence: its addresses, asked of DNS only when
// a later run connects to it as allowed, must not be special nor this
// host's (R27a-1's loopback and metadata names stay refused).
func localTarget(host string) (byDesign, notLearnable string) {
	const why = "the proxy's DNS-rebinding defence: a loopback, private, link-local or special address, or one of this host's; list it by hand if it is meant"
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return why, ""
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return "", "" // a name: learned as public:NAME
	}
	a = a.Unmap()
	if allowlist.IsSpecial(a) {
		return why, ""
	}
	for _, l := range hostAddrs() {
		if a == l || allowlist.Embedded4(a) == l {
			return why, ""
		}
	}
	return "", ""
}

// PolicyClassifier classifies against the run's policy: WS is the
// Workspace the run's Landlock rules were compiled from; Probe, when set,
// returns the same policy with one more read-only root, dir, so that the
// deny patterns, private-key rules and protections are asked about a path
// as they will be once it is granted (a --ro file is a Landlock rule only,
// outside every jail root: without the probe nothing would match it).
// Probe's Workspace is closed after use.
//
// Pinned are the run's policy files, the --config file and the --learn
// FILE (absolute, as named or canonical): a grant of one, of a directory
// above one, or of another name of one (a symbolic or hard link) is by
// design whatever the roots, for every right (red team R6-2: a refused
// write of FILE outside every root was learned as rw of FILE, and the
// next run rewrote its own policy).
//
// Memo, when set, keeps what the checks of one directory found for the
// next refusal in it and the policy's denied links for every refusal,
// and bounds the work (MaxProbeDirs directories, ProbeBudget of time),
// past which a refusal is not learned: the command chooses how many
// refusals there are and how large the trees walked, and it all runs
// after the command, outside its --timeout and --cpus (red team round
// 30, R30b-6: 711 refused reads took 1 min 43 s to classify).
//
// Throttle, when set, runs each probe (the policy built with the
// directory and its carve walk): the run's --cpus share
// (sandbox.Plan.CPUThrottle), so that the classification the command's
// refusals cause is charged to the command, and with ProbeBudget's wall
// time its CPU is bounded by the share (red team round 31, R31b-7: 35
// to 59 s of landjail's CPU after a --cpus 0.1 run).
type PolicyClassifier struct {
	WS       *jail.Workspace
	Probe    func(dir string) (*jail.Workspace, error)
	Pinned   []string
	Memo     *Memo
	Throttle func(work func())
}

// MaxProbeDirs and ProbeBudget bound a Memo's work: the directories
// probed (each a walk of the policy with it), and the time from its
// first probe.
const (
	MaxProbeDirs = 256
	ProbeBudget  = 60 * time.Second
)

// Memo is PolicyClassifier's memory across refusals (NewMemo); Close
// releases the probes' workspaces.
type Memo struct {
	mu       sync.Mutex
	start    time.Time
	dirs     map[string]*probeResult
	links    []deniedLink
	linksErr error
	linked   bool
	maxDirs  int // MaxProbeDirs (tests lower it)
}

// NewMemo returns an empty Memo.
func NewMemo() *Memo { return &Memo{dirs: map[string]*probeResult{}, maxDirs: MaxProbeDirs} }

// Close closes the workspaces the Memo keeps.
func (m *Memo) Close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.dirs {
		if r.pw != nil {
			r.pw.Close()
		}
	}
	m.dirs = map[string]*probeResult{}
}

// probeResult is what the policy with one more directory says: the
// probe's workspace, HOME's links and the denied paths of its carve
// walk, or why they could not be had (notLearnable).
type probeResult struct {
	pw           *jail.Workspace
	hl, denied   []string
	hlErr        string // why HOME's links are unknown
	notLearnable string // why the denied paths are unknown (or the probe failed)
}

// probe is the probeResult for dir, from the Memo or made (done releases
// it when it is not kept).
func (c PolicyClassifier) probe(dir string) (r *probeResult, done func()) {
	build := func() *probeResult {
		if c.Throttle == nil {
			return c.build(dir)
		}
		var r *probeResult
		c.Throttle(func() { r = c.build(dir) })
		return r
	}
	if c.Memo == nil {
		r := build()
		return r, func() {
			if r.pw != nil {
				r.pw.Close()
			}
		}
	}
	m := c.Memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.dirs[dir]; ok {
		return r, func() {}
	}
	if m.start.IsZero() {
		m.start = time.Now()
	}
	switch {
	case len(m.dirs) >= m.maxDirs:
		return &probeResult{notLearnable: fmt.Sprintf("refusals in more than %d directories: the rest are not checked, so not learned (learn again after granting these)", m.maxDirs)}, func() {}
	case time.Since(m.start) > ProbeBudget:
		return &probeResult{notLearnable: fmt.Sprintf("checking the refusals took more than %v: the rest are not learned (learn again after granting these)", ProbeBudget)}, func() {}
	}
	r = build()
	m.dirs[dir] = r
	return r, func() {}
}

// build probes the policy with dir: the probe's workspace, HOME's links
// and the denied paths of its carve walk.
func (c PolicyClassifier) build(dir string) *probeResult {
	pw, err := c.Probe(dir)
	if err != nil {
		return &probeResult{notLearnable: "cannot check the policy for it: " + err.Error()}
	}
	r := &probeResult{pw: pw}
	if r.hl, err = landlock.HomeLinks(pw); err != nil {
		r.hlErr = "cannot check HOME's links to it: " + err.Error()
		return r
	}
	if r.denied, _, err = landlock.DeniedPaths(pw, 0); err != nil {
		r.notLearnable = "cannot check the policy's links to it: " + err.Error()
	}
	return r
}

// Classify implements Classifier: a deny pattern or private key (in the
// run's policy or once granted), --protect-agent-config, a --read-only
// path (for writes), a directory frozen by carve-outs (a write the policy
// allows but Landlock refused).
func (c PolicyClassifier) Classify(path string, right Right) (byDesign, notLearnable string) {
	// What a grant would name: the path, or for a create the directory
	// (Landlock's records name it; the view's name the new entry).
	target := path
	if right == Create {
		if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
			target = filepath.Dir(path)
		}
	}
	if why := pinned(c.Pinned, path, target); why != "" {
		return why, ""
	}
	// A directory above the workspace: a repository (.git) or agent
	// configuration (.envrc) made there applies to the workspace below
	// it, since git, direnv and editors look upwards; a create refused
	// there names the directory, whatever the entry (red team round 11,
	// R11a-10: mkdir ../.git learned as rw on the parent).
	if (right == Write || right == Create) && c.WS != nil {
		if ws := c.WS.Root(); target != ws && holds(target, ws) {
			return "a directory above the workspace (a repository or agent configuration made there applies to the workspace: git, direnv and editors look upwards)", ""
		}
		if above := agentConfigAbove(c.WS.Root(), path); above != "" {
			return "agent configuration of " + above + ", above the workspace (mise, direnv, editors and npm read it from there: red team round 12, R12-6)", ""
		}
	}
	for _, p := range []string{path, target} {
		if why := narrowed(c.WS, p, right); why != "" {
			return why, ""
		}
	}
	access := map[Right]jail.Access{Read: jail.Read, Exec: jail.Execute, Write: jail.Write, Create: jail.Write}[right]
	_, err := c.WS.Check(path, access)
	switch {
	case errors.Is(err, jail.ErrDenied):
		return "deny pattern (--deny, --deny-secrets) or private key", ""
	case err == nil && (right == Write || right == Create):
		return "a directory frozen by carve-outs (the namespace layer masks instead of freezing; or --no-carve)", ""
	}
	if c.Probe == nil {
		return "", ""
	}
	dir := filepath.Dir(target)
	if right == Create {
		dir = target
	}
	pr, done := c.probe(dir)
	defer done()
	if pr.pw == nil {
		return "", pr.notLearnable
	}
	pw := pr.pw
	for _, p := range []string{path, target} {
		if why := narrowed(pw, p, right); why != "" {
			return why, ""
		}
	}
	if _, err := pw.Check(path, jail.Read); errors.Is(err, jail.ErrDenied) {
		return "deny pattern (--deny, --deny-secrets) or private key", ""
	}
	// The kernel names the file by its real path; the command may have
	// used another, through a link (~/.aws -> dotfiles/aws, as GNU stow
	// makes them; ../shared/.env -> env/production), by which a pattern
	// denies it (red team rounds 12 and 13, R12-1, R13-1: cat
	// ~/.aws/credentials was learned as ro ~/dotfiles/aws/credentials).
	if pr.hlErr != "" {
		return "", pr.hlErr
	}
	for _, a := range linkAliases(path, pr.hl) {
		aw, err := c.Probe(filepath.Dir(a))
		if err != nil {
			continue
		}
		_, err = aw.Check(a, jail.Read)
		aw.Close()
		if errors.Is(err, jail.ErrDenied) {
			return "deny pattern (--deny, --deny-secrets) by another name, " + a, ""
		}
	}
	// A denied name in the policy that is a link to the path or to a
	// directory above it (ws/.aws -> ../../shared/aws: the carve walk
	// of a probe rooted at that directory keeps the root, README's
	// R10-7; red team round 16, R16-4: learned as ro
	// shared/aws/credentials).
	if l, err := c.deniedLinkTo(path); err != nil {
		return "", "cannot check the policy's links to it: " + err.Error()
	} else if l != "" {
		return "deny pattern (--deny, --deny-secrets) by the name of a link in the policy, " + l, ""
	}
	// A link in the policy by a denied name (ws/.env ->
	// ../shared/production, the shared env file linked in): the carve
	// walk of the policy with the grant gives its target the name's
	// verdict (red team round 15, R15a-25: learned as ro
	// shared/production, read through .env by the next run).
	if pr.notLearnable != "" {
		return "", pr.notLearnable
	} else if slices.ContainsFunc(pr.denied, func(d string) bool { return holds(d, path) || holds(d, target) }) {
		return "deny pattern (--deny, --deny-secrets) by the name of a link in the policy", ""
	}
	return "", ""
}

// agentConfigAbove names the directory above the workspace ws (not
// inside ws) whose agent configuration path is (its mise.toml,
// .vscode/tasks.json, .envrc: --protect-agent-config's names taken
// relative to it), "" for none.
func agentConfigAbove(ws, path string) string {
	if holds(ws, path) {
		return ""
	}
	for d := filepath.Dir(ws); ; d = filepath.Dir(d) {
		if holds(d, path) {
			if w, err := jail.New(d, jail.WithProtectedAgentConfig()); err == nil {
				n := w.Narrowing(path)
				w.Close()
				if n&jail.NarrowAgentConfig != 0 {
					return d
				}
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// linkAliases returns the names path has through the symbolic links
// directly in HOME, in HOME/.config and in the four directories above
// path that lead to it or to a directory above it: ~/.aws/credentials
// for dotfiles/aws/credentials when ~/.aws -> dotfiles/aws,
// shared/.env for shared/env/production when shared/.env ->
// env/production (red team round 13, R13-1: a link outside HOME). The
// kernel's records name the real path only; these are the names a
// command is likely to have used. homeLinks (landlock.HomeLinks: HOME's
// hidden directories four levels down and $XDG_CONFIG_HOME, as the carve
// walk reads them) are names too (red team round 15, R15a-5:
// ~/.docker/config.json -> ../dotfiles/docker/config.json, a file link
// inside a real directory, was learned by its dotfiles path).
func linkAliases(path string, homeLinks []string) []string {
	var dirs []string
	if home := jail.HomeDir(); home != "" {
		dirs = append(dirs, home, filepath.Join(home, ".config"))
	}
	for d, i := filepath.Dir(path), 0; i < 4; d, i = filepath.Dir(d), i+1 {
		if !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
		if d == "/" {
			break
		}
	}
	var out []string
	alias := func(l string) {
		t, err := filepath.EvalSymlinks(l)
		if err != nil || !holds(t, path) {
			return
		}
		if a := l + strings.TrimPrefix(path, t); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type()&os.ModeSymlink != 0 {
				alias(filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, l := range homeLinks {
		alias(l)
	}
	return out
}

// narrowed names the protection ws puts on path for right, "" for none.
func narrowed(ws *jail.Workspace, path string, right Right) string {
	// By name from "/" too: a deny pattern that names a directory above
	// path (the user's secrets/, **/Default/Local Storage/) denies what
	// is in it whatever the root a grant would make (red team round 32,
	// R32c-2: --learn granted files below a secrets/ outside the
	// workspace, its probe rooted at their own directory).
	n := ws.Narrowing(path) | ws.NameNarrowing(path)&jail.NarrowDenied
	if right == Write {
		// A set-ID or file-capability program is never learned
		// writable: a store through a mapping keeps its bits, and it
		// runs as its owner outside the sandbox (red team round 32,
		// R32a-4: the refused write became rw of a root 4755 program,
		// rewritten by the next --config run).
		if is, _ := setid.Path(path); is {
			return "a set-user-ID, set-group-ID or file-capability program (--protect-agent-config keeps it read-only; never learned writable)"
		}
	}
	switch {
	case n&jail.NarrowAgentConfig != 0:
		return "agent configuration (--protect-agent-config)"
	case n&jail.NarrowDenied != 0:
		return "deny pattern (--deny, --deny-secrets) or private key"
	case n&jail.NarrowReadOnly != 0 && (right == Write || right == Create):
		return "read-only path (--read-only, or the --config/--learn file)"
	}
	return ""
}

// pinned says why path or target (what a grant would name) is never
// granted: it is one of files (the --config and --learn files), a
// directory above one, or another name of one; "" for none.
func pinned(files []string, path, target string) string {
	for _, f := range files {
		if f == "" || !filepath.IsAbs(f) {
			continue
		}
		forms := []string{filepath.Clean(f)}
		if c, err := filepath.EvalSymlinks(f); err == nil {
			forms = append(forms, c)
		}
		fi, ferr := os.Stat(f)
		for _, p := range []string{path, target} {
			for _, form := range forms {
				if holds(p, form) {
					return "the --config or --learn file, or a directory above it: never granted, so the command cannot rewrite its next run's policy"
				}
			}
			if ferr != nil {
				continue
			}
			if pi, err := os.Stat(p); err == nil && os.SameFile(pi, fi) {
				return "another name (a link) of the --config or --learn file: never granted, so the command cannot rewrite its next run's policy"
			}
		}
	}
	return ""
}

// maxLinkWalk bounds the entries deniedLinkTo reads in the policy's
// roots; beyond it the path is not learnable (fail closed).
const maxLinkWalk = 1_000_000

// deniedLinkTo returns a symbolic link in ws's writable roots (the
// workspace, --rw: where a command's or the user's project links are),
// or directly in one of the four directories above a root, whose name ws
// denies and that leads to path or to a directory above it, "" for none.
// Links are not followed on the way.
func deniedLinkTo(ws *jail.Workspace, path string) (string, error) {
	links, err := deniedLinks(ws)
	if err != nil {
		return "", err
	}
	return linkTo(links, path), nil
}

// deniedLink is a symbolic link deniedLinks found, with its target.
type deniedLink struct{ link, target string }

// linkTo is the first of links that leads to path or above it.
func linkTo(links []deniedLink, path string) string {
	for _, l := range links {
		if holds(l.target, path) {
			return l.link
		}
	}
	return ""
}

// deniedLinkTo is deniedLinkTo of c.WS, the links listed once with a
// Memo.
func (c PolicyClassifier) deniedLinkTo(path string) (string, error) {
	m := c.Memo
	if m == nil {
		return deniedLinkTo(c.WS, path)
	}
	m.mu.Lock()
	if !m.linked {
		list := func() { m.links, m.linksErr = deniedLinks(c.WS) }
		if c.Throttle != nil {
			c.Throttle(list) // a walk of the writable roots: charged as a probe
		} else {
			list()
		}
		m.linked = true
	}
	links, err := m.links, m.linksErr
	m.mu.Unlock()
	if err != nil {
		return "", err
	}
	return linkTo(links, path), nil
}

// deniedLinks lists deniedLinkTo's candidates: the symbolic links in
// ws's writable roots and directly in the four directories above a root
// whose names ws denies, with their targets, in deniedLinkTo's order.
func deniedLinks(ws *jail.Workspace) ([]deniedLink, error) {
	n := 0
	var found []deniedLink
	for _, r := range ws.Roots() {
		if r.Mode != jail.ReadWrite {
			continue
		}
		err := filepath.WalkDir(r.Path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if n++; n > maxLinkWalk {
				return fmt.Errorf("more than %d entries in the policy's roots", maxLinkWalk)
			}
			if d.Type()&fs.ModeSymlink == 0 || ws.Narrowing(p)&jail.NarrowDenied == 0 {
				return nil
			}
			if t, err := filepath.EvalSymlinks(p); err == nil {
				found = append(found, deniedLink{p, t})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// And the four directories above each root, as the carve reads them
	// (app/.aws -> ../shared/aws with app/ws as the workspace: red team
	// round 16, R16-11).
	seen := map[string]bool{}
	for _, r := range ws.Roots() {
		for d, i := filepath.Dir(r.Path), 0; i < 4 && !seen[d]; d, i = filepath.Dir(d), i+1 {
			seen[d] = true
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				p := filepath.Join(d, e.Name())
				if e.Type()&fs.ModeSymlink == 0 || ws.NameNarrowing(p)&jail.NarrowDenied == 0 {
					continue
				}
				if t, err := filepath.EvalSymlinks(p); err == nil {
					found = append(found, deniedLink{p, t})
				}
			}
			if d == "/" {
				break
			}
		}
	}
	return found, nil
}
