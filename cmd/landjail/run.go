package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	explainpkg "github.com/landjail/landjail/internal/explain"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/ptyrelay"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/sandbox"
	"github.com/landjail/landjail/seccomp"
)

const runHelp = `Run CMD confined to the workspace (default: the current directory, read-write),
the --ro/--rox/--rw roots and, unless --no-system, the system preset (/usr,
/bin, /lib*, the few /etc files programs need, /dev/null, ...) plus a private
TMPDIR. TCP bind/connect is denied except --connect-tcp/--bind-tcp ports
(Landlock ABI 4); signals and abstract UNIX sockets are scoped to the sandbox
(ABI 6). The child gets only PATH, HOME, LANG, TERM, TZ and --env variables,
no capabilities, and its working directory is the workspace. HOME is a
private directory per workspace outside it, kept between runs
($XDG_CACHE_HOME/landjail/home/HASH, read-write for the command): caches
(go, npm, pip) stay out of the project, your dotfiles stay invisible.
--home DIR chooses another, --home workspace the workspace root;
--git-identity passes your git user.name and user.email for git commit.

Without --timeout, --report or a terminal on stdin, stdout or stderr (and,
with the network restricted, without --bind-tcp and UNIX sockets, whose
listen(2) landjail checks from outside), landjail leaves the caller's session
(setsid), confines itself and execve's CMD: no
extra process (fit for a container ENTRYPOINT); the private TMPDIR is then one
per workspace and user ($TMPDIR/landjail-UID-HASH, mode 0700, kept between
runs; pass --env TMPDIR=DIR to use your own). Otherwise it supervises CMD in
its own session and process group. When the caller has a terminal, CMD gets a
pseudo-terminal of its own, relayed by landjail (the caller's terminal is in
raw mode meanwhile and restored afterwards, window size changes are passed
on): CMD never holds the caller's terminal. landjail forwards SIGINT, SIGTERM,
SIGHUP and SIGQUIT to CMD's group, kills the group on timeout (SIGTERM, SIGKILL
2s later), and when CMD exits kills every process it left behind (landjail is
a child subreaper), then removes the TMPDIR. The --report file is opened
before CMD starts (no symlink in its path, a regular file with one link) and
written through that descriptor.

Where the kernel and process allow a mount namespace (root, not refused by a
seccomp profile such as Docker's default), the command also runs in a
namespace view under Landlock: denied files (--deny, --deny-secrets) are
covered by inaccessible read-only files (EACCES, as from Landlock)
instead of Landlock carve-outs, so no
directory of the workspace is frozen; everything outside the writable roots
is read-only (chmod, utime, truncate: EROFS); /tmp and /dev/shm are private;
with TCP fully denied (no --connect-tcp/--bind-tcp, not --net host) the
network namespace holds only loopback. --no-namespaces (TOML no_namespaces)
turns it off. Where it is unavailable landjail falls back to carve-outs,
--print-rules and the report name the layer ("namespaces", "landlock-only",
"path-check") and why, and each frozen directory is named on stderr; --strict
then refuses a policy whose carve-outs would freeze directories.

--allow-domain NAME (repeatable) lets CMD reach the listed hosts, and nothing
else, through an HTTP/CONNECT proxy landjail serves (the landjail-netproxy
binary, only from next to landjail); HTTP_PROXY, HTTPS_PROXY and ALL_PROXY
point at it. With the namespace layer it is airtight (CMD's network namespace
holds only the proxy); otherwise it is advisory (Landlock lets CMD connect
only to the proxy's port, but on any host) or, below Landlock ABI 4,
unreachable (no IP socket at all): stderr and the report say which, and
--strict refuses anything but airtight. Refused requests are listed on stderr
at exit and in the report. Not with --net host, --connect-tcp or --allow-dns.

Best effort (the default) drops what the kernel cannot enforce with a one-line
warning on stderr; --strict refuses to run instead (exit 125). Without any
usable Landlock, landjail checks the paths in CMD's arguments (and sh -c
scripts) and refuses CMD (exit 126) if one is outside the policy.

--config FILE holds the same settings as TOML, keys named like the flags with
"_" for "-" (timeout = "30s", ro = ["/opt"]); a flag given on the command line
replaces the file's value (a repeatable flag the whole list, but --deny and
--read-only add to the file's). Unknown keys are an error. The keys:
`

