package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/landjail/landjail/internal/cliopts"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

const runHelp = `Run CMD confined to the workspace (default: the current directory, read-write),
the --ro/--rox/--rw roots and, unless --no-system, the system preset (/usr,
/bin, /lib*, the few /etc files programs need, /dev/null, ...) plus a private
TMPDIR. TCP bind/connect is denied except --connect-tcp/--bind-tcp ports
(Landlock ABI 4); signals and abstract UNIX sockets are scoped to the sandbox
(ABI 6). The child gets only PATH, HOME (the workspace), LANG, TERM, TZ and
--env variables, no capabilities, and its working directory is the workspace.

Without --timeout and --report (and, with the network restricted, without
--bind-tcp and UNIX sockets, whose listen(2) landjail checks from outside),
landjail confines itself and execve's CMD: no
extra process (fit for a container ENTRYPOINT); the private TMPDIR is then one
per workspace and user ($TMPDIR/landjail-UID-HASH, mode 0700, kept between
runs; pass --env TMPDIR=DIR to use your own). With --timeout or --report it supervises CMD in its own session and
process group, forwards SIGINT, SIGTERM and SIGHUP to that group, kills the
group on timeout (SIGTERM, SIGKILL 2s later), reaps it and removes the TMPDIR.

Best effort (the default) drops what the kernel cannot enforce with a one-line
warning on stderr; --strict refuses to run instead (exit 125). Without any
usable Landlock, landjail checks the paths in CMD's arguments (and sh -c
scripts) and refuses CMD (exit 126) if one is outside the policy.

--config FILE holds the same settings as TOML, keys named like the flags with
"_" for "-": workspace, ro, rox, rw, deny, deny_secrets, connect_tcp, bind_tcp,
net, env, user, timeout ("30s"), strict, best_effort, no_system, report.
A flag given on the command line replaces the file's value (a repeatable flag
the whole list). Unknown keys are an error.

` + exitHelp

