// Command landjail runs a command confined to a workspace (Landlock, with a
// path-check fallback), resolves paths under a policy, and reports what the
// kernel here can enforce.
//
//	landjail run [flags] -- CMD [ARG...]
//	landjail resolve [policy flags] [--json] PATH...
//	landjail doctor [--json]
//
// Exit codes: the command's status (128+N when killed by signal N); 125
// landjail's own error (bad flag, bad config, strict refusal); 126 command
// found but not executable, or refused by the path check; 127 command not
// found. resolve exits 1 when it refused a path.
//
// GOMAXPROCS is the CPU count of the affinity mask, not the control
// group's CPU quota (containermaxprocs=0), and the runtime does not poll
// the quota while landjail runs (updatemaxprocs=0, which also spares
// sysmon a read of cpu.cfs_quota_us right after start): landjail's own
// parallelism (a few helper goroutines during start-up, the proxy's
// copies) has no use for a container's CPU quota. The runtime still
// reads the quota once at start (Go 1.26 counts a non-default setting).
// The confined command inherits neither setting.
//
//go:debug containermaxprocs=0
//go:debug updatemaxprocs=0
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/limits"
	limitsearly "github.com/landjail/landjail/internal/limits/early"
	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/selfproc"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/landlock"
)

func main() {
	// The limits goroutine first (startLimitsEarly): the two stage entry
	// points below return at once in an ordinary process, but after ≈40
	// µs of main's thread (exec.Init opens /proc/self/exe).
	e := startLimitsEarly(os.Args)
	denials.Main() // the audit watchdog of --explain (restores audit's enabled flag)
	exec.Init()    // the user-namespace stage, for runs by a non-root user
	startEarly(e)
	exitsAfterRun = true
	code := runMain(context.Background(), os.Args, os.Stdin, os.Stdout, os.Stderr)
	limits.WaitEarly() // a sweep startEarly began ends before the exit
	os.Exit(code)
}

// startEarly starts, before the flags are parsed, what "landjail run"
// will need from the kernel and takes longest to make on other threads:
// the namespace probe and the view's network namespace
// (landlock.StartProbe), so that they overlap the CLI's start-up (≈0.2
// ms; see BENCHMARKS.md); in every mode, the stale-group sweep of
// limits.Start (limits.StartEarly, ≈0.25 ms). The command line is only glanced at: a guess
// that turns out wrong costs time, never behaviour. runAction calls
// StartProbe again with the parsed options (only the first call of each
// part does anything), Compile decides the layer from the probe as
// always, and a network namespace made for nothing is dropped at exit.
//
// startEarly is in two parts: startLimitsEarly glances at the command line
// and starts the limits part, main calls it before the stage entry points
// (denials.Main, exec.Init); startEarly starts the rest after them (the
// user-namespace stage needs exec.Init's /proc/self/exe).
func startEarly(e earlyRun) {
	if !e.run || !e.namespaces {
		return
	}
	privateNetwork := e.privateNetwork
	// A non-root caller's view comes from the user-namespace stage: start
	// it first, so that its start (the longest part of a run there)
	// overlaps the CLI's (exec.PrestartUserStage; it does nothing for
	// root).
	if landlock.ABI() > 0 {
		exec.PrestartUserStage(privateNetwork)
	}
	// One short run: the view joins the mount namespace the probe makes
	// instead of making a second one (nsview.KeepProbeNamespace).
	nsview.KeepProbeNamespace()
	landlock.StartProbe(privateNetwork)
	// os probes pidfd support once, on the first process it starts or
	// finds (≈80 µs here); exec makes it happen before the spawn
	// (exec.warmPidfd): start it now, while the flags are parsed.
	go func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Release()
		}
	}()
}

// earlyRun is what startLimitsEarly read from the command line.
type earlyRun struct {
	run                        bool // "landjail run", neither help nor --print-rules
	namespaces, privateNetwork bool // guesses: see startEarly
}

// startLimitsEarly glances at args and, for a "landjail run", starts the
// probe and stale-group sweep of limits.Start (limits.StartEarly) and
// the runtime's template thread, which the first LockOSThread (exec locks
// the spawning thread) starts with a clone otherwise: in every mode. A
// stage process (exec.Init, denials.Main) has an argv of one word and
// starts nothing here; neither does one that nsinit.EnvMarker marks as a
// stage (exec.Init refuses it outside a PID namespace init and exits,
// which would cut a sweep short).
func startLimitsEarly(args []string) earlyRun {
	e := earlyRun{namespaces: true, privateNetwork: true}
	if len(args) < 2 || args[1] != "run" {
		return e
	}
	if _, stage := os.LookupEnv(nsinit.EnvMarker); stage {
		return e
	}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "help", "h", "print-rules":
			return e
		case "no-namespaces":
			e.namespaces = false
		case "net", "connect-tcp", "bind-tcp", "config":
			e.privateNetwork = false // maybe not; runAction knows
		}
	}
	e.run = true
	if !limitsearly.Started {
		limits.StartEarly()
	}
	if !selfproc.Started() { // its goroutine made it already
		go func() {
			runtime.LockOSThread()
			runtime.UnlockOSThread()
		}()
	}
	return e
}