// configKeysHelp is the list of a help's --config keys, made from the
// command's flags so that it cannot drift, wrapped at 80 columns.
func configKeysHelp(flags []cli.Flag) string {
	var b strings.Builder
	col := 0
	for i, k := range cliopts.ConfigKeys(flags) {
		if i > 0 {
			b.WriteString(",")
			col++
			if col+len(k)+1 > 78 {
				b.WriteString("\n")
				col = 0
			} else {
				b.WriteString(" ")
				col++
			}
		}
		b.WriteString(k)
		col += len(k)
	}
	return b.String() + "."
}

// newRunCommand builds run with every flag. See newRunCommandFor.
func newRunCommand() *cli.Command { return newRunCommandFor(nil) }

// newRunCommandFor builds run for args, the arguments after "run" (nil:
// unknown): with only the flags they name when cliopts.FlagsNamed finds
// that enough (no help asked for, no name it does not know), and then
// without the help text, which only help shows. Parsed as with every
// flag: TestPrunedTreeSame.
func newRunCommandFor(args []string) *cli.Command {
	one := 1
	flags := cliopts.RunFlags() // built once: every run pays for it
	desc := ""
	if named, ok := cliopts.FlagsNamed(flags, args); ok && args != nil {
		flags = named
	} else {
		desc = runHelp + configKeysHelp(flags) + "\n\n" + examplesHelp + "\n\n" + exitHelp
	}
	return &cli.Command{
		Name:        "run",
		Usage:       "run a command confined to the workspace",
		ArgsUsage:   "-- CMD [ARG...]",
		Description: desc,
		Flags:       flags,
		// Flags after CMD belong to CMD: landjail run ls -l.
		StopOnNthArg: &one,
		OnUsageError: onUsageError,
		// A path or NAME=VALUE may hold a comma.
		DisableSliceFlagSeparator: true,
		Action:                    runAction,
	}
}

func runAction(ctx context.Context, cmd *cli.Command) error {
	o, err := cliopts.Load(cmd)
	if err != nil {
		return err
	}
	root := cmd.Root()
	return runLoaded(ctx, o, cmd.Args().Slice(), cmd.Bool("print-rules"), runIO{root.Reader, root.Writer, root.ErrWriter})
}

// runIO is the root command's standard streams (its Reader, Writer and
// ErrWriter).
type runIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// runLoaded is run's action once its flags are loaded: o, the command
// argv, --print-rules.
func runLoaded(ctx context.Context, o *cliopts.Options, argv []string, printRules bool, rio runIO) error {
	var err error
	if len(argv) == 0 && !printRules {
		return errors.New("run: no command given (landjail run [flags] -- CMD [ARG...])")
	}
	stderr := rio.stderr
	if err := o.CheckImplicitWorkspace(stderr); err != nil {
		return err
	}
	cred, err := o.Credential()
	if err != nil {
		return err
	}
	// The report file is opened now, before anything the child could
	// change exists, and written through this descriptor at the end.
	var report *reportFile
	if o.Report != "" && !printRules {
		if report, err = openReport(o.Report); err != nil {
			return err
		}
		defer report.close()
	}
	// --learn's FILE is read now, before the command can change it.
	var lrn *learner
	if !printRules {
		if lrn, err = startLearner(o); err != nil {
			return err
		}
		defer lrn.close()
	}
	// RecordAfterStart: supervised calls plan.StartRecord after the
	// command's Start.
	set := sandbox.Settings{Stderr: stderr, Credential: cred, PrintRules: printRules, RecordAfterStart: true}
	if o.GitIdentity {
		if set.Env, err = gitIdentity(o); err != nil {
			return err
		}
	}
	plan, err := sandbox.New(o, set)
	if err != nil {
		return err
	}
	defer plan.Close()
	stdio := stdioFiles(rio.stdin, rio.stdout, stderr)
	supervise, why := false, ""
	var fwd *sigForward
	if !printRules {
		supervise, why = needsSupervisor(o, plan.SupervisedFilter(), stdio, leaveTerminal)
	}
	if supervise {
		fwd = startSigForward() // overlaps Prepare
		defer fwd.stop()
	}
	// A private TMPDIR, unless the caller chose one or wants no preset:
	// per run when supervised for --timeout, --report, a terminal, ...
	// (removed afterwards), per workspace when landjail execve's (nothing
	// is left to remove it) or supervises only for the PID namespace.
	tmp := sandbox.TmpWorkspace
	if supervise && why != whyPIDNamespace {
		tmp = sandbox.TmpRun
	}
	if !printRules {
		plan.StartLimitsEarly() // the control group is made while Prepare runs
	}
	if err := plan.Prepare(tmp); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if printRules {
		// Paths a command may have named (R22c-6): no escape sequence
		// reaches the caller's terminal. Each name is quoted where it
		// is formatted too (Rule.String, printLayer: R26c-2), since
		// Lines takes a newline in a name for a line end.
		lw := termsafe.Lines(rio.stdout)
		defer lw.Flush()
		w := io.Writer(lw)
		for _, r := range plan.Ruleset.Rules() {
			fmt.Fprintln(w, r)
		}
		printLayer(w, plan.Ruleset.Report())
		printPIDNamespace(w, plan)
		printAllowDomain(w, o, plan.Ruleset.Report())
		printPresets(w, o, plan.Env)
		printAllowUnix(w, o, plan.Ruleset, plan.Seccomp != nil)
		printLimits(w, plan.LimitSpec(), limits.Available())
		return nil
	}
	c := plan.Command(ctx, argv)
	lim, err := plan.StartLimits(c)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if !supervise {
		// The command replaces landjail and nobody is left to remove the
		// group (the next landjail start does). On cgroup v2 the process
		// joins it now; on v1 c.Exec's thread joins alone just before its
		// execve (a write of "0" to the tasks files, cheaper than moving
		// the whole process: see exec.Cmd.Cgroup).
		if lim.CgroupFD() >= 0 {
			if err := lim.JoinProcess(); err != nil {
				lim.Close()
				return fmt.Errorf("run: resource limits: %w", err)
			}
		}
		// Only returns on error. The calling thread may be confined by
		// now; runMain prints the error and main exits.
		c.BeforeExec = leftTerminal(c.BeforeExec)
		return &startError{c.Exec(), envPath(c.Env)}
	}
	defer lim.Close() // after a failure; FinishLimits ends it otherwise
	if err := plan.CheckSoftRlimits(lim); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return supervised(c, plan, argv, stdio, report, stderr, lim, lrn, fwd)
}

