package landlock

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/landjail/landjail/internal/gitignore"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/presetpaths"
	"github.com/landjail/landjail/jail"
)

// abiConfigs is go-landlock's ABI table, indexed by ABI version: the rights
// and scopes each version handles. Index 0 is "no Landlock".
var abiConfigs = []golandlock.Config{
	{}, golandlock.V1, golandlock.V2, golandlock.V3, golandlock.V4, golandlock.V5,
	golandlock.V6, golandlock.V7, golandlock.V8, golandlock.V9, golandlock.V10,
	golandlock.V11,
}

// latestKnownABI is the newest ABI go-landlock v0.11.0 describes; a newer
// kernel is used as this one.
var latestKnownABI = len(abiConfigs) - 1

func abiConfig(abi int) golandlock.Config {
	return abiConfigs[min(max(abi, 0), latestKnownABI)]
}

// Rights masks, from go-landlock's constants.
const (
	// fileRights are the only rights a rule on a non-directory may carry
	// (the kernel's LANDLOCK_ACCESS_FILE); EINVAL otherwise.
	fileRights = golandlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile |
		ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev)

	// RightsRead: read files and list directories.
	RightsRead = golandlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir)
	// RightsReadExec: RightsRead plus execute.
	RightsReadExec = RightsRead | golandlock.AccessFSSet(ll.AccessFSExecute)
	// RightsReadWriteFile: read, write and truncate a single file (device
	// nodes such as /dev/null); no ioctl.
	RightsReadWriteFile = golandlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSWriteFile | ll.AccessFSTruncate)
)

// RightsAll is every filesystem right go-landlock knows (ABI 11): what a
// ReadWrite root gets, fitted to the running ABI.
var RightsAll = golandlock.V11.HandledAccessFS

// modeRights maps a policy Mode to Landlock rights (before ABI fitting).
func modeRights(m jail.Mode) golandlock.AccessFSSet {
	switch m {
	case jail.ReadOnly:
		return RightsRead
	case jail.ReadExec:
		return RightsReadExec
	case jail.ReadWrite:
		return RightsAll
	}
	return 0
}

// request is everything Compile needs from a policy and Options, with no
// kernel and no file system: the input of plan.
type request struct {
	rules        []Rule
	net          bool // restrict the network
	connect      []uint16
	bind         []uint16
	proxy        []uint16 // Options.ProxyTCP
	transparent  []uint16 // Options.TransparentTCP
	scope        bool
	strict       bool
	denyPatterns []string
	// policyRoots: the first policyRoots rules are the policy's roots,
	// the ones carves are compiled out of.
	policyRoots int
	carves      []carve
	// noCarve is Options.NoCarve.
	noCarve bool
	// namespaces is Options.Namespaces; viewErr, set by compile, says why
	// this process cannot build the namespace view (nil: it can).
	namespaces bool
	system     bool   // Options.System
	shmDir     string // set by compile: the directory the view binds on /dev/shm ("" for none)
	viewErr    error
	// mountBudget, set by compile when checkMounts, is how many mounts
	// the view may add (nsview.MountBudget); checkViewMounts refuses a
	// view that needs more.
	mountBudget int
	checkMounts bool
	// viewCarves are the carves the namespace view takes over (masks and
	// read-only mounts); set by plan when the layer is in force.
	viewCarves []carve
	// sweep is Options.SweepAgentConfig.
	sweep bool
}

