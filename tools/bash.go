package tools

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"weak"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cpushare"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// BashArgs are bash's arguments.
type BashArgs struct {
	// Command is the script run with bash -c.
	Command string `json:"command"`
	// Timeout in seconds; 0 means Limits.BashTimeout, more than
	// Limits.BashMaxTimeout is an error.
	Timeout int `json:"timeout,omitempty"`
}

// BashResult is what bash returns.
type BashResult struct {
	Command string `json:"command"`
	// Output is stdout and stderr interleaved, at most Limits.BashOutput
	// bytes: when longer, its head and tail with a marker in between.
	Output string `json:"output"`
	// OutputBytes is the full output size; Truncated says whether some
	// was left out.
	OutputBytes int64 `json:"output_bytes"`
	Truncated   bool  `json:"truncated"`
	// ExitCode is the exit status, 128+N when killed by signal N, -1
	// when unknown.
	ExitCode int  `json:"exit_code"`
	TimedOut bool `json:"timed_out"`
	// Confinement is the Ruleset's level: landlock.LevelLandlock,
	// LevelPathCheck (paths checked before the start, the running
	// command not confined) or LevelNone.
	Confinement string        `json:"confinement"`
	Duration    time.Duration `json:"duration"`
	// Network lists what the --allow-domain proxy refused during the
	// call, one line each (Toolkit.Network), and what else landjail says
	// of the call; at most Limits.BashNotes bytes (capNotes).
	Network []string `json:"network,omitempty"`
}

// Failed reports whether landjail, not the command, ended the call: the
// command was killed at its timeout (TimedOut). A non-zero exit code or
// cut output is the command's result, not a failure.
func (r *BashResult) Failed() bool { return r.TimedOut }

// String renders the result for a model.
func (r *BashResult) String() string {
	var b strings.Builder
	if r.Confinement != landlock.LevelLandlock {
		fmt.Fprintf(&b, "[landjail: the kernel does not enforce the sandbox here (confinement: %s); the command's paths were checked before it started, but the running command is not confined]\n", r.Confinement)
	}
	if r.Output == "" {
		b.WriteString("(no output)\n")
	} else {
		b.WriteString(r.Output)
		if !strings.HasSuffix(r.Output, "\n") {
			b.WriteByte('\n')
		}
	}
	switch {
	case r.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s and was killed; exit code %d]", r.Duration.Round(time.Millisecond), r.ExitCode)
	default:
		fmt.Fprintf(&b, "[exit code %d]", r.ExitCode)
	}
	if r.Truncated {
		fmt.Fprintf(&b, " [output truncated: %d bytes in all]", r.OutputBytes)
	}
	for _, l := range r.Network {
		fmt.Fprintf(&b, "\n[landjail: %s]", l)
	}
	return b.String()
}