// stdioSet is the caller's standard streams, and which are terminals.
type stdioSet struct {
	in     io.Reader
	out    io.Writer
	errw   io.Writer
	files  [3]*os.File // nil where the stream is not an *os.File
	isTerm [3]bool
}

func stdioFiles(in io.Reader, out, errw io.Writer) stdioSet {
	s := stdioSet{in: in, out: out, errw: errw}
	for i, v := range []any{in, out, errw} {
		if f, ok := v.(*os.File); ok {
			s.files[i] = f
			s.isTerm[i] = ptyrelay.IsTerminal(f)
		}
	}
	return s
}

func (s stdioSet) anyTerminal() bool { return s.isTerm[0] || s.isTerm[1] || s.isTerm[2] }

// whyPIDNamespace is needsSupervisor's reason when only the PID
// namespace asks for supervision.
const whyPIDNamespace = "a PID namespace (--no-pid-namespace execve's the command instead)"

// needsSupervisor is run's one decision between supervising the command
// (a child in its own session, waited for, its descendants killed) and
// execve'ing it (no extra process). It returns true and the reason when
// run must supervise. leave is called last, and only when nothing else
// requires supervision: it tries to take landjail out of the caller's
// session (see leaveTerminal) and reports whether the command can then
// no longer reach the caller's terminal. Add a condition as one more case.
func needsSupervisor(o *options, supervisedFilter bool, stdio stdioSet, leave func() bool) (bool, string) {
	switch {
	case o.Timeout > 0:
		return true, "--timeout"
	case o.Report != "":
		return true, "--report"
	case o.Explain:
		return true, "--explain (audit records are read after the command exits)"
	case len(o.AllowDomain) > 0:
		return true, "--allow-domain (landjail serves the proxy)"
	case o.WantsPIDNamespace():
		// A PID namespace needs a fork: the command is a child of
		// landjail in it (execve cannot move a process there).
		return true, whyPIDNamespace
	case o.ProtectAgentConfig:
		// What the command creates is swept after it (internal/sweep).
		return true, "--protect-agent-config (the workspace is swept after the command)"
	case supervisedFilter:
		// The seccomp filter hands listen(2) to landjail (--bind-tcp, or
		// UNIX sockets with the network restricted): it must stay alive.
		return true, "listen(2) checked by landjail (--bind-tcp or UNIX sockets)"
	case stdio.anyTerminal():
		// The command must not hold the caller's terminal: it gets a
		// pseudo-terminal of its own, relayed by landjail.
		return true, "a terminal on stdin, stdout or stderr"
	case !leave():
		return true, "landjail cannot leave the session of its controlling terminal"
	}
	return false, ""
}

