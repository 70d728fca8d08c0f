// Command landjail-mcp serves the workspace tools (read_file, write_file,
// edit_file, patch, list_directory, glob, grep, bash) over the Model Context
// Protocol on stdin/stdout, for an agent client to start as a local MCP
// server. "landjail mcp ARGS" execs it with the same arguments.
//
// It is a binary of its own so that the MCP SDK (and the HTTP, JSON
// Schema and crypto packages it links) stays out of landjail run, whose
// start-up is measured against a bare Go execve (BENCHMARKS.md).
//
// Exit codes: 0 when the client closed the session, 125 on landjail's own
// error (bad flag, bad config, strict refusal).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/mcpserver"
	"github.com/landjail/landjail/sandbox"
	"github.com/landjail/landjail/tools"
)

const help = `Serve the workspace tools (read_file, write_file, edit_file, patch,
list_directory, glob, grep, bash) over the Model Context Protocol on
stdin/stdout, for an agent client to start as a local MCP server. One policy
per server, from the same flags and --config file as "landjail run": the file
tools go through it in landjail, and bash runs confined by Landlock and the
seccomp layer exactly as "landjail run" would run it (system preset, private
TMPDIR, TCP denied but for --connect-tcp/--bind-tcp).

Every tool call is checked before it is dispatched (path arguments must pass the
policy); refusals come back as tool errors the model can read. Writing over an
existing file needs a read_file of its current version first. The client's
roots, if it lists any, can only narrow the policy, and only for the file
tools: bash starts in the first root under the operator's policy
(--ignore-roots: not asked).
Nothing but MCP messages is written to stdout; warnings go to stderr. A line on
stdin that is not a JSON-RPC message (not JSON, nested deeper than 128, longer
than 16 MiB) is answered with a JSON-RPC error and the session goes on.
patch applies a unified diff all or nothing (every old and new name through
the policy, no symlinks, binaries or mode bits beyond 0755). glob and grep
skip .git directories unless the pattern or path names one. read_file and
edit_file refuse files larger than --max-file-size (default 10MiB), and grep
skips them.

Register it in a client's MCP configuration, for example:

   {"mcpServers": {"workspace": {"command": "landjail",
     "args": ["mcp", "--workspace", "/home/me/project", "--deny-secrets"]}}}

Exit codes: 0 when the session ended, 125 on landjail's own error.`

func main() {
	exec.Init() // the user-namespace stage, for bash calls of a non-root server
	// SIGTERM, SIGINT and SIGHUP end the session like EOF does, so that
	// serve's deferred cleanup (killing every descendant, the sweep)
	// runs.
	// SIGPIPE caught (never read): a write to a client that stopped
	// reading fails with EPIPE and ends the session through its error,
	// with the cleanup, instead of killing the server before it (red
	// team round 26, R26d-3).
	signal.Notify(make(chan os.Signal, 1), unix.SIGPIPE)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go endOnSignal(stop, done)
	err := newApp(os.Stdin, os.Stdout, os.Stderr).Run(ctx, os.Args)
	close(done)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "landjail mcp: %s\n", termsafe.Escape(err.Error())) // R22c-6
		os.Exit(125)
	}
}

