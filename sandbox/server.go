package sandbox

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/cpushare"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/landlock"
)

// PrepareServer is Prepare for a server whose commands are many calls
// (landjail-mcp's bash tool): a per-run TMPDIR shared by the calls and
// removed by Close, the --allow-domain mode decided (and warned about)
// once at start with a probe proxy that is closed again, the companion
// proxy binary pinned as a sealed copy (calls start it while earlier
// calls' processes run). The start Ruleset (Plan.Ruleset) confines
// nothing by itself: each call compiles its own with CompileCall.
func (p *Plan) PrepareServer() error {
	cliopts.NetproxySealed = true
	if err := p.Prepare(TmpRun); err != nil {
		return err
	}
	p.Proxy.Close()
	p.Proxy = nil
	p.server = &callProxies{}
	// Swept after every call (the lines go to the model too) and, with
	// FinishSweep, once more at exit.
	if err := p.TakeSweep(); err != nil {
		return err
	}
	// While calls run, what they create is neutralised at once; one that
	// keeps making such entries has every running call killed.
	if err := p.WatchSweep(func(string) { reaper.KillChildren() }); err != nil {
		return err
	}
	p.server.network = sweep.AfterEach(p.snap, p.set.Stderr, p.callLimits)
	return nil
}

// CompileCall compiles a Ruleset for one call of a server: carve-outs
// and masks follow the tree as it is now, not as it was at start (a .env
// created mid-session is denied), and with --allow-domain the call gets
// a proxy of its own, whose port goes into that Ruleset. The caller
// closes the Ruleset (and exec.Release's it); Network wires the proxy.
func (p *Plan) CompileCall() (*landlock.Ruleset, error) {
	if len(p.Options.AllowDomain) == 0 {
		return p.compile(p.lopts)
	}
	ap, err := p.Options.NewAllowProxy(p.set.Stderr)
	if err != nil {
		return nil, err
	}
	lopts := p.lopts
	lopts.ProxyTCP = ap.Ports()
	rs, err := p.compile(lopts)
	if err != nil {
		ap.Close()
		return nil, err
	}
	p.server.put(rs, ap)
	return rs, nil
}

// SweepNow sweeps agent configuration now, for a server's file tool
// that changed the workspace (tools.Toolkit.AfterWrite; red team round
// 27, R27e-1): what was renamed away, one line each (also on stderr), and
// a line for a failure. Nil without --protect-agent-config.
func (p *Plan) SweepNow() []string {
	if p.snap == nil {
		return nil
	}
	q, err := sweep.Finish(p.snap, p.set.Stderr)
	var lines []string
	for _, e := range q {
		lines = append(lines, e.String())
	}
	if err != nil {
		lines = append(lines, "sweeping agent configuration failed: "+err.Error())
	}
	return lines
}

// Replan plans the server's policy again for the tree as it is now and
// returns the planning's error (what CompileCall would return, without
// a proxy): on success the file tools' link verdicts are refreshed
// (jail.Workspace.DenyPaths), and the Ruleset is closed unused. This is
// tools.Toolkit.Replan: the file tools refuse while it fails (red team
// round 26, R26e-5).
func (p *Plan) Replan() error {
	rs, err := p.compile(p.lopts)
	if err != nil {
		return err
	}
	exec.Release(rs)
	return rs.Close()
}

// Network wires the proxy of a call whose Ruleset came from CompileCall
// into its Cmd: the proxy is served once the command started (started)
// and its refusals listed once it was reaped (finish), one line each,
// followed by what the --protect-agent-config sweep renamed away after
// the call. This is tools.Toolkit.Network.
func (p *Plan) Network(rs *landlock.Ruleset, c *exec.Cmd) (started func() error, finish func() []string, err error) {
	return p.server.network(rs, c)
}

// DiscardCall frees what CompileCall prepared for a call that will not
// run (canceled while it was planned: tools.Toolkit.Discard): its proxy.
func (p *Plan) DiscardCall(rs *landlock.Ruleset) {
	if p.server == nil {
		return
	}
	if ap := p.server.take(rs); ap != nil {
		ap.Close()
	}
}