// leaveTerminal calls setsid(2) so that the execve'd command has no
// controlling terminal (it could otherwise open /dev/tty and read what the
// user types next). setsid fails when landjail already leads a process
// group (a job started by an interactive shell): then it reports whether
// landjail has no controlling terminal anyway (open("/dev/tty") fails with
// ENXIO, tty(4)).
//
// When landjail does not lead a process group, setsid cannot fail
// (EPERM is its only error, for a group leader): it is then handed to
// the limits goroutine (limits.Then), which is sweeping on the other CPU
// meanwhile, and leaveTerminal reports true at once; setsid(2) costs
// 30-50 µs here (a new scheduler autogroup). leftTerminal, which Exec
// calls right before the execve, waits for it (limits.WaitEarly) and
// fails closed if it failed after all.
func leaveTerminal() bool {
	if unix.Getpgrp() != unix.Getpid() && limits.Then(setsidLater) {
		setsidPending = true
		return true
	}
	if _, err := unix.Setsid(); err == nil {
		return true
	}
	fd, err := unix.Open("/dev/tty", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return errors.Is(err, unix.ENXIO)
	}
	unix.Close(fd)
	return false
}

// setsidPending is set when leaveTerminal handed setsid to the limits
// goroutine; setsidErr is that setsid's error.
var (
	setsidPending bool
	setsidErr     error
)

func setsidLater() { _, setsidErr = unix.Setsid() }

// leftTerminal returns the BeforeExec of an execve'd run: next, then,
// when leaveTerminal handed setsid to the limits goroutine, the wait for
// it; a setsid that failed (it cannot: see leaveTerminal) ends landjail
// with exit 125 before the execve, the command not run (fail closed: it
// would hold the caller's session).
func leftTerminal(next func()) func() {
	if !setsidPending {
		return next
	}
	return func() {
		if next != nil {
			next()
		}
		limits.WaitEarly()
		if setsidErr != nil {
			fmt.Fprintf(os.Stderr, "landjail: setsid: %v (the command was not run)\n", setsidErr)
			os.Exit(125)
		}
	}
}

// drainTime bounds how long the pseudo-terminal's output is read after
// the command and its descendants are gone (it normally ends at once, with
// EIO; only a process outside the tree holding the slave delays it).
const drainTime = 2 * time.Second