// endOnSignal cancels the session (stop) at the first SIGTERM, SIGINT or
// SIGHUP, then kills the commands of the bash calls still running, again
// every 100 ms until done is closed: the session ends only once every
// call has returned, and a call's command could otherwise keep it
// waiting up to its timeout, until a client's SIGKILL skipped the sweep
// of agent configuration (red team round 23, R23b-1: a command planted
// core.fsmonitor, then slept). Processes Spare'd (the audit watchdog)
// are left; what the calls leave behind is killed by serve's deferred
// reaper.KillDescendants.
func endOnSignal(stop func(), done <-chan struct{}) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP)
	defer signal.Stop(sigs)
	select {
	case <-sigs:
	case <-done:
		return
	}
	stop()
	for {
		reaper.KillChildren()
		select {
		case <-done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// newApp builds the command; nothing is shared between two apps.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:        "landjail-mcp",
		Usage:       "serve the jailed file and shell tools over MCP (stdio)",
		Description: help,
		Reader:      stdin,
		Writer:      stdout,
		ErrWriter:   stderr,
		Flags: append(cliopts.MCPFlags(),
			&cli.IntFlag{Name: flagMaxConcurrentBash, Value: tools.DefaultLimits.BashConcurrent, Usage: "run at most `N` bash calls at once; more wait for a slot (or their cancellation)"},
			&cli.StringFlag{Name: flagMaxFileSize, Value: "10MiB", Usage: "refuse to read_file or edit_file a file larger than `SIZE`, and let grep skip it (bytes, or with a K, KiB, M, MiB, G or GiB suffix: powers of 1024)"},
		),
		// Errors are returned to main, which exits 125.
		ExitErrHandler: func(context.Context, *cli.Command, error) {},
		// A bad flag is one line on stderr, not the help on stdout (the
		// client's MCP channel) after "Incorrect Usage".
		OnUsageError: func(_ context.Context, _ *cli.Command, err error, _ bool) error {
			if opt, ok := cliopts.UnknownOption(err); ok {
				return fmt.Errorf("unknown option %s (see landjail-mcp --help)", opt)
			}
			if msg, ok := cliopts.InvalidValue(err); ok {
				return fmt.Errorf("%s (see landjail-mcp --help)", msg)
			}
			return fmt.Errorf("%w (see landjail-mcp --help)", err)
		},
		DisableSliceFlagSeparator: true,
		Action:                    serve,
	}
}