func newRequest(ws *jail.Workspace, opt Options) (request, error) {
	req := request{
		net:          !opt.NetHost,
		scope:        !opt.NoScope,
		strict:       opt.Strict,
		denyPatterns: ws.DenyPatterns(),
		noCarve:      opt.NoCarve,
		namespaces:   opt.Namespaces,
		system:       opt.System,
		sweep:        opt.SweepAgentConfig,
	}
	if req.net {
		req.connect = opt.ConnectTCP
		req.bind = opt.BindTCP
		req.proxy = opt.ProxyTCP
		req.transparent = opt.TransparentTCP
	}
	for i, r := range ws.Roots() {
		src := r.Mode.String()
		if i == 0 {
			src = "workspace"
		}
		req.rules = append(req.rules, Rule{Path: r.Path, Access: modeRights(r.Mode), Source: src})
	}
	req.policyRoots = len(req.rules)
	// The rules granted outside the policy's roots: the walk carves a
	// denied link's target there too (grantedTarget).
	var granted []Rule
	if opt.System {
		granted = append(granted, SystemRules(!opt.NetHost && len(opt.ConnectTCP) == 0)...)
	}
	if opt.TmpDir != "" {
		granted = append(granted, Rule{Path: opt.TmpDir, Access: RightsAll, Source: "tmp"})
	}
	for _, r := range opt.Extra {
		if r.Source == "" {
			r.Source = "extra"
		}
		granted = append(granted, r)
	}
	var err error
	req.carves, err = collectCarves(ws, opt, req.rules, granted...)
	if err != nil {
		return req, err
	}
	if ws.Unrestricted() {
		req.rules = append(req.rules, Rule{Path: "/", Access: RightsAll, Source: "unrestricted"})
	}
	outside := len(req.rules)
	req.rules = append(req.rules, granted...)
	carves, drop := literalDenied(ws, req.rules[outside:])
	req.carves = append(req.carves, carves...)
	req.carves = append(req.carves, carveAliases(req.carves)...)
	carveBelowOutside(req.rules[outside:], req.carves)
	if len(drop) > 0 {
		req.rules = slices.DeleteFunc(req.rules, func(r Rule) bool { return drop[r.Path] && r.Source != "workspace" })
	}
	return req, nil
}

// carveBelowOutside marks CarveBelow every rule granted outside the
// policy's roots (the system preset, toolchain presets, the private
// TMPDIR and HOME, Extra) that holds a carve-out: Landlock grants the
// union of the rules on a file's ancestors, so the system preset's /usr
// gave back what the workspace /usr/src/app carved out of itself, its
// .env and keys, under Landlock alone (red team round 25, R25b-4: the
// working directory of many container images). Carved, such a rule
// grants the entries of each directory on the way but the one leading to
// the carved path, as a policy root's carving does. A rule's path that
// is a link (merged /usr's /lib) is compared, and carved, as its target,
// as literalDenied does.
func carveBelowOutside(rules []Rule, carves []carve) {
	if len(carves) == 0 {
		return
	}
	// Every directory above a carved path (carved paths are canonical):
	// a rule holds a carve-out when its canonical path is one of them.
	above := map[string]bool{}
	for _, c := range carves {
		for d := filepath.Dir(c.path); !above[d]; d = filepath.Dir(d) {
			above[d] = true
			if d == "/" {
				break
			}
		}
	}
	// No syscall unless a rule shares a top-level directory with a
	// carved path: the usual workspace (/home, /root, /srv) shares none
	// with the system preset (/usr, /etc, /dev) or its links into /usr,
	// and this runs on every start (issue 25). Otherwise a rule's path
	// is resolved only below a top-level link (merged /usr's /lib,
	// /bin): one lstat per top-level name.
	topOf := func(p string) string {
		t, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		return "/" + t
	}
	shared := false
	for i := 0; i < len(rules) && !shared; i++ {
		t := topOf(rules[i].Path)
		shared = t != "/" && above[t]
	}
	if !shared {
		return
	}
	linkTop := map[string]bool{}
	for i := range rules {
		r := &rules[i]
		if r.CarveBelow || r.Source == "unrestricted" {
			continue
		}
		rp := r.Path
		top := topOf(rp)
		isLink, seen := linkTop[top]
		if !seen {
			fi, err := os.Lstat(top)
			isLink = err == nil && fi.Mode()&fs.ModeSymlink != 0
			linkTop[top] = isLink
		}
		if isLink {
			if t, err := filepath.EvalSymlinks(rp); err == nil {
				rp = t
			}
		}
		if !above[rp] {
			continue
		}
		for _, c := range carves {
			if within(c.path, rp) && r.Access&^c.access&^chainRights != 0 {
				r.Path, r.CarveBelow = rp, true
				break
			}
		}
	}
}