// supervised runs c to completion: in its own session (on a relayed
// pseudo-terminal when the caller has a terminal), signals forwarded to
// its process group, every descendant killed when it exits (landjail is
// a child subreaper), the exit status returned as an exitStatus, the
// report written.
func supervised(c *exec.Cmd, plan *sandbox.Plan, argv []string, stdio stdioSet, report *reportFile, stderr io.Writer, lim *limits.Run, lrn *learner, fwd *sigForward) (err error) {
	o, ws, proxy := plan.Options, plan.WS, plan.Proxy
	c.Stdin, c.Stdout, c.Stderr = stdio.in, stdio.out, stdio.errw
	c.Timeout = time.Duration(o.Timeout)
	// main exits right after (exec.Cmd.DeferNamespaceEnd), unless the
	// descendants are killed below, the namespace's init with them.
	// Not when the caller is its namespace's PID 1 (a container's
	// entrypoint, which may never reap the orphaned init: a zombie per
	// run).
	c.DeferNamespaceEnd = exitsAfterRun && proxy == nil && !o.ProtectAgentConfig && os.Getppid() != 1
	rep := runReport{Argv: argv, Report: c.Ruleset.Report()}
	rep.PIDNamespace, rep.PIDNamespaceReason = plan.PIDNamespace()
	if c.Seccomp != nil && report != nil {
		// Only the report shows them: a precompiled filter makes its
		// rules when asked (≈0.09 ms of a run's main thread).
		rep.Seccomp = c.Seccomp.Rules()
	}
	rep.Hygiene = hygieneOf(c)
	rep.AllowUnix = allowUnixOf(o, c.Ruleset, c.Seccomp != nil)
	rep.Network, rep.NetworkReason = proxy.Mode()
	rep.TransparentEgress = proxy.Transparent()
	fail := func(err error) error {
		code, _ := exitCode(err)
		rep.ExitCode, rep.Error = code, err.Error()
		return errors.Join(err, report.write(&rep, stderr))
	}

	// Orphans, setsid'd or not, are re-parented to landjail, which kills
	// them all when the command exits.
	if err := reaper.Become(); err != nil {
		return fail(fmt.Errorf("run: %w", err))
	}
	rep.Hygiene.Descendants = "killed when the command exits (landjail is a child subreaper; /proc/self/task/*/children, pidfd_send_signal)"
	if rep.PIDNamespace {
		rep.Hygiene.Descendants = "killed when the command exits, with its PID namespace (pid_namespaces(7): the namespace's init exits, the kernel kills the rest)"
	}
	// Without a PID namespace no init reaps the orphans that exit while
	// the command runs: landjail does, or each stays its zombie until the
	// end, charged to --pids (red team round 26, R26d-2).
	stopReaping := func() {}
	if !rep.PIDNamespace {
		if stop, err := reaper.StartOrphanReaper(plan.CPUThrottle()); err == nil {
			stopReaping = stop
		}
	}
	defer stopReaping()

	var relay *ptyrelay.Relay
	if stdio.anyTerminal() {
		relay, err = ptyrelay.Open(stdio.files[0], stdio.files[1], stdio.files[2])
		if err != nil {
			return fail(fmt.Errorf("run: pseudo-terminal: %w", err))
		}
		defer relay.Finish(0)
		relay.LimitCPU(plan.LimitSpec().CPUs) // --cpus: the relay works for the command (R22c-3)
		in, out, errf := relay.Stdio()
		c.Stdin, c.Stdout, c.Stderr = in, out, errf
		c.Setctty, c.Ctty = true, relay.Ctty()
		rep.Hygiene.Session = "own session on a pseudo-terminal relayed by landjail (the caller's terminal is never passed to the command)"
	}

	var ex *explainer
	if o.Explain {
		ex = startExplainer(context.Background(), o.ExplainAll, plan.CPUThrottle())
	}
	if err := plan.TakeSweep(); err != nil { // --protect-agent-config (nothing without)
		return fail(fmt.Errorf("run: %w", err))
	}
	// Neutralised as soon as it appears, too (round 5, N7); a command
	// that keeps making agent configuration is stopped.
	var (
		livePID   atomic.Int64
		liveAbort atomic.Bool
	)
	if err := plan.WatchSweep(func(string) {
		liveAbort.Store(true)
		if pid := livePID.Load(); pid > 0 {
			unix.Kill(-int(pid), unix.SIGKILL)
		}
	}); err != nil {
		return fail(fmt.Errorf("run: %w", err))
	}
	// Caught since before Prepare; from here on forwarded to the command
	// (before, they end landjail: sigForward.watch).
	sigs := fwd.signals()
	start := time.Now()
	if err := c.Start(); err != nil {
		if ex != nil { // the path-check fallback's refusal explained (issue 23); --learn sets Explain
			rep.Denials, rep.ExplainUnavailable = ex.finish(ws, c.Seccomp, explainpkg.PathCheck(err), stderr)
			if lrn != nil { // an execve Landlock refused is learnable (rox)
				if lerr := lrn.finish(plan, rep.Denials, rep.ExplainUnavailable, "", exitCannotExec, stderr); lerr != nil {
					fmt.Fprintf(stderr, "landjail: %v\n", lerr)
				}
			}
		}
		return fail(&startError{err, envPath(c.Env)})
	}
	// The live marker of the private directories, which waited for the
	// command's start (sandbox.Settings.RecordAfterStart).
	plan.StartRecord()
	if err := proxy.Serve(); err != nil {
		unix.Kill(-c.Process.Pid, unix.SIGKILL)
		c.Wait()
		return fail(fmt.Errorf("run: %w", err))
	}
	if relay != nil {
		relay.Start()
	}
	pid := c.Process.Pid
	livePID.Store(int64(pid))
	if liveAbort.Load() {
		unix.Kill(-pid, unix.SIGKILL)
	}
	done, forwarded := make(chan struct{}), make(chan struct{})
	var killedAfter atomic.Bool
	go func() {
		defer close(forwarded)
		var kill *time.Timer
		defer func() {
			if kill != nil {
				kill.Stop()
			}
		}()
		for {
			select {
			case s := <-sigs:
				unix.Kill(-pid, s.(syscall.Signal))
				// A stopped command would keep the signal pending until
				// it is continued: continue it, as timeout(1) and
				// systemd do after their SIGTERM (red team R11b-7).
				unix.Kill(-pid, unix.SIGCONT)
				// A command that outlives a SIGTERM by --kill-after is
				// killed, so that the sweep below runs before the
				// supervisor's own SIGKILL of landjail would skip it
				// (red team round 23, R23b-1). Only SIGTERM: an
				// interactive program carries on after SIGINT, and a
				// daemon reloads on SIGHUP.
				if grace := o.KillAfterOr(); s == unix.SIGTERM && grace > 0 && kill == nil {
					kill = time.AfterFunc(grace, func() {
						killedAfter.Store(true)
						plan.EndHolds() // a v1-frozen task takes no SIGKILL (R24c-1)
						unix.Kill(-pid, unix.SIGKILL)
					})
				}
			case <-done:
				return
			}
		}
	}()
	waitErr := c.Wait()
	close(done)
	<-forwarded
	if killedAfter.Load() {
		rep.KilledAfterSIGTERM = true
		fmt.Fprintf(stderr, "landjail: %s still ran %s after SIGTERM: killed (--kill-after)\n", termsafe.Escape(argv[0]), o.KillAfterOr())
	}
	elapsed := time.Since(start)
	// Before the descendants are killed: the proxy's process is one.
	rep.ProxyRefused, rep.ProxyError = reportRefusals(proxy, stderr)
	// In a PID namespace the command's descendants are reparented to its
	// init, never to landjail, and died with it: only the proxy's
	// process can be left to kill.
	// With --protect-agent-config the sweep below must see a dead tree:
	// a process the command made with clone(CLONE_PARENT) is landjail's
	// child, not the init's, and a SIGKILLed one may finish an
	// uninterruptible rename after the init is gone (red team F3).
	// Killing and reaping every child (the init included, whose exit
	// completes once its namespace is empty) closes that window.
	stopReaping()
	// What is left in the command's group is killed there first: the
	// group's --cpus quota is lifted once every process has its SIGKILL
	// (limits), so that thousands of leftovers do not take longer to
	// exit than the kill below waits, nor cost it a CPU meanwhile (red
	// team round 30, R30b-1). KillDescendants then reaps them.
	if lim != nil {
		lim.Kill()
	}
	if !rep.PIDNamespace || proxy != nil || o.ProtectAgentConfig {
		if n, err := reaper.KillDescendants(); err != nil {
			fmt.Fprintf(stderr, "landjail: %v\n", err)
		} else if n > 0 && (!rep.PIDNamespace || proxy != nil) {
			// (With only the sweep asking, the kill is of the
			// namespace's init on its way out: not a leftover.)
			rep.KilledDescendants = n
		}
	}
	// Those left in the command's PID namespace died with it.
	rep.KilledDescendants += c.NamespaceLeftovers
	// The control group: whatever is left in it (a daemon that escaped
	// the session and the PID namespace) is killed with it.
	rep.Limits = plan.FinishLimits(lim, argv[0])
	if relay != nil && !relay.Finish(drainTime) {
		fmt.Fprintf(stderr, "landjail: the pseudo-terminal was still held open %s after %s exited; output dropped\n", drainTime, argv[0])
	}
	// Every process of the command is gone: sweep what it created.
	var sweepErr error
	rep.Quarantined, sweepErr = plan.FinishSweep()

	// WaitStatus: ProcessState's, or a lingering stage's report
	// (exec.Cmd.DeferNamespaceEnd as a non-root caller).
	wst, ok := c.WaitStatus()
	if !ok {
		return fail(fmt.Errorf("run: %w", waitErr))
	}
	rep.ExitCode = wst.ExitStatus()
	if wst.Signaled() {
		rep.ExitCode = 128 + int(wst.Signal())
		rep.Signal = unix.SignalName(wst.Signal())
	}
	if c.Timeout > 0 && elapsed >= c.Timeout && (rep.Signal != "" || c.Canceled) {
		rep.TimedOut = true
		fmt.Fprintf(stderr, "landjail: %s timed out after %s\n", argv[0], c.Timeout)
	}
	rep.DurationMS = float64(elapsed.Microseconds()) / 1000
	if ex != nil {
		rep.Denials, rep.ExplainUnavailable = ex.finish(ws, c.Seccomp, proxyRefusals(rep.ProxyRefused), stderr)
		if rep.ExitCode != 0 {
			explainPresets(stderr, o)
		}
	} else if hint := deniedHint(argv[0], rep.ExitCode, rep.Signal, len(rep.ProxyRefused) > 0, c.Ruleset.Enforced()); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	if lrn != nil {
		if err := lrn.finish(plan, rep.Denials, rep.ExplainUnavailable, rep.ProxyError, rep.ExitCode, stderr); err != nil {
			// Like a failed sweep: a command that exited 0 fails, so a
			// learn loop does not stop on a file it did not write.
			fmt.Fprintf(stderr, "landjail: %v\n", err)
			rep.Error = "run: " + err.Error()
			if rep.ExitCode == 0 {
				rep.ExitCode = 1
			}
		}
	}
	if sweepErr != nil {
		// In the report whatever the command's status; a command that
		// exited 0 fails (red team N5: a failed sweep hid behind the
		// command's own non-zero status).
		rep.Error = "run: the sweep of agent configuration failed: " + sweepErr.Error()
		if rep.ExitCode == 0 {
			rep.ExitCode = 1
		}
	}
	if err := report.write(&rep, stderr); err != nil {
		return err
	}
	if rep.ExitCode != 0 {
		return exitStatus(rep.ExitCode)
	}
	return nil
}