// Bash is bash: "bash -c Command" through package exec, confined by
// Ruleset (or, without Landlock, refused before it starts when a path in
// the command lies outside the policy), in the workspace root (a narrowed
// Toolkit: its first root), with Env (default exec.DefaultEnv), stdin
// /dev/null, a timeout (then the whole process group is killed) and the
// combined output capped. A non-zero exit status and a timeout are
// results, not errors. Errors: ErrInvalidArgs, and exec's start errors
// (the policy's refusal in path-check mode, bash not found, confinement
// failures), as *Error.
func (k *Toolkit) Bash(ctx context.Context, a BashArgs) (*BashResult, error) {
	const tool = ToolBash
	lim := k.limits()
	if strings.TrimSpace(a.Command) == "" {
		return nil, k.fail(tool, "", fmt.Errorf("%w: command is empty", ErrInvalidArgs))
	}
	timeout := lim.BashTimeout
	if a.Timeout < 0 || time.Duration(a.Timeout)*time.Second > lim.BashMaxTimeout {
		return nil, k.fail(tool, "", fmt.Errorf("%w: timeout must be between 0 and %d seconds", ErrInvalidArgs, int(lim.BashMaxTimeout/time.Second)))
	}
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout) * time.Second
	}
	release, err := bashSlot(ctx, k.WS, lim.BashConcurrent)
	if err != nil {
		return nil, k.fail(tool, "", err)
	}
	defer release()
	dir := ""
	if k.scoped {
		if len(k.scope) == 0 {
			return nil, k.fail(tool, "", ErrOutsideScope)
		}
		dir = k.wsName(k.scope[0], k.scope[0])
	}
	rs := k.Ruleset
	if k.Compile != nil {
		// The planning of this call is not charged to the --cpus share of
		// the calls already running (red team round 24, R24c-1: the next
		// calls' planning held a running call).
		// The planning runs on a goroutine of its own, and the call
		// returns ErrCanceled as soon as ctx ends: the walk of a
		// workspace a command filled with directories took tens of
		// seconds, and held landjail-mcp that long past SIGTERM (red
		// team round 25, R25a-5). A ruleset planned after that is
		// closed unused.
		type planned struct {
			rs  *landlock.Ruleset
			err error
		}
		ch := make(chan planned, 1)
		gate := gateOf(k.WS)
		go cpushare.Exempt(func() {
			seq, epoch, quiet := gate.begin()
			rs, err := k.Compile()
			gate.end(seq, epoch, quiet, err)
			ch <- planned{rs, err}
		})
		var fresh *landlock.Ruleset
		select {
		case p := <-ch:
			fresh, err = p.rs, p.err
		case <-ctx.Done():
			go func() {
				if p := <-ch; p.err == nil {
					if k.Discard != nil {
						k.Discard(p.rs)
					}
					p.rs.Close()
				}
			}()
			return nil, k.fail(tool, "", fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx)))
		}
		if err != nil {
			return nil, k.fail(tool, "", err)
		}
		defer fresh.Close()
		defer exec.Release(fresh)
		rs = fresh
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := exec.CommandContext(runCtx, k.WS, rs, "bash", "-c", a.Command)
	c.Seccomp = k.Seccomp
	c.NoPIDNamespace = k.NoPIDNamespace
	c.Env = k.Env
	c.Dir = dir
	out := newHeadTail(lim.BashOutput)
	c.Stdout, c.Stderr = out, out
	started, finish := func() error { return nil }, func() []string { return nil }
	if k.Network != nil {
		s, f, err := k.Network(rs, c)
		if err != nil {
			return nil, k.fail(tool, "", err)
		}
		started, finish = s, f
	}
	start := time.Now()
	// From here until it is reaped the command may change the tree:
	// the file tools plan again before they answer (Replan).
	gate := gateOf(k.WS)
	gate.started()
	err = c.Start()
	var serr error
	if err == nil {
		if serr = started(); serr != nil {
			unix.Kill(-c.Process.Pid, unix.SIGKILL)
		}
		stop := killOrphansOnExit(c.Process.Pid)
		err = c.Wait()
		stop()
	}
	gate.reaped()
	network := finish()
	if serr != nil {
		return nil, k.fail(tool, "", serr)
	}
	r := &BashResult{
		Command:     a.Command,
		Confinement: rs.Report().Level,
		Duration:    time.Since(start),
		ExitCode:    -1,
		Network:     capNotes(network, lim.BashNotes),
	}
	if c.ProcessState == nil {
		// Never started: a refusal or a start failure.
		if err == nil {
			err = errors.New("bash did not start (cannot happen: no error)")
		}
		return nil, k.fail(tool, "", err)
	}
	r.ExitCode = c.ProcessState.ExitCode()
	if st, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		r.ExitCode = 128 + int(st.Signal())
	}
	r.TimedOut = errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	r.Output, r.OutputBytes, r.Truncated = out.result()
	return r, nil
}

// Bounds of BashResult.Network (capNotes).
const (
	noteFrame  = len("\n[landjail: ]") // what String adds to each line
	noteBytes  = 512                   // one line, cut beyond
	noteMarker = 100                   // the line counting those left out
)

