// Package sandbox assembles a confined run, once, for every entry point:
// `landjail run`, `landjail-mcp` and its bash tool are thin clients of it.
//
// A run is built in two steps. [New] turns the parsed options
// (cliopts.Options: flags and --config) into the policy (a
// jail.Workspace, the one choke point) and the first seccomp filter.
// The caller then decides how it runs the command (execve in place, or
// supervised: see [Plan.SupervisedFilter]) and calls [Plan.Prepare], which
// makes, in this order and nowhere else: the private TMPDIR, the
// command's HOME (with a private one under the TMPDIR when the caller's
// cannot be written), the environment, the --allow-domain proxy, the
// Landlock ruleset (namespace view, carve-outs), the seccomp filter for
// the layer in force, the network mode, and every warning a user must
// see on stderr (dropped features, frozen directories, a namespace
// layer that fell back). [Plan.Command] then gives an exec.Cmd wired
// with all of it; [Plan.Close] undoes what Prepare made.
//
// Under --strict every "best effort" step that would weaken the policy
// fails instead, with an error that names the flag.
//
// The plan follows the README's "one policy, enforced the same way in
// three places": the Workspace it holds is the one that jail.Resolve,
// the MCP file tools and landlock.Compile all use.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/cpushare"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/privdirs"
	"github.com/landjail/landjail/internal/setid"
	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// Settings is what an entry point adds to the options.
type Settings struct {
	// Stderr receives the warnings (one line each, "landjail: ...").
	Stderr io.Writer
	// Credential is the user the command runs as (--user), nil for the
	// caller.
	Credential *syscall.Credential
	// JailOptions are added to the policy (landjail-mcp: the read
	// tracker of its write tools).
	JailOptions []jail.Option
	// Env is prepended to the --env entries (--git-identity).
	Env []string
	// PrintRules: only the rules are wanted (landjail run --print-rules):
	// no TMPDIR, no proxy process, no warnings.
	PrintRules bool
	// Server: the policy also serves file tools (landjail-mcp): it then
	// holds the system preset's directories read-only
	// (cliopts.Options.SystemRoots), so that read_file reads what the
	// bash tool may read, as resolve answers.
	Server bool
	// RecordAfterStart: the caller calls Plan.StartRecord once the
	// command's Start returned. Prepare then leaves the live marker of a
	// run that is supervised for sure (a PID namespace: the command is
	// forked, never execve'd) unwritten until that call, instead of
	// writing it on the limits goroutine while the command is prepared:
	// on a two-CPU machine that write (≈0.1 ms) took a CPU from the
	// preparation and, as uid 65534, from the user-namespace stage (round
	// 10 of issue 25). Until the marker is written the run holds
	// privdirs' lock, so GC stays out as before.
	RecordAfterStart bool
}

// TmpMode says how long the private TMPDIR lives.
type TmpMode uint8

const (
	// TmpWorkspace is one directory per workspace and user, kept
	// between runs: $TMPDIR/landjail-UID-HASH (an execve'd command
	// leaves nobody to remove a per-run one).
	TmpWorkspace TmpMode = iota
	// TmpRun is a fresh directory per run, removed by Close.
	TmpRun
)

// Plan is one confined run (or one MCP server's bash calls) as the
// options ask for it. Its fields are read-only after Prepare.
type Plan struct {
	// Options are the parsed flags and --config.
	Options *cliopts.Options
	// WS is the policy. Plan owns it (Close closes it). For a server it
	// also holds the system preset's directories read-only (see
	// Settings.Server).
	WS *jail.Workspace
	// Env is the command's environment (exec.DefaultEnv plus HOME,
	// TMPDIR, --env and, with --allow-domain, the proxy variables).
	Env []string
	// Seccomp is the filter for the layer in force, nil with
	// --no-seccomp or when best effort dropped it.
	Seccomp *seccomp.Filter
	// Ruleset is the compiled Landlock ruleset (set by Prepare). Plan
	// owns it.
	Ruleset *landlock.Ruleset
	// Proxy is the --allow-domain proxy of a single run, nil without
	// --allow-domain (and for a server: see Plan.CompileCall).
	Proxy *cliopts.AllowProxy
	// Home is the command's HOME ("" when the command keeps --env HOME
	// or runs with --no-system).
	Home string

	rulesWS    *jail.Workspace // what Landlock compiles: WS without the system roots
	spec       limits.Spec     // the resource limits, parsed by New
	set        Settings
	seccompErr error
	snap       *sweep.Snapshot // TakeSweep's
	sticky     stickyVerdicts  // a server's link verdicts, kept for the session
	liveSweep  *sweep.Live     // WatchSweep's
	tmp        *privateTmp
	homeGrant  string // HOME granted read-write to the command ("" none)
	lopts      landlock.Options
	server     *callProxies
	live       *privdirs.Run // the record of the directories in use (landjail gc)
	recordDirs []string      // the directories live records, until startRecord
	// recordLater: the marker waits for StartRecord (Settings.RecordAfterStart).
	recordLater bool
	early       *limits.Pending // StartLimitsEarly's limits.Start, until StartLimits takes it
	held        heldRuns        // the groups WatchSweep's Throttle freezes
	// share is the --cpus share CPUThrottle charges (nil without
	// --cpus), made once.
	share     *cpushare.Share
	shareOnce sync.Once
}