// callLimits gives a call its own resource limits (StartLimits; the
// control group is ended, and what it did said, when the call is
// reaped), then wires its proxy (callNetwork).
func (p *Plan) callLimits(rs *landlock.Ruleset, c *exec.Cmd) (func() error, func() []string, error) {
	lim, err := p.StartLimits(c)
	if err != nil {
		return nil, nil, err
	}
	if err := p.CheckSoftRlimits(lim); err != nil {
		lim.Close()
		return nil, nil, err
	}
	p.chargeOutput(c)
	explained, err := p.callExplain(rs, c) // issue 23: before callNetwork, which wires the proxy into c
	if err != nil {
		lim.Close()
		return nil, nil, err
	}
	started, finish, err := p.callNetwork(rs, c)
	if err != nil {
		lim.Close()
		return nil, nil, err
	}
	return started, func() []string {
		lines := append(finish(), explained()...)
		if res, _ := lim.Close(); res != nil {
			lines = append(lines, LimitLines(res, "bash")...)
		}
		return lines
	}, nil
}

// chargeOutput makes the copy of a call's output (os/exec's goroutine
// reading the command's pipe into c.Stdout and c.Stderr) take its turn
// in the call's --cpus share: each write is charged, and the copy
// sleeps while the share is owed, so the pipe fills and the command
// waits in its write (red team round 24, R24b-1: a command writing with
// vmsplice(2) made landjail-mcp copy at 0.27 CPU under --cpus 0.1). The
// same writer wraps both when they were one (os/exec then keeps a single
// pipe). Without --cpus, or a Stdout that is not a copy (nil, an
// *os.File), nothing changes.
func (p *Plan) chargeOutput(c *exec.Cmd) {
	s := cpushare.New(p.spec.CPUs)
	if s == nil {
		return
	}
	wrap := func(w io.Writer) io.Writer {
		if _, file := w.(*os.File); w == nil || file {
			return w
		}
		return &chargedWriter{w: w, share: s}
	}
	same := c.Stdout == c.Stderr
	c.Stdout = wrap(c.Stdout)
	if same {
		c.Stderr = c.Stdout
	} else {
		c.Stderr = wrap(c.Stderr)
	}
}

// chargedWriter writes to w, then charges share, sleeping while it is
// owed (cpushare.Share.Do).
type chargedWriter struct {
	w     io.Writer
	share *cpushare.Share
}

func (cw *chargedWriter) Write(b []byte) (n int, err error) {
	cw.share.Do(func() { n, err = cw.w.Write(b) }, time.Sleep)
	return n, err
}

func (p *Plan) callNetwork(rs *landlock.Ruleset, c *exec.Cmd) (started func() error, finish func() []string, err error) {
	if len(p.Options.AllowDomain) == 0 {
		return func() error { return nil }, func() []string { return nil }, nil
	}
	ap := p.server.take(rs)
	if ap == nil {
		return nil, nil, errors.New("--allow-domain: no proxy for this call (cannot happen)")
	}
	if _, _, err := ap.Decide(rs, p.Options.NoNamespaces, p.Seccomp == nil, p.Options.Strict); err != nil {
		ap.Close()
		return nil, nil, err
	}
	ap.Wire(c)
	p.wirePresetProxy(c, ap.Addr())
	finish = func() []string {
		refused, err := ap.Finish()
		var lines []string
		if err != nil {
			lines = append(lines, err.Error())
		}
		for _, r := range refused {
			lines = append(lines, cliopts.FormatRefusal(r))
		}
		return lines
	}
	return ap.Serve, finish, nil
}

// callProxies holds each call's proxy from CompileCall to Network. Each
// call's Ruleset has its own spawner threads, so with the namespace layer
// each call has its own network namespace and the proxy's port is free
// there.
type callProxies struct {
	network func(*landlock.Ruleset, *exec.Cmd) (func() error, func() []string, error)

	mu      sync.Mutex
	pending map[*landlock.Ruleset]*cliopts.AllowProxy
}

func (c *callProxies) put(rs *landlock.Ruleset, ap *cliopts.AllowProxy) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == nil {
		c.pending = map[*landlock.Ruleset]*cliopts.AllowProxy{}
	}
	c.pending[rs] = ap
}

func (c *callProxies) take(rs *landlock.Ruleset) *cliopts.AllowProxy {
	c.mu.Lock()
	defer c.mu.Unlock()
	ap := c.pending[rs]
	delete(c.pending, rs)
	return ap
}