// capNotes returns lines within max bytes in all, each counted with its
// frame in BashResult.String: every line cut at noteBytes; when they are
// more, the first lines that fit in half of the rest of max (after
// noteMarker) and the last lines that fit in the other half, with one
// line in between counting the lines left out. The last lines are kept as well as the first, since the
// lines a command can multiply (the proxy's refusals) come first and
// the limits' and the sweep's last.
func capNotes(lines []string, max int) []string {
	lines = slices.Clone(lines)
	total := 0
	for i, l := range lines {
		if len(l) > noteBytes {
			cut := strings.ToValidUTF8(l[:noteBytes], "")
			l = fmt.Sprintf("%s... [%d bytes cut]", cut, len(l)-len(cut))
			lines[i] = l
		}
		total += len(l) + noteFrame
	}
	if total <= max {
		return lines
	}
	half := (max - noteMarker) / 2
	head, used := 0, 0
	for head < len(lines) && used+len(lines[head])+noteFrame <= half {
		used += len(lines[head]) + noteFrame
		head++
	}
	tail, used := len(lines), 0
	for tail > head && used+len(lines[tail-1])+noteFrame <= half {
		tail--
		used += len(lines[tail]) + noteFrame
	}
	left := 0
	for _, l := range lines[head:tail] {
		left += len(l)
	}
	out := append([]string(nil), lines[:head]...)
	out = append(out, fmt.Sprintf("... %d more lines (%d bytes) left out ...", tail-head, left))
	return append(out, lines[tail:]...)
}

// killOrphansOnExit kills what the bash process pid leaves behind in its
// session as soon as it exits (its exit makes its pidfd readable, before
// Wait reaps it), so that a background job neither outlives the call nor
// holds the output pipe open until WaitDelay. Attribution is by session:
// exec starts bash with setsid, so its session id is pid, which the kernel
// does not recycle while a member remains, and only bash's descendants can
// be in that session (reaper.KillSession). A descendant that called setsid
// itself cannot be attributed to this call safely (it is re-parented to
// the server, which cannot tell which call it came from); it is killed
// when the server exits (landjail-mcp is a child subreaper). The returned
// func waits for the kill to finish; call it after Wait.
func killOrphansOnExit(pid int) (wait func()) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// No pidfd (Linux < 5.3): kill once Wait has returned instead.
		return func() { reaper.KillSession(pid) }
	}
	done := make(chan struct{})
	exited := false
	go func() {
		defer close(done)
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		var err error
		for {
			if _, err = unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if exited = err == nil; exited {
			reaper.KillSession(pid)
		}
	}()
	return func() {
		<-done
		if !exited { // poll failed (cannot happen): bash is gone now
			reaper.KillSession(pid)
		}
	}
}

// headTail keeps the first and last max/2 bytes written to it and counts
// the rest. Safe for concurrent writes (stdout and stderr).
type headTail struct {
	mu         sync.Mutex
	half       int
	head, tail []byte
	total      int64
}

func newHeadTail(max int) *headTail { return &headTail{half: max / 2} }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	if room := h.half - len(h.head); room > 0 {
		m := min(room, len(p))
		h.head = append(h.head, p[:m]...)
		p = p[m:]
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*h.half {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.half:]...)
	}
	return n, nil
}

func (h *headTail) result() (string, int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := h.tail
	if len(tail) > h.half {
		tail = tail[len(tail)-h.half:]
	}
	kept := int64(len(h.head) + len(tail))
	if kept == h.total {
		return strings.ToValidUTF8(string(h.head)+string(tail), "\uFFFD"), h.total, false
	}
	s := string(h.head) + fmt.Sprintf("\n[... %d bytes omitted ...]\n", h.total-kept) + string(tail)
	return strings.ToValidUTF8(s, "\uFFFD"), h.total, true
}

// bashGates holds, per Workspace (weakly: a gate goes with its
// Workspace), the semaphore of Limits.BashConcurrent.
var bashGates sync.Map // weak.Pointer[jail.Workspace] -> chan struct{}

// bashSlot waits for one of n slots of ws's bash gate, or for ctx; the
// returned func gives the slot back.
func bashSlot(ctx context.Context, ws *jail.Workspace, n int) (release func(), err error) {
	key := weak.Make(ws)
	g, loaded := bashGates.LoadOrStore(key, make(chan struct{}, n))
	if !loaded && ws != nil {
		runtime.AddCleanup(ws, func(k weak.Pointer[jail.Workspace]) { bashGates.Delete(k) }, key)
	}
	gate := g.(chan struct{})
	select {
	case gate <- struct{}{}:
		return func() { <-gate }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for one of %d bash slots (Limits.BashConcurrent): %w", cap(gate), ctx.Err())
	}
}