// New builds the policy and the first seccomp filter from o. It starts
// nothing and writes nothing to disk. Errors: cliopts' policy errors
// (in the words of the command line), and a missing workspace.
func New(o *cliopts.Options, s Settings) (*Plan, error) {
	if s.Stderr == nil {
		s.Stderr = io.Discard
	}
	spec, err := limits.ParseFlags(o.LimitFlags())
	if err != nil {
		return nil, err
	}
	if !o.NoNamespaces {
		// Compile's namespace probe, and the network namespace when the
		// view will have one, overlap the work up to the exec.
		landlock.StartProbe(o.Net != "host" && len(o.ConnectTCP) == 0 && len(o.BindTCP) == 0)
	}
	ws, err := o.Policy(s.JailOptions...)
	if err != nil {
		return nil, err
	}
	p := &Plan{Options: o, WS: ws, rulesWS: ws, set: s, spec: spec}
	if s.Server && !o.NoSystem {
		// The same policy plus the system preset's directories,
		// read-only, for the file tools; Landlock keeps compiling from
		// the policy alone (the preset is its own rules, and walking
		// /usr for the deny patterns would cost a second per call).
		if p.WS, err = o.Policy(append(append(o.SystemRoots(), o.PresetRoots()...), s.JailOptions...)...); err != nil {
			ws.Close()
			return nil, err
		}
	}
	p.Seccomp, p.seccompErr = o.SeccompFilter()
	return p, nil
}

// SupervisedFilter reports whether the seccomp filter hands listen(2)
// to landjail (--bind-tcp, or UNIX sockets with the network
// restricted): the caller must then stay alive while the command runs.
func (p *Plan) SupervisedFilter() bool { return p.Seccomp.Supervised() }