func serve(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return fmt.Errorf("unexpected arguments %q (the server talks over stdin/stdout)", cmd.Args().Slice())
	}
	o, err := cliopts.Load(cmd)
	if err != nil {
		return err
	}
	// explain is the server's too (each bash call's filter, README);
	// refusing it here left the documented feature unreachable (red team
	// round 15, R15b-3's note).
	if o.User != "" || o.Report != "" || o.Home != "" || o.GitIdentity || o.KillAfter != nil {
		return errors.New("the user, report, home, git_identity and kill_after settings apply to run only (landjail-mcp kills its bash calls' commands at once on SIGTERM)")
	}
	// Each bash call's spawn opens descriptors under --nofile (it is the
	// whole process's for the fork): below this every call failed with
	// EMFILE (red team round 25, R25a-2).
	if n, err := strconv.Atoi(string(o.NoFile)); err == nil && n < minServerNofile {
		return fmt.Errorf("--nofile %d: landjail-mcp needs at least %d (its own spawn of each bash call opens descriptors under the limit)", n, minServerNofile)
	}
	if err := o.CheckImplicitWorkspace(cmd.Root().ErrWriter); err != nil {
		return err
	}
	// Nothing bash starts may outlive the server: orphans, setsid'd or
	// not, are re-parented to it and killed when it exits (a finished
	// call's own session is killed at once, see tools.Bash).
	if err := reaper.Become(); err != nil {
		return err
	}
	// The plan exactly as run builds it, plus the read tracker the write
	// tools need.
	tracker := jail.NewReadTracker()
	plan, err := sandbox.New(o, sandbox.Settings{Stderr: cmd.Root().ErrWriter, JailOptions: []jail.Option{jail.WithReadTracker(tracker)}, Server: true})
	if err != nil {
		return err
	}
	defer plan.Close()
	if err := plan.PrepareServer(); err != nil {
		return err
	}
	// --protect-agent-config: swept after every bash call (Plan.Network)
	// and, deferred here so that it runs after the descendants are
	// killed, once more at exit.
	defer plan.FinishSweep()
	defer exec.Release(plan.Ruleset)
	// Registered last, so it runs first: before the TMPDIR is removed.
	defer func() {
		if _, err := reaper.KillDescendants(); err != nil {
			fmt.Fprintf(cmd.Root().ErrWriter, "landjail mcp: %s\n", termsafe.Escape(err.Error()))
		}
	}()
	// Without a PID namespace no init reaps what the calls orphan: the
	// server does as they exit, or each stays its zombie for the whole
	// session (red team round 26, R26d-2). Stopped before the kill
	// (registered after it, so it runs first).
	if pidns, _ := plan.PIDNamespace(); !pidns {
		if stop, err := reaper.StartOrphanReaper(plan.CPUThrottle()); err == nil {
			defer stop()
		}
	}
	// Before the kill (registered after it, so it runs first), and at
	// once on SIGTERM (ctx canceled; endOnSignal kills the calls'
	// commands): what the live watch holds frozen is thawed, since a task
	// frozen by the cgroup v1 freezer takes no SIGKILL (red team round
	// 24, R24c-1: a hold of 65 s kept the session past its client's
	// grace, and the sweep was skipped).
	defer plan.EndHolds()
	defer context.AfterFunc(ctx, plan.EndHolds)()
	// Session: SIGTERM (ctx canceled) ends the calls in progress too,
	// which the SDK's own call contexts do not see (R25d-4).
	k := &tools.Toolkit{WS: plan.WS, Ruleset: plan.Ruleset, Tracker: tracker, Env: plan.Env, Seccomp: plan.Seccomp, NoPIDNamespace: o.NoPIDNamespace, Session: ctx}
	// Carve-outs follow the tree as it is at each bash call, not as it
	// was when the server started (a .env created mid-session is denied);
	// with --allow-domain each call gets a proxy of its own.
	k.Compile, k.Network, k.Discard = plan.CompileCall, plan.Network, plan.DiscardCall
	// The file tools plan again after each bash call, and refuse while
	// the policy cannot be planned (R26e-5).
	k.Replan = plan.Replan
	// And on every call while a process a bash call left behind lives
	// (R27d-2: no PID namespace or control group ended it).
	k.Leftovers = reaper.Leftovers
	// What the file tools write is swept at once (R27e-1: a bare
	// repository's layout in a directory made during the session).
	k.AfterWrite = plan.SweepNow
	k.Limits.BashTimeout = time.Duration(o.Timeout)
	maxFile, err := parseSize(cmd.String(flagMaxFileSize))
	if err != nil {
		return fmt.Errorf("--%s: %w", flagMaxFileSize, err)
	}
	k.Limits.FileBytes, k.Limits.GrepFileBytes = maxFile, maxFile
	n := cmd.Int(flagMaxConcurrentBash)
	if n < 1 || n > 1024 {
		return fmt.Errorf("--%s: %d is not between 1 and 1024", flagMaxConcurrentBash, n)
	}
	k.Limits.BashConcurrent = int(n)
	srv := mcpserver.New(k, &mcpserver.Options{Name: "landjail", IgnoreRoots: cmd.Bool("ignore-roots")})
	// A line that is not a JSON-RPC message is answered with an error
	// instead of ending the session; the transport leaves stdin and
	// stdout open.
	t := &mcpserver.GuardedTransport{Reader: cmd.Root().Reader, Writer: cmd.Root().Writer}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		return err
	}
	return nil
}

// minServerNofile is the least --nofile landjail-mcp accepts.
const minServerNofile = 128

// flagMaxConcurrentBash sets tools.Limits.BashConcurrent.
const flagMaxConcurrentBash = "max-concurrent-bash"

// flagMaxFileSize sets tools.Limits.FileBytes and GrepFileBytes.
const flagMaxFileSize = "max-file-size"

// parseSize parses a positive byte count: digits, optionally followed by
// K, KiB, M, MiB, G or GiB (all powers of 1024; case-insensitive).
func parseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "KMGiBkmgIb")
	unit := strings.ToLower(s[len(num):])
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kib": 10, "m": 20, "mib": 20, "g": 30, "gib": 30}
	sh, ok := shift[unit]
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || err != nil || n <= 0 || n > (1<<62)>>sh {
		return 0, fmt.Errorf("invalid size %q (want a positive number of bytes, e.g. 10MiB)", s)
	}
	return n << sh, nil
}