// literalDenied carves the policy's literal absolute deny patterns
// (--deny /etc/pip.conf: no wildcard) out of the rules granted outside
// the policy's roots (the system preset, toolchain presets, the private
// TMPDIR and HOME, Extra), marking each rule that holds one CarveBelow:
// the walk of collectCarves reads the policy's roots only, so a --deny
// of a path the system preset grants was dropped for the command while
// resolve and the file tools refused it (red team round 23, R23a-2).
// Each path is taken with its symbolic links resolved (what Landlock
// checks), and only when it exists; a rule on the path itself (the
// preset's /etc/pip.conf) is dropped (drop). Patterns with a wildcard
// are not expanded there (that would walk /usr): README's threat model
// says so.
func literalDenied(ws *jail.Workspace, rules []Rule) (out []carve, drop map[string]bool) {
	for _, p := range ws.DenyPatterns() {
		p, ok := literalPattern(strings.TrimSuffix(p, "/"))
		if !ok || !filepath.IsAbs(p) {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		held := false
		for i := range rules {
			// A rule's path may be a link (merged /usr: the preset's
			// /lib -> usr/lib), which Landlock follows: compared, and
			// carved, as what it leads to (red team round 23, R23c-2:
			// /lib/x/creds.txt read through the /lib rule).
			rp := rules[i].Path
			if r, err := filepath.EvalSymlinks(rp); err == nil {
				rp = r
			}
			switch {
			case within(real, rp):
				rules[i].Path = rp
				rules[i].CarveBelow, held = true, true
			case real == rp || within(rp, real):
				// The rule is the denied path, or lies below it
				// (--deny /usr and the preset's /lib -> usr/lib:
				// R23c-2's addendum).
				if drop == nil {
					drop = map[string]bool{}
				}
				drop[rules[i].Path] = true
			}
		}
		if held {
			out = append(out, carve{path: real, source: SourceDenyPattern, exists: true})
		}
	}
	return out, drop
}

// SystemRules returns the system preset: what ordinary tools need to run.
// All paths are optional. noNet leaves out the resolver files
// (/etc/resolv.conf, /etc/hosts, ...). Not included on purpose: /etc as a
// whole (/etc/shadow), /root, /home, /proc, /sys.
func SystemRules(noNet bool) []Rule {
	var rules []Rule
	add := func(a golandlock.AccessFSSet, paths ...string) {
		for _, p := range paths {
			rules = append(rules, Rule{Path: p, Access: a, Optional: true, Source: "system"})
		}
	}
	add(RightsReadExec, presetpaths.ReadExec...)
	add(RightsRead, presetpaths.Read...)
	if !noNet {
		add(RightsRead, presetpaths.ReadNet...)
	}
	add(RightsReadWriteFile, presetpaths.ReadWriteFile...)
	return rules
}

// statFunc reports whether an existing path is a directory; an error
// wrapping fs.ErrNotExist for a missing one.
type statFunc func(path string) (isDir bool, err error)

// compiled is the kernel-free result of plan.
type compiled struct {
	attr   ll.RulesetAttr
	fit    golandlock.AccessFSSet // the rights rules were fitted to
	rules  []Rule                 // effective, ABI-fitted (requested rights when abi == 0)
	report Report
	// kinds: rules made by carving, path -> is a directory (as listed);
	// they are added without following symlinks.
	kinds map[string]bool
}

// plan fits req to abi: which rights are handled, each rule's effective
// rights, what is dropped and why. It touches no kernel; stat is asked
// whether each rule path is a directory, list for the entries of chain
// directories when something is carved out. In Strict mode it fails with
// an *ABIError or ErrNotEnforceable rather than drop a required feature.
//
// Four steps, one function each: classifyFeatures (what the kernel
// enforces, what it drops), carveRules (carve-outs into rules),
// fitRules (rights fitted to the ABI and to the kind of file), and
// planNotes (what the report says about the result).
func plan(req request, abi int, stat statFunc, list listFunc) (*compiled, error) {
	c := &compiled{}
	rep := &c.report
	rep.ABI = abi
	rep.Strict = req.strict
	rep.Level = LevelLandlock
	if abi == 0 {
		rep.Level = LevelPathCheck
	}

	req = chooseLayer(req, abi, rep)
	h := classifyFeatures(req, abi, rep)
	if req.strict {
		if err := strictError(abi, rep.Dropped); err != nil {
			return nil, err
		}
	}

	rules := req.rules
	carving := len(req.carves) > 0 && !req.noCarve
	if carving {
		var err error
		rules, err = c.carveRules(req, list)
		if err != nil {
			return nil, err
		}
	}

	// Without Landlock keep the requested rights (the path-check fallback
	// consults them); otherwise fit them to the handled set.
	c.fit = h.fs
	if abi == 0 {
		c.fit = abiConfig(latestKnownABI).HandledAccessFS
	}
	var err error
	c.rules, rep.Skipped, err = fitRules(rules, c.fit, c.kinds, stat)
	if err != nil {
		return nil, err
	}
	rep.Rules = c.rules

	if rep.Layer == LayerNamespaces {
		viewLists(req, rep)
		if req.checkMounts {
			if err := checkViewMounts(req, rep); err != nil {
				return nil, err
			}
		}
	}
	if req.strict && req.namespaces && rep.Layer == LayerLandlockOnly && len(rep.FrozenDirs) > 0 {
		return nil, fmt.Errorf("%w: the namespace layer is unavailable (%s), and carving the policy's deny and read-only paths out of Landlock rules would freeze %d directories (first: %s); --no-namespaces accepts frozen directories, --best-effort runs anyway", ErrNotEnforceable, rep.LayerReason, len(rep.FrozenDirs), rep.FrozenDirs[0])
	}

	var widened []string
	if carving {
		widened = widenedCarves(c.rules, req.carves)
		if len(widened) > 0 && req.strict {
			return nil, fmt.Errorf("%w: %s", ErrNotEnforceable, widened[0])
		}
	}
	rep.Notes = planNotes(req, abi, c.rules, h.net, widened, carving)
	if rep.Layer == LayerNamespaces {
		rep.Notes = append(rep.Notes, viewNotes...)
	}
	if len(rep.Swept) > 0 {
		rep.Notes = append(rep.Notes, sweptNote)
	}
	if h.net != 0 {
		rep.ConnectTCP = sortedPorts(req.connect)
		rep.BindTCP = sortedPorts(req.bind)
		rep.ProxyTCP = sortedPorts(req.proxy)
		rep.TransparentTCP = sortedPorts(req.transparent)
	}

	if abi > 0 {
		c.attr = ll.RulesetAttr{
			HandledAccessFS:  uint64(h.fs),
			HandledAccessNet: uint64(h.net),
			Scoped:           uint64(h.scoped),
		}
		rep.HandledFS = accessNames(h.fs)
		rep.HandledNet = namesOf(h.net, netRightNames)
		rep.Scoped = namesOf(h.scoped, scopeNames)
	}
	return c, nil
}

// handled is what a ruleset handles at one ABI.
type handled struct {
	fs     golandlock.AccessFSSet
	net    golandlock.AccessNetSet
	scoped golandlock.ScopedSet
}

// classifyFeatures files every feature req asks for (filesystem rights,
// network rights unless the host network is kept, scopes unless
// Options.NoScope, carve-outs when there are any), in ABI order, under
// rep.Enforced or rep.Dropped, and returns what the ruleset handles at
// abi.
func classifyFeatures(req request, abi int, rep *Report) handled {
	cfg := abiConfig(abi)
	latest := abiConfig(latestKnownABI)
	h := handled{fs: cfg.HandledAccessFS}
	for _, n := range fsRightNames {
		if n.bit&latest.HandledAccessFS == 0 {
			continue
		}
		f := Feature{Name: "fs." + n.name, ABI: minABIFS(n.bit), Required: n.bit&ll.AccessFSResolveUnix == 0}
		classify(rep, f, n.bit&h.fs != 0)
	}
	if req.net {
		for _, n := range netRightNames {
			if n.bit&latest.HandledAccessNet == 0 {
				continue
			}
			f := Feature{Name: "net." + n.name, ABI: minABINet(n.bit), Required: n.bit&(ll.AccessNetBindTCP|ll.AccessNetConnectTCP) != 0}
			if classify(rep, f, n.bit&cfg.HandledAccessNet != 0) {
				h.net |= n.bit
			}
		}
	}
	if req.scope {
		for _, n := range scopeNames {
			if n.bit&latest.Scoped == 0 {
				continue
			}
			f := Feature{Name: "scope." + n.name, ABI: minABIScope(n.bit), Required: true}
			if classify(rep, f, n.bit&cfg.Scoped != 0) {
				h.scoped |= n.bit
			}
		}
	}
	if len(req.carves)+len(req.viewCarves) > 0 {
		f := Feature{Name: "carve-outs", ABI: 1, Required: true}
		if req.noCarve && len(req.carves) > 0 {
			f.ABI = 0 // no ABI helps: Strict reports ErrNotEnforceable
			f.Reason = "Options.NoCarve: deny patterns and read-only paths below allowed roots stay reachable for children"
			if len(req.viewCarves) > 0 {
				f.Reason = "Options.NoCarve: protected names that do not exist yet may be created by children (existing ones stay masked or read-only by the namespace view)"
			}
			rep.Dropped = append(rep.Dropped, f)
		} else {
			classify(rep, f, abi > 0)
		}
	}
	return h
}

// carveRules returns req's rules with the carve-outs compiled out of the
// policy's roots (carveAll), recording the rules carving made in
// c.kinds and the carve-outs in the report.
func (c *compiled) carveRules(req request, list listFunc) ([]Rule, error) {
	rep := &c.report
	rules, chainDirs, kinds, err := carveAll(req.rules, req.policyRoots, req.carves, list)
	if err != nil {
		return nil, err
	}
	rep.ChainDirs, c.kinds = chainDirs, kinds
	rep.CarveRules = len(kinds)
	for _, r := range rules {
		if r.Source == "chain" && rep.ABI > 0 { // without Landlock nothing is frozen
			rep.FrozenDirs = append(rep.FrozenDirs, r.Path)
		}
	}
	for _, cv := range req.carves {
		mode := CarveReadOnly
		if cv.access == 0 {
			mode = CarveDeny
		}
		rep.CarveOuts = append(rep.CarveOuts, CarveOut{Path: cv.path, Mode: mode, Source: cv.source, Exists: cv.exists})
	}
	return rules, nil
}

// fitRules narrows each rule's rights to fit, and to the rights a
// non-directory may carry (fileRights) when the path is not a directory
// (kinds, for the rules carving made, else stat). A rule left with no
// right, or an optional one whose path stat fails on, is skipped; stat
// failing on a required rule is the error.
func fitRules(rules []Rule, fit golandlock.AccessFSSet, kinds map[string]bool, stat statFunc) ([]Rule, []Skipped, error) {
	var out []Rule
	var skipped []Skipped
	for _, r := range rules {
		isDir, known := kinds[r.Path]
		var err error
		if !known {
			isDir, err = stat(r.Path)
		}
		if err != nil {
			if r.Optional {
				skipped = append(skipped, Skipped{Path: r.Path, Reason: err.Error()})
				continue
			}
			return nil, nil, err
		}
		r.Access &= fit
		if !isDir {
			r.Access &= fileRights
		}
		if r.Access == 0 {
			skipped = append(skipped, Skipped{Path: r.Path, Reason: "no right left at this ABI"})
			continue
		}
		out = append(out, r)
	}
	return out, skipped, nil
}

// planNotes returns the report's notes, in this order: rules widened by
// a rule above them, carve-outs widened again (widened) and what carving
// does not cover, then the network.
func planNotes(req request, abi int, rules []Rule, handledNet golandlock.AccessNetSet, widened []string, carving bool) []string {
	notes := nestedNotes(rules)
	if carving {
		notes = append(notes, widened...)
		notes = append(notes, carveNotes...)
	}
	if handledNet != 0 {
		notes = append(notes, "TCP rules do not cover MPTCP sockets (socket(..., IPPROTO_MPTCP), Go's net.Listen default): a child can bind and connect with MPTCP unless a seccomp filter refuses it")
		if len(req.connect) == 0 && len(req.bind) == 0 {
			if len(req.proxy) > 0 {
				notes = append(notes, fmt.Sprintf("TCP: connect only to the landjail proxy port %v", sortedPorts(req.proxy)))
			} else {
				notes = append(notes, "TCP: no port allowed")
			}
		}
	} else if req.net && (len(req.connect) > 0 || len(req.bind) > 0 || len(req.proxy) > 0) && abi > 0 {
		notes = append(notes, "TCP port rules unused: the network is not restricted at this ABI")
	}
	if !req.net {
		notes = append(notes, "network not restricted (host network)")
	}
	if handledNet&(ll.AccessNetBindUDP|ll.AccessNetConnectSendUDP) != 0 {
		notes = append(notes, "UDP: all ports denied (DNS over UDP included)")
	}
	return notes
}

// classify files f under rep.Enforced or rep.Dropped and reports whether
// it is enforced.
func classify(rep *Report, f Feature, ok bool) bool {
	if ok {
		rep.Enforced = append(rep.Enforced, f)
		return true
	}
	if rep.ABI == 0 {
		f.Reason = "no usable Landlock"
	} else {
		f.Reason = fmt.Sprintf("needs Landlock ABI %d, kernel has %d", f.ABI, rep.ABI)
	}
	rep.Dropped = append(rep.Dropped, f)
	return false
}

func strictError(abi int, dropped []Feature) error {
	var missing FeatureList
	want := 0
	for _, f := range dropped {
		if !f.Required || f.ABI == 0 {
			continue
		}
		missing = append(missing, f)
		want = max(want, f.ABI)
	}
	if len(missing) > 0 {
		return &ABIError{Have: abi, Want: want, Missing: missing}
	}
	for _, f := range dropped {
		if f.Required {
			return fmt.Errorf("%w: %s: %s", ErrNotEnforceable, f.Name, f.Reason)
		}
	}
	return nil
}

func minABIFS(bit golandlock.AccessFSSet) int {
	return slices.IndexFunc(abiConfigs, func(c golandlock.Config) bool { return c.HandledAccessFS&bit != 0 })
}

func minABINet(bit golandlock.AccessNetSet) int {
	return slices.IndexFunc(abiConfigs, func(c golandlock.Config) bool { return c.HandledAccessNet&bit != 0 })
}

func minABIScope(bit golandlock.ScopedSet) int {
	return slices.IndexFunc(abiConfigs, func(c golandlock.Config) bool { return c.Scoped&bit != 0 })
}

func sortedPorts(p []uint16) []uint16 {
	out := slices.Clone(p)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return slices.Compact(out)
}

// nestedNotes names rules whose rights are widened by a rule on a
// directory above them: Landlock grants the union along the path, so a
// read-only root inside a read-write one is writable for children.
func nestedNotes(rules []Rule) []string {
	byPath := make(map[string][]Rule, len(rules))
	for _, r := range rules {
		byPath[r.Path] = append(byPath[r.Path], r)
	}
	var notes []string
	for _, in := range rules {
		if in.Source == "chain" {
			continue
		}
		for dir := in.Path; dir != "/"; {
			dir = filepath.Dir(dir)
			for _, out := range byPath[dir] {
				if out.Source == "chain" {
					continue // read_dir only, by design (carve.go)
				}
				if extra := out.Access &^ in.Access; extra != 0 {
					notes = append(notes, fmt.Sprintf("%s %s lies inside %s %s: children also get %v there", in.Source, in.Path, out.Source, out.Path, extra))
				}
			}
		}
	}
	return notes
}

// viewNotes are the limits of the namespace layer, stated in every report
// where it is in force.
var viewNotes = []string{
	"namespaces: denied files and directories are covered by inaccessible (mode 0000, EACCES) read-only ones (masks) when the ruleset is compiled; a file that starts to match a deny pattern later is not masked",
	"namespaces: everything outside the writable roots is read-only (EROFS for writes, chmod, chown, utime, setxattr); /tmp and /dev/shm are private to the spawner thread's children",
}

// sweptNote is stated when protected names were left to the sweep.
const sweptNote = "agent configuration (--protect-agent-config): names that do not exist (Report.Swept), and any in directories the command creates, are not stopped by a rule (nothing is frozen); the sweep after the command renames what it created to NAME.landjail-quarantined-TIME and names it"

// chooseLayer sets rep.Layer and rep.LayerReason and, for
// LayerNamespaces, moves every carve of an existing path from req.carves
// to req.viewCarves (the view masks or remounts it; Landlock then grants
// the roots whole). A carve of a missing path (an agent-config file that
// does not exist) stays a Landlock carve-out: no mount can stop a name
// from being created; with req.sweep it is left to the caller's sweep
// instead (rep.Swept), so that nothing is frozen.
func chooseLayer(req request, abi int, rep *Report) request {
	rep.Layer = LayerLandlockOnly
	switch {
	case abi == 0:
		rep.Layer, rep.LayerReason = LayerPathCheck, "no usable Landlock"
		return req
	case !req.namespaces:
		rep.LayerReason = "namespaces not requested (--no-namespaces)"
		return req
	case req.viewErr != nil:
		rep.LayerReason = req.viewErr.Error()
		return req
	}
	for _, w := range viewWritable(req, privateTmpOK(req)) {
		if w == "/" {
			rep.LayerReason = "the policy is unrestricted: / is writable"
			return req
		}
	}
	rep.Layer = LayerNamespaces
	if req.shmDir != "" && privateTmpOK(req) {
		// The view's /dev/shm is this private directory: POSIX shared
		// memory and semaphores (Python multiprocessing) are granted there.
		req.rules = append(req.rules[:len(req.rules):len(req.rules)], Rule{Path: req.shmDir, Access: RightsAll, Source: "shm"})
		rep.SharedMemory = req.shmDir
	}
	// Options.NoCarve drops only what would freeze a directory (the
	// residual carves of names that do not exist yet): masks and
	// read-only mounts of existing paths freeze nothing and stay.
	var residual []carve
	for _, cv := range req.carves {
		switch {
		case cv.exists:
			req.viewCarves = append(req.viewCarves, cv)
		case req.sweep && cv.source == SourceAgentConfig:
			rep.Swept = append(rep.Swept, cv.path)
		default:
			residual = append(residual, cv)
		}
	}
	req.carves = residual
	return req
}

// viewWritable is the writable roots of the view: every rule of req
// (policy roots, TmpDir, Extra; not the system preset, whose writable
// entries are device files, writable on a read-only mount too) that
// grants a write right, and every rule below /tmp or /dev/shm (the view
// replaces those by private tmpfs; a rule there is re-attached, and made
// read-only again by viewReadOnly when it grants no write).
func viewWritable(req request, privTmp bool) []string {
	var out []string
	for _, r := range req.rules {
		if r.Source == "system" || r.Source == "shm" {
			continue
		}
		if r.Access&writeRights != 0 || privTmp && belowPrivateTmp(r.Path) {
			out = append(out, r.Path)
		}
	}
	return out
}

// writeRights are the rights a read-only mount takes away.
const writeRights = golandlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
	ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate)