// hygiene is the report's account of the layers around Landlock and
// seccomp: what the child inherits.
type hygiene struct {
	Capabilities    string   `json:"capabilities"`
	FileDescriptors string   `json:"file_descriptors"`
	Environment     []string `json:"environment"` // names only, never values
	Session         string   `json:"session"`
	Descendants     string   `json:"descendants,omitempty"`
	SelfTest        bool     `json:"self_test"`
}

func hygieneOf(c *exec.Cmd) hygiene {
	h := hygiene{
		Capabilities:    "all dropped: bounding, inheritable and ambient sets emptied, none effective or permitted after execve",
		FileDescriptors: "stdin, stdout and stderr only: every other descriptor of landjail is close-on-exec",
		Session:         "own session and process group (setsid): no terminal injection into the caller, the group is killed on timeout",
		SelfTest:        c.SelfTest,
	}
	if c.KeepCaps {
		h.Capabilities = "kept (KeepCaps)"
	}
	for _, kv := range c.Env {
		name, _, _ := strings.Cut(kv, "=")
		h.Environment = append(h.Environment, name)
	}
	return h
}

// runReport is what --report FILE holds.
type runReport struct {
	Argv   []string         `json:"argv"`
	Report *landlock.Report `json:"report"`
	// PIDNamespace says whether the command ran in a PID namespace of
	// its own (fresh /proc, init as PID 1, leftovers killed with it),
	// PIDNamespaceReason why not.
	PIDNamespace       bool           `json:"pid_namespace"`
	PIDNamespaceReason string         `json:"pid_namespace_reason,omitempty"`
	Seccomp            []seccomp.Rule `json:"seccomp,omitempty"`
	Hygiene            hygiene        `json:"hygiene"`
	ExitCode           int            `json:"exit_code"`
	Signal             string         `json:"signal,omitempty"`
	TimedOut           bool           `json:"timed_out,omitempty"`
	// KilledAfterSIGTERM: the command still ran --kill-after after a
	// forwarded SIGTERM and was killed with SIGKILL.
	KilledAfterSIGTERM bool `json:"killed_after_sigterm,omitempty"`
	// Limits are the resource limits, how each was enforced, and what
	// the command used (peak memory, processes, CPU time, OOM kills).
	Limits *limits.Result `json:"limits,omitempty"`
	// Quarantined: agent configuration the command created or changed,
	// renamed out of the way after it (--protect-agent-config).
	Quarantined []sweep.Quarantined `json:"quarantined,omitempty"`
	DurationMS  float64             `json:"duration_ms"`
	Error       string              `json:"error,omitempty"`
	// KilledDescendants counts the processes the command left behind
	// that landjail killed after it exited.
	KilledDescendants int `json:"killed_descendants,omitempty"`
	// Denials are what every layer refused, explained (--explain),
	// noise included and marked; ExplainUnavailable says why Landlock's
	// own denials are missing (audit could not be read).
	Denials            []refusal.Refusal `json:"denials,omitempty"`
	ExplainUnavailable string            `json:"explain_unavailable,omitempty"`
	// Network is the --allow-domain mode (cliopts.NetworkAirtight,
	// NetworkAdvisory, NetworkNotEnforced; "" without --allow-domain),
	// NetworkReason why it is not airtight, ProxyRefused every kind of
	// request the proxy refused, with its count; ProxyError what went
	// wrong with the proxy's process (it died, or did not report within
	// 10 s): its refusals are then lost.
	Network       cliopts.Network   `json:"network,omitempty"`
	NetworkReason string            `json:"network_reason,omitempty"`
	ProxyRefused  []cliopts.Refusal `json:"proxy_refused,omitempty"`
	ProxyError    string            `json:"proxy_error,omitempty"`
	// TransparentEgress: in the airtight mode, programs that ignore the
	// proxy variables reach listed hosts too (a DNS responder inside the
	// command's network namespace, TCP to its addresses through the
	// proxy; README "Transparent egress").
	TransparentEgress bool `json:"transparent_egress,omitempty"`
	// AllowUnix: the --allow-unix sockets and how they are enforced.
	AllowUnix *allowUnixReport `json:"allow_unix,omitempty"`
}