func newRunCommand() *cli.Command {
	one := 1
	return &cli.Command{
		Name:        "run",
		Usage:       "run a command confined to the workspace",
		ArgsUsage:   "-- CMD [ARG...]",
		Description: runHelp,
		Flags:       cliopts.RunFlags(),
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
	argv := cmd.Args().Slice()
	printRules := cmd.Bool("print-rules")
	if len(argv) == 0 && !printRules {
		return errors.New("run: no command given (landjail run [flags] -- CMD [ARG...])")
	}
	cred, err := o.Credential()
	if err != nil {
		return err
	}
	ws, err := o.Policy()
	if err != nil {
		return err
	}
	defer ws.Close()
	env := exec.DefaultEnv(ws, o.Env)

	// A private TMPDIR, unless the caller chose one or wants no preset:
	// per run when supervised (removed afterwards), per workspace when
	// landjail execve's (nothing is left to remove it).
	filter, filterErr := o.SeccompFilter()
	// A supervised filter (listen checked by landjail: --bind-tcp or UNIX
	// sockets with the network restricted) needs landjail alive: no execve.
	supervise := o.Timeout > 0 || o.Report != "" || filter.Supervised()
	tmp := ""
	if !o.NoSystem && !printRules && !cliopts.HasEnv(env, "TMPDIR") {
		if supervise {
			tmp, err = os.MkdirTemp("", "landjail-")
		} else {
			tmp, err = workspaceTmp(ws.Root())
		}
		if err != nil {
			return err
		}
	}
	removeTmp := func() {
		if tmp != "" && supervise {
			os.RemoveAll(tmp)
		}
	}
	rs, err := landlock.Compile(ws, o.LandlockOptions(tmp))
	if err != nil {
		removeTmp()
		return fmt.Errorf("run: %w", err)
	}
	defer rs.Close()
	stderr := cmd.Root().ErrWriter
	if printRules {
		w := cmd.Root().Writer
		for _, r := range rs.Rules() {
			fmt.Fprintln(w, r)
		}
		return nil
	}
	cliopts.WarnDropped(stderr, rs.Report())

	if err := filterErr; err != nil {
		if o.Strict {
			return fmt.Errorf("run: seccomp: %w", err)
		}
		fmt.Fprintf(stderr, "landjail: warning: best effort dropped the seccomp layer: %v\n", err)
	}

	c := exec.CommandContext(ctx, ws, rs, argv[0], argv[1:]...)
	c.Env = env
	c.Credential = cred
	c.Seccomp = filter
	c.SelfTest = o.Strict || o.SelfTest
	if !supervise {
		// Only returns on error. The calling thread may be confined by
		// now; runMain prints the error and main exits.
		return &startError{c.Exec()}
	}
	defer removeTmp()
	return supervised(c, o, argv, cmd.Root().Reader, cmd.Root().Writer, stderr)
}

// supervised runs c to completion: signals forwarded to its process group,
// the exit status returned as an exitStatus, the report written.
func supervised(c *exec.Cmd, o *options, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	c.Timeout = time.Duration(o.Timeout)
	rep := runReport{Argv: argv, Report: c.Ruleset.Report()}
	if c.Seccomp != nil {
		rep.Seccomp = c.Seccomp.Rules()
	}
	rep.Hygiene = hygieneOf(c)

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGINT, unix.SIGTERM, unix.SIGHUP)
	defer signal.Stop(sigs)

	start := time.Now()
	if err := c.Start(); err != nil {
		err = &startError{err}
		code, _ := exitCode(err)
		rep.ExitCode, rep.Error = code, err.Error()
		return errors.Join(err, writeReport(o.Report, &rep))
	}
	pid := c.Process.Pid
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				unix.Kill(-pid, s.(syscall.Signal))
			case <-done:
				return
			}
		}
	}()
	waitErr := c.Wait()
	close(done)
	elapsed := time.Since(start)

	ps := c.ProcessState
	if ps == nil {
		rep.ExitCode, rep.Error = exitUsage, fmt.Sprint(waitErr)
		return errors.Join(fmt.Errorf("run: %w", waitErr), writeReport(o.Report, &rep))
	}
	rep.ExitCode = ps.ExitCode()
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		rep.ExitCode = 128 + int(ws.Signal())
		rep.Signal = unix.SignalName(ws.Signal())
	}
	if c.Timeout > 0 && elapsed >= c.Timeout && rep.Signal != "" {
		rep.TimedOut = true
		fmt.Fprintf(stderr, "landjail: %s timed out after %s\n", argv[0], c.Timeout)
	}
	rep.DurationMS = float64(elapsed.Microseconds()) / 1000
	if err := writeReport(o.Report, &rep); err != nil {
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
	Argv       []string         `json:"argv"`
	Report     *landlock.Report `json:"report"`
	Seccomp    []seccomp.Rule   `json:"seccomp,omitempty"`
	Hygiene    hygiene          `json:"hygiene"`
	ExitCode   int              `json:"exit_code"`
	Signal     string           `json:"signal,omitempty"`
	TimedOut   bool             `json:"timed_out,omitempty"`
	DurationMS float64          `json:"duration_ms"`
	Error      string           `json:"error,omitempty"`
}

func writeReport(path string, r *runReport) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// workspaceTmp returns the private temporary directory of the workspace
// root for runs that execve (and so cannot remove a per-run directory):
// $TMPDIR/landjail-UID-HASH, HASH from the canonical root, created 0700.
// An existing one is used only if it is a real directory (not a symlink)
// owned by this user with mode 0700, which nobody else can arrange in a
// sticky /tmp; otherwise a fresh per-run directory is made instead.
func workspaceTmp(root string) (string, error) {
	sum := sha256.Sum256([]byte(root))
	uid := os.Geteuid()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("landjail-%d-%x", uid, sum[:6]))
	err := os.Mkdir(dir, 0o700)
	if err == nil {
		return dir, nil
	}
	if errors.Is(err, fs.ErrExist) {
		var st unix.Stat_t
		if unix.Lstat(dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
			int(st.Uid) == uid && st.Mode&0o7777 == 0o700 {
			return dir, nil
		}
	}
	return os.MkdirTemp("", "landjail-")
}