// privateTmpOK reports whether the view may replace /tmp and /dev/shm by
// private ones: not when a rule grants /tmp or /dev/shm themselves or a
// directory above them ("--rox /" asks for the host's /tmp, which the
// view then shows read-only).
func privateTmpOK(req request) bool {
	for _, r := range req.rules {
		if r.Source == "system" {
			continue
		}
		for _, d := range []string{"/tmp", "/dev/shm"} {
			if r.Path == d || r.Path == "/" || strings.HasPrefix(d, r.Path+"/") {
				return false
			}
		}
	}
	return true
}

func belowPrivateTmp(p string) bool {
	return p == "/tmp" || p == "/dev/shm" || strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/dev/shm/")
}

// viewLists fills the report's account of the view: masks (deny
// carves), read-only mounts (read-only carves, and read-only rules
// re-attached below /tmp or /dev/shm), writable roots (minus optional
// rules that were skipped) and the private network.
func viewLists(req request, rep *Report) {
	skipped := map[string]bool{}
	for _, s := range rep.Skipped {
		skipped[s.Path] = true
	}
	for _, cv := range req.viewCarves {
		if cv.access == 0 {
			rep.Masks = append(rep.Masks, cv.path)
		} else {
			rep.ReadOnlyMounts = append(rep.ReadOnlyMounts, cv.path)
		}
	}
	// The same files through other mounts of their file system
	// (R23a-9). Read-only carves need none: outside the writable roots
	// the view is read-only already.
	rep.Masks = append(rep.Masks, maskAliases(rep.Masks)...)
	rep.PrivateTmp = privateTmpOK(req)
	rep.WritableTmp = rep.PrivateTmp && tmpRuleSafe(req)
	for _, r := range req.rules {
		if rep.PrivateTmp && r.Source != "system" && r.Source != "shm" && belowPrivateTmp(r.Path) && r.Access&writeRights == 0 && !skipped[r.Path] {
			rep.ReadOnlyMounts = append(rep.ReadOnlyMounts, r.Path)
		}
	}
	for _, w := range viewWritable(req, rep.PrivateTmp) {
		switch {
		case skipped[w] || slices.Contains(rep.Writable, w) || slices.Contains(rep.reattach, w):
		case slices.Contains(rep.ReadOnlyMounts, w):
			// A read-only root below the private /tmp: the view
			// re-attaches it there and makes it read-only again; the
			// report does not call it writable (red team round 31,
			// R31d-6: --ro /tmp/x was listed as "writable").
			rep.reattach = append(rep.reattach, w)
		default:
			rep.Writable = append(rep.Writable, w)
		}
	}
	rep.PrivateNetwork = req.net && len(req.connect) == 0 && len(req.bind) == 0
}