// printLayer ends --print-rules with the file-system layer in force, as
// comment lines: "# layer: namespaces" (then "# mask: PATH",
// "# read-only mount: PATH", "# writable: PATH"), or "# layer:
// landlock-only (WHY)" / "# layer: path-check (WHY)". Each path goes
// through termsafe.Quote where it is formatted: the Lines writer the
// listing goes through splits at every newline, and a name a command
// planted with one (.env.local\n# network: host) made lines of its own
// (red team round 26, R26c-2).
func printLayer(w io.Writer, r *landlock.Report) {
	if r.LayerReason != "" {
		fmt.Fprintf(w, "# layer: %s (%s)\n", r.Layer, termsafe.Escape(r.LayerReason))
	} else {
		fmt.Fprintf(w, "# layer: %s\n", r.Layer)
	}
	for _, m := range r.Masks {
		fmt.Fprintf(w, "# mask: %s\n", termsafe.Quote(m))
	}
	for _, m := range r.ReadOnlyMounts {
		fmt.Fprintf(w, "# read-only mount: %s\n", termsafe.Quote(m))
	}
	for _, m := range r.Writable {
		fmt.Fprintf(w, "# writable: %s\n", termsafe.Quote(m))
	}
	for _, m := range r.Swept {
		fmt.Fprintf(w, "# swept after the command (no rule stops its creation): %s\n", termsafe.Quote(m))
	}
	if r.PrivateNetwork {
		fmt.Fprintln(w, "# network: private namespace, loopback only")
	}
	if r.UserNamespace {
		fmt.Fprintln(w, "# user namespace: yes (not root: a re-executed landjail builds the view in a user namespace of its own; the command keeps your uid, with no capability)")
	}

}