// Prepare makes everything the command needs before it starts (see the
// package doc for the order). tmp says how long the private TMPDIR
// lives. On error nothing Prepare made is left (Close is still needed
// for the policy). Errors: the TMPDIR's and HOME's file-system errors,
// the proxy's start, landlock.Compile's (ErrWalkLimit told in flags),
// and --strict refusals (seccomp unavailable, the namespace layer
// unavailable, a network mode that is not airtight).
func (p *Plan) Prepare(tmp TmpMode) (err error) {
	o, stderr := p.Options, p.set.Stderr
	defer func() {
		if err != nil {
			p.undo()
		}
	}()
	pass := append(append([]string(nil), p.set.Env...), o.Env...)
	wantTmp := !o.NoSystem && !p.set.PrintRules && !cliopts.HasEnv(exec.DefaultEnv(p.WS, o.Env), "TMPDIR")
	if !p.set.PrintRules {
		p.live = privdirs.Begin() // landjail gc leaves what this run uses alone
	}
	if wantTmp {
		if p.tmp, err = newPrivateTmp(p.WS.Root(), tmp == TmpRun, p.set.Credential); err != nil {
			return fmt.Errorf("private TMPDIR: %w", err)
		}
	}
	if !o.NoSystem && !hasEnv(pass, "HOME") {
		home, grant, err := p.commandHome()
		if err != nil {
			return err
		}
		p.Home = home
		pass = append([]string{"HOME=" + home}, pass...)
		if grant && o.HomeRoot() == "" { // a --home DIR there already is the policy's (cliopts.Options.Policy)
			p.homeGrant = home
		}
	}
	p.Env = p.presetEnv(exec.DefaultEnv(p.WS, pass), pass)
	// The marker is written later, on another goroutine: the run holds
	// privdirs' lock until it is written. By the limits goroutine once
	// its sweep and the group are done, when it still takes work
	// (limits.Then: no goroutine started from this thread, and that CPU
	// is free by then); else by startRecord's.
	if o.Home == "" { // landjail's private HOME; never touch a --home DIR or the workspace
		p.recordDirs = []string{p.tmp.path(), p.Home}
	} else {
		p.recordDirs = []string{p.tmp.path()}
	}
	p.recordLater = p.set.RecordAfterStart && o.WantsPIDNamespace()
	if !p.set.PrintRules && !p.recordLater && p.live.RecordOn(limits.Then, p.recordDirs...) {
		p.recordDirs = nil
	}
	if !p.set.PrintRules {
		cliopts.WarnDNS(stderr, o)
		if o.ProtectAgentConfig {
			home, _ := os.UserHomeDir()
			warnUnprotectedRoots(stderr, o.RW, o.HomeRoot(), home, p.WS.Root())
		}
		if p.Proxy, err = o.NewAllowProxy(stderr); err != nil {
			return err
		}
	}
	p.lopts = o.LandlockOptions(p.tmp.path(), p.homeGrant)
	if err := deniedFileRoots(p.WS, p.lopts.Extra); err != nil {
		return err
	}
	p.lopts.LogDenials = o.Explain
	// The patterns are expanded as the command would list and read
	// (R30d-6): it runs as --user, or as this process's user, with no
	// capability.
	p.lopts.Credential = p.set.Credential
	// --protect-agent-config: names that do not exist yet (and nested
	// configuration) are swept after the command (TakeSweep and
	// FinishSweep, which every entry point calls) instead of frozen.
	p.lopts.SweepAgentConfig = true
	lopts := p.lopts
	lopts.ProxyTCP = p.Proxy.Ports()
	lopts.TransparentTCP = p.Proxy.TransparentPorts()
	if p.set.PrintRules {
		lopts.TransparentTCP = cliopts.TransparentPorts(o.AllowDomain)
	}
	if p.Ruleset, err = p.compile(lopts); err != nil {
		return err
	}
	if p.set.PrintRules {
		return nil
	}
	rep := p.Ruleset.Report()
	cliopts.WarnDropped(stderr, rep)
	warnFrozen(stderr, rep, o.NoNamespaces)
	if err := p.checkLayer(rep); err != nil {
		return err
	}
	if p.Seccomp != nil && rep.Layer != landlock.LayerNamespaces && !o.NoNamespaces {
		// The layer fell back: no private IPC namespace, so System V
		// IPC is refused as well (same Supervised).
		p.Seccomp, p.seccompErr = o.SeccompFilterFor(p.Ruleset)
	}
	if err := p.seccompErr; err != nil {
		if o.Strict {
			return fmt.Errorf("seccomp: %w", err)
		}
		fmt.Fprintf(stderr, "landjail: warning: best effort dropped the seccomp layer: %v\n", err)
	}
	if _, _, err := p.Proxy.Decide(p.Ruleset, o.NoNamespaces, p.Seccomp == nil, o.Strict); err != nil {
		return err
	}
	if p.Proxy.Transparent() && p.Seccomp != nil {
		// Transparent egress: the command's resolver reaches the DNS
		// responder over UDP (cliopts/egress.go).
		if p.Seccomp, err = o.SeccompFilterTransparent(p.Ruleset); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	p.Proxy.Warn(stderr)
	// --cpus bounds the command's group; the supervisor answering its
	// brokered calls works for it outside the group (red team round 22,
	// R22b-2).
	p.Seccomp.LimitSupervisorCPU(p.spec.CPUs)
	return p.checkAllowUnix(stderr)
}

// compile is landlock.Compile with its walk-limit error told in flags.
func (p *Plan) compile(lopts landlock.Options) (*landlock.Ruleset, error) {
	rs, err := landlock.Compile(p.rulesWS, lopts)
	if errors.Is(err, landlock.ErrWalkLimit) {
		limit := p.Options.WalkLimit
		if limit == 0 {
			limit = landlock.DefaultWalkLimit
		}
		return nil, &wordedError{fmt.Sprintf("expanding the --deny and --read-only patterns (--deny-secrets, --protect-agent-config included) visits more than %d entries (--walk-limit %d); nothing was run (raise --walk-limit N, or narrow the workspace)", limit, limit), err}
	}
	if err == nil {
		// What the children are denied, the file tools are too: the
		// targets of denied names that are links, and what a pattern
		// names through a directory link (red team round 9, R9-3),
		// which the tools' checks of canonical paths would allow under
		// the target's own name. The live watch of a run asks too (red
		// team round 15, R15a-17: a file denied through HOME's link was
		// restored unmasked while the command ran).
		denied, readOnly := rs.Report().DeniedPaths()
		if p.set.Server {
			// Kept for the session (red team round 15, R15a-24): the
			// compile already carved what earlier calls' links gave
			// (DenyPathsSet); the file tools keep them too.
			denied, readOnly = p.sticky.add(denied, readOnly)
		}
		p.WS.DenyPaths(denied, readOnly)
		if p.rulesWS != p.WS {
			p.rulesWS.DenyPaths(denied, readOnly)
		}
	}
	return rs, err
}

// ErrNoNamespaces: the namespace layer (the default) is unavailable and
// --strict was given without --no-namespaces.
var ErrNoNamespaces = errors.New("the namespace layer is unavailable")

// checkLayer says on stderr, in one line, when the default namespace
// layer is not in force although --no-namespaces was not given (a
// seccomp profile such as Docker's refuses namespaces, no user
// namespace for a non-root caller, ...), and what the run loses; under
// --strict it refuses (ErrNoNamespaces) instead.
func (p *Plan) checkLayer(rep *landlock.Report) error {
	if p.Options.NoNamespaces || rep.Layer == landlock.LayerNamespaces {
		return nil
	}
	why := rep.LayerReason
	if why == "" {
		why = "no usable Landlock"
	}
	if p.Options.Strict {
		return &wordedError{fmt.Sprintf("--strict: the namespace layer is unavailable (%s); add --no-namespaces to run under %s alone", why, rep.Layer), ErrNoNamespaces}
	}
	fmt.Fprintf(p.set.Stderr, "landjail: warning: namespace layer unavailable (%s): no PID namespace, private /tmp, read-only view or network namespace; running under %s (--no-namespaces silences this, --strict refuses)\n", why, rep.Layer)
	return nil
}

// Command returns the confined command argv[0] argv[1:] with the plan's
// policy, ruleset, environment, credential, seccomp filter and network
// wiring. FreshThread: one spawn per run.
func (p *Plan) Command(ctx context.Context, argv []string) *exec.Cmd {
	o := p.Options
	c := exec.CommandContext(ctx, p.WS, p.Ruleset, argv[0], argv[1:]...)
	c.Env = p.Env
	c.Credential = p.set.Credential
	c.Seccomp = p.Seccomp
	c.SelfTest = o.Strict || o.SelfTest
	c.NoPIDNamespace = o.NoPIDNamespace
	c.FreshThread = true
	if p.early == nil && !p.recordLater {
		p.startRecord() // else StartLimits does, once it has the group
	}
	if p.live != nil {
		// GC must not see the private directories unnamed: the lock
		// that keeps it out until the marker is written ends with the
		// execve (Start keeps it in this process).
		c.BeforeExec = func() {
			p.StartRecord()
			p.live.Wait()
		}
	}
	p.Proxy.Wire(c)
	if p.Proxy != nil {
		p.wirePresetProxy(c, p.Proxy.Addr())
	}
	return c
}

// PIDNamespace reports whether the command gets a PID namespace of its
// own, and why not (exec.PIDNamespace with --no-pid-namespace).
func (p *Plan) PIDNamespace() (bool, string) {
	if p.Options.NoPIDNamespace {
		return false, "--no-pid-namespace"
	}
	return exec.PIDNamespace(p.Ruleset, p.Seccomp)
}

// TmpDir is the private TMPDIR ("" for none).
func (p *Plan) TmpDir() string { return p.tmp.path() }

// RemoveTmp removes a per-run TMPDIR now (Close does it too).
func (p *Plan) RemoveTmp() { p.tmp.remove() }

// TakeSweep records the workspace's agent configuration before the
// command starts (--protect-agent-config; nothing without it), so that
// FinishSweep can rename away what the command created or changed: the
// names Landlock cannot stop without freezing their directory, nested
// repositories included (internal/sweep). Call it right before the
// command starts. Errors: sweep.Take's (a walk over --walk-limit).
func (p *Plan) TakeSweep() error {
	if p.snap != nil {
		return nil
	}
	var err error
	p.snap, err = sweep.TakeAs(p.rulesWS, p.Options.WalkLimit, p.set.Credential)
	return err
}

// WatchSweep neutralises agent configuration while the command runs
// (sweep.Snapshot.Watch: what FinishSweep would rename away, as soon as
// it appears), after TakeSweep and before the command starts; abort
// stops the command (called when it keeps making such entries, or when
// events were lost). Nothing without --protect-agent-config. Errors:
// inotify's with --strict (the run must not start); without it a
// warning, and the sweep after the command alone.
func (p *Plan) WatchSweep(abort func(reason string)) error {
	if p.snap == nil || p.liveSweep != nil {
		return nil
	}
	var err error
	// --cpus bounds the watch's work for the command as it bounds the
	// supervisor's (red team round 22, R22c-2): over its share, the
	// command's groups are frozen for the periods it owes.
	// Without --cpus too, the command is held while the watch has a
	// backlog of events, so that inotify's queue does not overflow.
	cpu := sweep.Throttle{Freeze: p.held.freeze}
	if s := cpushare.New(p.spec.CPUs); s != nil {
		cpu.Share, cpu.Hold = s, p.held.hold
	}
	p.liveSweep, err = p.snap.Watch(p.set.Stderr, abort, cpu)
	if err != nil && !p.Options.Strict {
		// fs.inotify.max_user_instances (128 by default) reached: the
		// sweep after the command still runs.
		fmt.Fprintf(p.set.Stderr, "landjail: warning: agent configuration is not watched while the command runs, only swept after it (%v; --strict refuses)\n", err)
		return nil
	}
	return err
}

// FinishSweep sweeps once every process of the command is gone: each
// entry renamed away is named on stderr and returned (those WatchSweep
// neutralised while it ran first); an error means the sweep could not
// see everything (the run must then fail).
func (p *Plan) FinishSweep() ([]sweep.Quarantined, error) {
	p.liveSweep.Stop()
	p.liveSweep = nil
	return sweep.Finish(p.snap, p.set.Stderr)
}

// startRecord starts writing the live marker of Prepare's private
// directories (privdirs.Run.RecordAsync), once: Command does, or, when
// StartLimitsEarly's group is pending, StartLimits once it has the group
// (started earlier, the write takes a processor from the command's
// preparation on a two-CPU machine, where the group's goroutine has the
// other; it then runs once that goroutine is done). The command's
// BeforeExec calls StartRecord, then waits for the write (the execve
// ends the lock that keeps GC out meanwhile); End waits for it. With
// recordLater it leaves the write to StartRecord.
func (p *Plan) startRecord() {
	if p.recordDirs != nil && !p.recordLater {
		p.live.RecordAsync(p.recordDirs...)
		p.recordDirs = nil
	}
}

// StartRecord starts writing the live marker (privdirs.Run.RecordAsync)
// unless it was started already: the one Settings.RecordAfterStart left
// for after the command's Start, or one still waiting for StartLimits.
// End waits for it. Later calls do nothing.
func (p *Plan) StartRecord() {
	p.recordLater = false
	p.startRecord()
}

// undo removes what Prepare made.
func (p *Plan) undo() {
	if p.Ruleset != nil {
		p.Ruleset.Close()
		p.Ruleset = nil
	}
	p.Proxy.Close()
	p.Proxy = nil
	p.tmp.remove()
	p.recordDirs = nil // never written: End only releases the lock
	p.live.End()
	p.live = nil
	p.liveSweep.Stop()
	p.liveSweep = nil
	p.snap.Close()
	p.snap = nil
}

// Close undoes Prepare and closes the policy. Safe to call twice.
func (p *Plan) Close() {
	p.dropEarlyLimits()
	p.undo()
	if p.rulesWS != nil && p.rulesWS != p.WS {
		p.rulesWS.Close()
	}
	p.rulesWS = nil
	if p.WS != nil {
		p.WS.Close()
		p.WS = nil
	}
}

// wordedError is err told in the words of the command line: Error is msg
// (flags and paths, no Go identifiers), errors.Is and As see err.
type wordedError struct {
	msg string
	err error
}

func (e *wordedError) Error() string { return e.msg }
func (e *wordedError) Unwrap() error { return e.err }

// warnFrozen prints one line on stderr per directory the Landlock
// carve-outs freeze for the child (no entry can be created, removed or
// renamed directly in it), with why the namespace layer is not in force
// and the flag that avoids it.
func warnFrozen(w io.Writer, r *landlock.Report, noNamespaces bool) {
	if len(r.FrozenDirs) == 0 {
		return
	}
	avoid := "--no-carve avoids it (deny and read-only paths are then not enforced for the command)"
	if noNamespaces {
		avoid = "dropping --no-namespaces avoids it"
	} else if r.Layer == landlock.LayerNamespaces {
		avoid = "a protected name that does not exist yet; create it first, or --no-carve"
	}
	why := r.Layer.String()
	if r.LayerReason != "" {
		why += ": " + r.LayerReason
	}
	for _, d := range r.FrozenDirs {
		fmt.Fprintf(w, "landjail: frozen directory %s: the command cannot create, remove or rename entries in it (carve-outs, layer %s); %s\n", termsafe.Quote(d), why, avoid)
	}
}

// hasEnv is cliopts.HasEnv for --env entries that only name a variable.
func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if n, _, _ := strings.Cut(e, "="); n == name {
			return true
		}
	}
	return false
}