// tmpRuleSafe reports whether a rule granting every right on the view's
// private /tmp (Report.WritableTmp) changes nothing for anything below it
// that the policy restricts: Landlock grants an access when any rule on
// the path's way up grants it, across mount points, so such a rule covers
// every root re-attached inside the tmpfs. It is safe only when each rule
// below /tmp or /dev/shm grants RightsAll already and no carve-out (a
// frozen directory, a name that does not exist yet) lies below them.
func tmpRuleSafe(req request) bool {
	for _, r := range req.rules {
		if belowPrivateTmp(r.Path) && r.Access&RightsAll != RightsAll {
			return false
		}
	}
	return !slices.ContainsFunc(req.carves, func(cv carve) bool { return belowPrivateTmp(cv.path) })
}

// checkViewMounts refuses, with ErrMountLimit, a view that needs more
// mounts than req.mountBudget: one mask per denied file, so a tree with
// more files matching a deny pattern than fs.mount-max allows cannot be
// masked. Nothing has been built yet (a view that does not fit used to
// fail at the mount that overflowed). The error names the deny patterns
// with the most masks and their counts. View.Mounts leaves out the
// mounts recursive clones copy along, so a view that passes here can
// still be refused by Enter, which counts them (the same ErrMountLimit).
func checkViewMounts(req request, rep *Report) error {
	v := nsview.New().Writable(rep.viewWritable()...).ReadOnly(rep.ReadOnlyMounts...).Mask(rep.Masks...)
	if rep.PrivateTmp {
		v = v.PrivateTmp()
	}
	if rep.SharedMemory != "" {
		v = v.SharedMemory(rep.SharedMemory)
	}
	need, err := v.Mounts()
	if err != nil || need <= req.mountBudget {
		return nil // a bad path: Enter reports it
	}
	return fmt.Errorf("%w: %d masks (%s) and %d other mounts of the namespace view need %d mounts, and fs.mount-max (/proc/sys/fs/mount-max) leaves %d; nothing was run. Narrow the deny patterns, or run without the namespace layer (Options.Namespaces false; landjail: --no-namespaces), where Landlock carve-outs deny the files without a mount each",
		ErrMountLimit, len(rep.Masks), maskCounts(req), need-len(rep.Masks), need, req.mountBudget)
}