// exitsAfterRun is set by main: the process exits when runMain returns
// (tests call runMain in-process, and do not). A supervised run then
// lets its PID namespace end with the process (exec.Cmd.DeferNamespaceEnd).
var exitsAfterRun bool

// runMain runs the CLI with args (args[0] is the program name) and returns
// the exit code; it prints the error, if any, to stderr. It never exits:
// tests call it in-process (except for run without --timeout, which
// replaces the process).
func runMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runTree(ctx, invoked(args), args, stdin, stdout, stderr)
}

// runTree is runMain with the tree newApp builds for only. A run whose
// arguments cliopts.LoadRunFast reads (plain "--NAME [VALUE]" flags, then
// "--" and the command) skips the library: the same Options, command and
// errors, ≈0.1 ms less of every such start (BENCHMARKS.md, round 6).
func runTree(ctx context.Context, only string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var err error
	if o, argv, ok := loadRunFast(only, args); ok {
		err = runLoaded(ctx, o, argv, false, runIO{stdin, stdout, stderr})
	} else {
		err = newApp(stdin, stdout, stderr, only, args).Run(ctx, args)
	}
	code, silent := exitCode(err)
	if !silent {
		// The text may name what the command planted (red team round 22,
		// R22c-6): no escape sequence reaches the caller's terminal.
		fmt.Fprintf(stderr, "landjail: %s\n", termsafe.Escape(err.Error()))
	}
	return code
}

// loadRunFast is cliopts.LoadRunFast for a "landjail run" (only "run"),
// with run's flags.
func loadRunFast(only string, args []string) (*cliopts.Options, []string, bool) {
	if only != "run" || len(args) < 2 {
		return nil, nil, false
	}
	return cliopts.LoadRunFast(args[2:])
}

// invoked is the subcommand args name in the place the CLI looks for it
// (args[1]: the root command has no flag that takes a value), or "" when
// args[1] is anything else (a flag, "help", an unknown word).
func invoked(args []string) string {
	if len(args) > 1 && args[1] == "run" {
		return "run"
	}
	return ""
}

// newApp builds the command tree for args. Nothing is shared between two
// apps. With only "run" the tree holds run alone, with the flags args
// name (newRunCommandFor): the CLI then selects it and parses its flags
// exactly as in the whole tree (TestPrunedTreeSame), and every run is
// spared building the other subcommands' flags and the library's set-up
// of them and of run's unused flags (BENCHMARKS.md, round 4).
func newApp(stdin io.Reader, stdout, stderr io.Writer, only string, args []string) *cli.Command {
	var cmds []*cli.Command
	if only == "run" {
		cmds = []*cli.Command{newRunCommandFor(args[2:])}
	} else {
		cmds = []*cli.Command{newRunCommand()}
		cmds = append(cmds, newResolveCommand(), newDoctorCommand(), newMCPCommand(), newGCCommand())
	}
	return &cli.Command{
		Name:        "landjail",
		Version:     version(),
		Usage:       "confine what a command can touch to a workspace",
		Description: examplesHelp + "\n\n" + exitHelp,
		Reader:      stdin,
		Writer:      stdout,
		ErrWriter:   stderr,
		// Errors are returned to runMain, which maps them to exit codes;
		// the library must never call os.Exit.
		ExitErrHandler:            func(context.Context, *cli.Command, error) {},
		OnUsageError:              onUsageError,
		DisableSliceFlagSeparator: true,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.Args().Present() {
				return fmt.Errorf("unknown command %q (see landjail --help)", cmd.Args().First())
			}
			return cli.ShowRootCommandHelp(cmd)
		},
		Commands: cmds,
	}
}

// onUsageError makes a flag-parsing error a plain error (exit 125) with a
// hint, instead of the library's "Incorrect Usage" plus full help.
func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	see := "landjail --help"
	if cmd.Root() != cmd {
		see = "landjail " + cmd.Name + " --help"
	}
	if opt, ok := cliopts.UnknownOption(err); ok {
		return fmt.Errorf("unknown option %s (see %s)", opt, see)
	}
	if msg, ok := cliopts.InvalidValue(err); ok {
		return fmt.Errorf("%s (see %s)", msg, see)
	}
	if cmd.Root() == cmd {
		return fmt.Errorf("%w (see %s)", err, see)
	}
	return fmt.Errorf("%s: %w (see %s)", cmd.Name, err, see)
}

// version is the module version landjail was built from
// (runtime/debug.ReadBuildInfo): "v1.2.3" for go install ...@v1.2.3,
// "(devel)" from a checkout, followed by the VCS revision (and
// "+modified" for a dirty tree) when the build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+modified"
			}
		}
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}