// stickyVerdicts is the union of the link verdicts (DenyPaths) of a
// server's compiles: a link the command removes in one call does not
// lift what it denied for the next (red team round 15, R15a-24). Safe for
// concurrent use (calls compile concurrently).
type stickyVerdicts struct {
	mu               sync.Mutex
	denied, readOnly map[string]bool
}

// add records denied and readOnly and returns the union so far.
func (s *stickyVerdicts) add(denied, readOnly []string) (allDenied, allReadOnly []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denied == nil {
		s.denied, s.readOnly = map[string]bool{}, map[string]bool{}
	}
	for _, p := range denied {
		s.denied[p] = true
	}
	for _, p := range readOnly {
		s.readOnly[p] = true
	}
	for p := range s.denied {
		allDenied = append(allDenied, p)
	}
	for p := range s.readOnly {
		allReadOnly = append(allReadOnly, p)
	}
	return allDenied, allReadOnly
}

// deniedFileRoots refuses a --ro, --rox or --rw root that is a single
// file when it is a set-ID program given writable under
// --protect-agent-config, or when the deny patterns name it (by its absolute path: .aws/credentials,
// .env, id_rsa) or, with --deny-secrets, that holds a private key: such a
// root is a Landlock rule of its own, outside every jail root, which no
// pattern was matched against, so --deny-secrets --ro ~/.aws/credentials
// read the credentials in every layer (red team round 32, R32c-3). A
// deny pattern is never lifted; the error names the flag to drop.
func deniedFileRoots(ws *jail.Workspace, extra []landlock.Rule) error {
	for _, r := range extra {
		if !strings.HasPrefix(r.Source, "--ro") && !strings.HasPrefix(r.Source, "--rw") {
			continue
		}
		fi, err := os.Stat(r.Path)
		if err != nil || fi.IsDir() {
			continue
		}
		canon, err := filepath.EvalSymlinks(r.Path)
		if err != nil {
			continue
		}
		flag, _, _ := strings.Cut(r.Source, " ")
		if ws.ProtectsSetID() && r.Access&landlock.RightsReadWriteFile&^landlock.RightsReadExec != 0 {
			// A set-ID program given as a writable file root: what the
			// walk of the roots makes read-only (red team round 32,
			// R32a-1: rewritten through a mapping, its bit kept).
			if is, err := setid.Path(canon); is || err != nil {
				return &wordedError{fmt.Sprintf("%s %s: a set-user-ID, set-group-ID or file-capability program, which --protect-agent-config keeps read-only; nothing was run (give it with --ro or --rox, or strip its bits)", flag, termsafe.Quote(r.Path)), jail.ErrSetIDProgram}
			}
		}
		n := ws.NameNarrowing(canon) | ws.NameNarrowing(r.Path)
		switch {
		case n&jail.NarrowDenied != 0:
			return &wordedError{fmt.Sprintf("%s %s: a deny pattern (--deny, --deny-secrets) names it, and a deny pattern is never lifted; nothing was run (drop %s, or the pattern)", flag, termsafe.Quote(r.Path), flag), jail.ErrDenied}
		case n&jail.NarrowPrivateKey != 0 && jail.PathHoldsPrivateKey(canon),
			ws.PrivateKeyHeaders() && jail.PathHeadHoldsPrivateKey(canon):
			return &wordedError{fmt.Sprintf("%s %s: it holds a private key, which --deny-secrets denies; nothing was run (drop %s)", flag, termsafe.Quote(r.Path), flag), jail.ErrDenied}
		}
	}
	return nil
}