// maskCounts says which patterns the view's masks come from, most masks
// first: `deny pattern "*.env": 110000` for each deny pattern (a path
// two patterns match counts for both), then the private keys and the
// unlistable directories. At most four entries, then "...". Used only
// on the way to an error: it matches every mask against every pattern.
func maskCounts(req request) string {
	roots := map[string]bool{}
	for _, r := range req.rules[:req.policyRoots] {
		roots[r.Path] = true
	}
	type count struct {
		what string
		n    int
	}
	var pats []string
	for _, p := range req.denyPatterns {
		if p = strings.TrimSpace(p); p != "" && p[0] != '!' && p[0] != '#' {
			pats = append(pats, p)
		}
	}
	matchers := make([]*gitignore.Matcher, len(pats))
	for i, p := range pats {
		matchers[i], _ = gitignore.New("", []string{p}) // nil (no match) for a pattern jail would have refused
	}
	counts := make([]count, len(pats))
	for i, p := range pats {
		counts[i].what = fmt.Sprintf("deny pattern %q", p)
	}
	var keys, unlistable, other int
	for _, cv := range req.viewCarves {
		if cv.access != 0 {
			continue
		}
		switch cv.source {
		case SourcePrivateKey:
			keys++
			continue
		case SourceUnlistable:
			unlistable++
			continue
		}
		rel, abs := "", strings.TrimPrefix(cv.path, "/")
		for d := cv.path; d != "/"; {
			if d = filepath.Dir(d); roots[d] {
				rel = strings.TrimPrefix(strings.TrimPrefix(cv.path, d), "/")
				break
			}
		}
		matched := false
		for i, m := range matchers {
			hit := func(p string) bool { return p != "" && (m.Ignored(p, false) || m.Ignored(p, true)) }
			if hit(rel) || strings.HasPrefix(pats[i], "/") && hit(abs) {
				counts[i].n++
				matched = true
			}
		}
		if !matched {
			other++
		}
	}
	counts = append(counts, count{"private keys", keys}, count{"unlistable directories", unlistable}, count{"other", other})
	counts = slices.DeleteFunc(counts, func(c count) bool { return c.n == 0 })
	slices.SortStableFunc(counts, func(a, b count) int { return b.n - a.n })
	var parts []string
	for i, c := range counts {
		if i == 4 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%s: %d", c.what, c.n))
	}
	return strings.Join(parts, ", ")
}

// literalPattern returns the path a deny pattern names when it names one
// literal path (gitignore's syntax, as jail matches it: a backslash
// escapes the next character; '*', '?' and '[' unescaped are wildcards;
// a leading '!' re-includes), and whether it does. '{' is no wildcard
// there: --deny '/opt/app/{prod}.json' names that file (red team round
// 23, R23c-6: escaped and braced names were skipped, and read).
func literalPattern(p string) (string, bool) {
	if strings.HasPrefix(p, "!") {
		return "", false
	}
	if !strings.ContainsAny(p, `*?[\`) {
		return p, true
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 == len(p) {
				return "", false
			}
			i++
			b.WriteByte(p[i])
		case '*', '?', '[':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