// printPIDNamespace ends --print-rules with "# pid namespace: yes (...)"
// or "# pid namespace: no (WHY)".
func printPIDNamespace(w io.Writer, plan *sandbox.Plan) {
	if in, why := plan.PIDNamespace(); in {
		fmt.Fprintln(w, "# pid namespace: yes (fresh read-only /proc, a minimal init as PID 1, leftovers killed when the command exits)")
	} else {
		fmt.Fprintf(w, "# pid namespace: no (%s)\n", why)
	}
}

// printLimits ends --print-rules with the resource limits and how they
// would be enforced: "# limits: pids 4096, memory 67108864 bytes
// (cgroup-v1)" or "(not enforced: WHY)".
func printLimits(w io.Writer, s limits.Spec, p limits.Probe) {
	var parts []string
	if s.Pids > 0 {
		parts = append(parts, fmt.Sprintf("pids %d", s.Pids))
	}
	if s.Memory > 0 {
		parts = append(parts, fmt.Sprintf("memory %d bytes", s.Memory))
	}
	if s.CPUs > 0 {
		parts = append(parts, fmt.Sprintf("cpus %g", s.CPUs))
	}
	how := p.Mechanism.String()
	if p.Mechanism == limits.NotEnforced {
		how = "not enforced: " + p.Reason
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "# limits: %s (%s)\n", strings.Join(parts, ", "), how)
	}
	if s.FileSize > 0 {
		fmt.Fprintf(w, "# limits: file size %d bytes (rlimit)\n", s.FileSize)
	}
	if s.NoFile > 0 {
		fmt.Fprintf(w, "# limits: open files %d (rlimit)\n", s.NoFile)
	}
}
