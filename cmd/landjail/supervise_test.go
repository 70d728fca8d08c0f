package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/landlock"
)

// runBinCtx is runBin with a time bound (a hang is a failure, not a
// stuck test) and the binary's stdin set to /dev/null.
func runBinCtx(t *testing.T, d time.Duration, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := osexec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "%s %q hung: %s", bin, args, out)
	if err != nil {
		var ee *osexec.ExitError
		require.ErrorAs(t, err, &ee, "running %s: %s", bin, out)
		return ee.ExitCode(), string(out)
	}
	return 0, string(out)
}

func writeScript(t *testing.T, ws, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(body), 0o755))
}

// TestRunReportNotRedirected: the report is written by the unconfined
// landjail, so it must never follow a path the command could change: a
// symlink the command puts in its place or in place of a parent during
// the run, or a symlink, hard link or FIFO planted before (by an earlier
// run). The outside file stands for /etc/passwd.
func TestRunReportNotRedirected(t *testing.T) {
	bin := landjailBin(t)
	cases := []struct {
		name string
		// plant prepares ws before the run; script is the command's
		// attack (sh attack.sh in ws); report is --report relative to ws.
		plant  func(t *testing.T, ws, outside string)
		script string
		report string
		// want is the exit status, say a regexp the output must match
		// (the refusal's reason); then check looks at the result.
		want  int
		say   string
		check func(t *testing.T, ws, outside, out string)
	}{
		{
			name:   "symlink to a file outside, made by the command",
			script: `ln -sf "$OUTSIDE/passwd" rep.json`,
			report: "rep.json",
			want:   0,
			say:    "moved or replaced",
			check: func(t *testing.T, ws, outside, out string) {
				// The attack ran: the name is now a link outside...
				target, err := os.Readlink(filepath.Join(ws, "rep.json"))
				require.NoError(t, err, "the attack did not run")
				assert.Equal(t, outside+"/passwd", target)
			},
		},
		{
			name: "parent directory swapped for a symlink during the run",
			plant: func(t *testing.T, ws, outside string) {
				require.NoError(t, os.Mkdir(filepath.Join(ws, "out"), 0o755))
			},
			script: `mv out out2 && ln -s "$OUTSIDE" out`,
			report: "out/rep.json",
			want:   0,
			check: func(t *testing.T, ws, outside, out string) {
				_, err := os.Stat(filepath.Join(outside, "rep.json"))
				assert.ErrorIs(t, err, os.ErrNotExist, "report written outside")
				b, err := os.ReadFile(filepath.Join(ws, "out2", "rep.json"))
				require.NoError(t, err, "the report goes to the file opened before the run")
				assert.Contains(t, string(b), `"exit_code": 0`)
			},
		},
		{
			name: "hard link to a file outside, planted before",
			plant: func(t *testing.T, ws, outside string) {
				require.NoError(t, os.Link(filepath.Join(outside, "passwd"), filepath.Join(ws, "rep.json")))
			},
			script: "true",
			report: "rep.json",
			want:   exitUsage,
			say:    "hard links",
		},
		{
			name: "symlink to a file outside, planted before",
			plant: func(t *testing.T, ws, outside string) {
				require.NoError(t, os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(ws, "rep.json")))
			},
			script: "true",
			report: "rep.json",
			want:   exitUsage,
			say:    "a component is a symbolic link",
		},
		{
			name: "symlinked parent directory, planted before",
			plant: func(t *testing.T, ws, outside string) {
				require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
			},
			script: "true",
			report: "out/passwd",
			want:   exitUsage,
			say:    "symbolic link",
		},
		{
			name: "FIFO planted before",
			plant: func(t *testing.T, ws, outside string) {
				require.NoError(t, unix.Mkfifo(filepath.Join(ws, "rep.json"), 0o644))
			},
			script: "true",
			report: "rep.json",
			want:   exitUsage,
			// ENXIO from O_NONBLOCK without a reader, or the fstat
			// check with one.
			say: "not a regular file|no such device or address",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ws, outside := wsDir(t), wsDir(t)
			passwd := filepath.Join(outside, "passwd")
			require.NoError(t, os.WriteFile(passwd, []byte("root:x:0:0::/root:/bin/sh\n"), 0o644))
			if tc.plant != nil {
				tc.plant(t, ws, outside)
			}
			writeScript(t, ws, "attack.sh", "OUTSIDE="+outside+"\n"+tc.script+"\n")
			code, out := runBinCtx(t, 30*time.Second, bin, "run", "--workspace", ws,
				"--report", filepath.Join(ws, tc.report), "--", "sh", "attack.sh")
			assert.Equal(t, tc.want, code, out)
			assert.Regexp(t, tc.say, out)
			b, err := os.ReadFile(passwd)
			require.NoError(t, err)
			assert.Equal(t, "root:x:0:0::/root:/bin/sh\n", string(b), "the file outside was overwritten")
			if tc.check != nil {
				tc.check(t, ws, outside, out)
			}
		})
	}
}

// callerTerminal opens a pseudo-terminal pair standing for the user's
// terminal: the test writes what the user types to master and reads
// what the screen shows from it.
func callerTerminal(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, s, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(m, &pty.Winsize{Rows: 40, Cols: 100}))
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// termios returns the terminal mode of s (TCGETS).
func termios(t *testing.T, s *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	require.NoError(t, err)
	return *tio
}

// assertExit checks that err (from Wait) is an exit with status code;
// screen is what the terminal showed.
func assertExit(t *testing.T, err error, code int, screen string) {
	t.Helper()
	var ee *osexec.ExitError
	require.ErrorAs(t, err, &ee, screen)
	assert.Equal(t, code, ee.ExitCode(), screen)
}

// startOnTerminal starts argv as the session leader of the terminal s
// (as a login shell is), with cwd dir.
func startOnTerminal(t *testing.T, s *os.File, dir string, argv ...string) *osexec.Cmd {
	t.Helper()
	c := osexec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	c.Stdin, c.Stdout, c.Stderr = s, s, s
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// screen collects what a terminal master shows, in the background.
type screen struct {
	buf  bytes.Buffer
	mu   chan struct{}
	done chan struct{}
}

func watch(m *os.File) *screen {
	sc := &screen{mu: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(sc.done)
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			sc.mu <- struct{}{}
			sc.buf.Write(b[:n])
			<-sc.mu
			if err != nil {
				return
			}
		}
	}()
	return sc
}

func (sc *screen) String() string {
	sc.mu <- struct{}{}
	defer func() { <-sc.mu }()
	return sc.buf.String()
}

// waitFor waits until the screen matches re.
func (sc *screen) waitFor(t *testing.T, re string, d time.Duration) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if rx.MatchString(sc.String()) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %q; it shows %q", re, sc.String())
}

// TestRunInteractiveBash: an interactive shell works through the relayed
// pseudo-terminal (prompt, line editing, output), its status comes back,
// and the caller's terminal is left in the mode it had.
func TestRunInteractiveBash(t *testing.T) {
	bin := landjailBin(t)
	ws := wsDir(t)
	m, s := callerTerminal(t)
	before := termios(t, s)
	c := startOnTerminal(t, s, ws, bin, "run", "--workspace", ws, "--", "bash", "--norc", "--noprofile", "-i")
	sc := watch(m)
	sc.waitFor(t, `[$#] $`, 20*time.Second)
	// While it runs the caller's terminal is raw: no echo, no line
	// discipline of its own.
	during := termios(t, s)
	assert.Zero(t, during.Lflag&(unix.ECHO|unix.ICANON), "caller's terminal not in raw mode")

	_, err := m.Write([]byte("echo $((6*7)); tty\r"))
	require.NoError(t, err)
	sc.waitFor(t, `[\r\n]42\r?\n`, 10*time.Second)
	sc.waitFor(t, `/dev/pts/\d+`, 10*time.Second)
	_, err = m.Write([]byte("exit 5\r"))
	require.NoError(t, err)
	assertExit(t, c.Wait(), 5, sc.String())
	// The command's terminal was not the caller's.
	name, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", s.Fd()))
	require.NoError(t, err)
	assert.NotContains(t, sc.String(), name+"\r\n", "the command ran on the caller's terminal")

	assert.Equal(t, before, termios(t, s), "caller's terminal mode not restored")
}

// TestRunTerminalRestoredOnSignal: SIGTERM to landjail reaches the
// command, landjail exits with its status and restores the terminal.
func TestRunTerminalRestoredOnSignal(t *testing.T) {
	bin := landjailBin(t)
	ws := wsDir(t)
	m, s := callerTerminal(t)
	before := termios(t, s)
	writeScript(t, ws, "wait.sh", "echo ready; sleep 60\n")
	c := startOnTerminal(t, s, ws, bin, "run", "--workspace", ws, "--", "sh", "wait.sh")
	sc := watch(m)
	sc.waitFor(t, "ready", 20*time.Second)
	require.NoError(t, c.Process.Signal(unix.SIGTERM))
	assertExit(t, c.Wait(), 128+15, sc.String())
	assert.Equal(t, before, termios(t, s), "caller's terminal mode not restored")
}

// TestRunTerminalTheft: a command that starts a background process which
// ignores SIGTTOU, takes the foreground of the terminal (tcsetpgrp) and
// reads it after the command returned gets the next line the user types
// into their shell, when it runs on the caller's terminal (the unconfined
// control). Under landjail it must get nothing: the line stays for the
// caller. A shell session leader stays on the terminal, as the user's
// shell does.
func TestRunTerminalTheft(t *testing.T) {
	bin := landjailBin(t)
	ws := wsDir(t)
	// A copy in the workspace (buildCLI's binary is shared, read-only).
	data, err := os.ReadFile(buildCLI(t, "./testdata/ttythief", "CGO_ENABLED=0"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ttythief"), data, 0o755))

	for _, tc := range []struct {
		name     string
		cmd      string
		confined bool
	}{
		{"unconfined control", "./ttythief stolen", false},
		{"landjail run", bin + " run --workspace " + ws + " -- ./ttythief stolen", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stolen := filepath.Join(ws, "stolen")
			os.Remove(stolen)
			m, s := callerTerminal(t)
			startOnTerminal(t, s, ws, "sh", "-c", tc.cmd+"; echo CMD-DONE; sleep 30")
			sc := watch(m)
			sc.waitFor(t, "CMD-DONE", 20*time.Second)
			time.Sleep(time.Second) // the thief has had time to take the foreground
			_, err := m.Write([]byte("user-typed-line\n"))
			require.NoError(t, err)
			time.Sleep(500 * time.Millisecond)

			// Whatever is still in the terminal's input is the caller's.
			mine := ""
			fds := []unix.PollFd{{Fd: int32(s.Fd()), Events: unix.POLLIN}}
			if n, _ := unix.Poll(fds, 500); n > 0 {
				b := make([]byte, 256)
				n, _ := unix.Read(int(s.Fd()), b)
				mine = string(b[:max(n, 0)])
			}
			got, _ := os.ReadFile(stolen)
			if !tc.confined {
				assert.Contains(t, string(got), "user-typed-line", "control: the attack should steal the line")
				assert.NotContains(t, mine, "user-typed-line")
				return
			}
			assert.NotContains(t, string(got), "user-typed-line", "the command read the caller's terminal after landjail returned")
			assert.Equal(t, "user-typed-line\n", mine, "the line did not stay for the caller")
		})
	}
}

// TestRunKillsDescendants: whatever the command leaves behind, including a
// setsid'd grandchild that escapes its process group, is gone when a
// supervised run returns; without landjail (the control) it survives.
func TestRunKillsDescendants(t *testing.T) {
	bin := landjailBin(t)
	for _, tc := range []struct {
		name string
		args []string // nil: the control, sh without landjail
	}{
		{"unconfined control", nil},
		{"run --timeout", []string{"run", "--timeout", "1m"}},
		{"run --report", []string{"run", "--report", "REPORT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := wsDir(t)
			writeScript(t, ws, "spawn.sh", proctest.SpawnDescendants)
			var c *osexec.Cmd
			report := ""
			if tc.args == nil {
				c = osexec.Command("sh", "spawn.sh")
			} else {
				args := append([]string{}, tc.args...)
				for i, a := range args {
					if a == "REPORT" {
						report = filepath.Join(t.TempDir(), "report.json")
						args[i] = report
					}
				}
				c = osexec.Command(bin, append(args, "--workspace", ws, "--", "sh", "spawn.sh")...)
			}
			c.Dir = ws
			out, err := c.CombinedOutput()
			require.NoError(t, err, "%s", out)
			gc, bg := proctest.HostPid(t, ws, proctest.GrandchildCmd), proctest.HostPid(t, ws, proctest.BackgroundCmd)
			if tc.args == nil {
				t.Cleanup(func() { proctest.Kill(gc, bg) })
				assert.NotZero(t, gc, "control: the setsid'd grandchild should survive")
				assert.NotZero(t, bg, "control: the background child should survive")
				return
			}
			assert.Zero(t, gc, "setsid'd grandchild survived landjail")
			assert.Zero(t, bg, "background child survived landjail")
			if report != "" {
				var rep struct {
					Killed int `json:"killed_descendants"`
				}
				b, err := os.ReadFile(report)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &rep))
				assert.GreaterOrEqual(t, rep.Killed, 2, "the report counts both (killed by the reaper, or with the PID namespace)")
			}
		})
	}
}

// TestRunUserTmpdir: with --user, the private TMPDIR belongs to that user
// (supervised: per run; execve'd: per workspace), so the command can use it.
func TestRunUserTmpdir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("--user needs root") // not a kernel feature: no kerneltest skip
	}
	bin := landjailBin(t)
	ws := wsDir(t)
	// The workspace must be reachable by uid 65534.
	for d := ws; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	writeScript(t, ws, "tmp.sh", `echo ok > "$TMPDIR/probe" && cat "$TMPDIR/probe" && id -u`+"\n")
	sum := sha256.Sum256([]byte(ws))
	wsTmp := filepath.Join(os.TempDir(), fmt.Sprintf("landjail-65534-%x", sum[:6]))
	t.Cleanup(func() { os.RemoveAll(wsTmp) })
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"supervised", []string{"run", "--timeout", "1m"}},
		{"supervised (PID namespace, where the layer runs)", []string{"run"}},
		{"execve", []string{"run", "--no-pid-namespace"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runBinCtx(t, 30*time.Second, bin, append(tc.args, "--user", "65534", "--workspace", ws, "--", "sh", "tmp.sh")...)
			assert.Equal(t, 0, code, out)
			assert.True(t, strings.HasSuffix(out, "ok\n65534\n"), out) // after a path-check-only warning, if any
		})
	}
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(wsTmp, &st))
	assert.EqualValues(t, 65534, st.Uid)
	assert.EqualValues(t, 0o700, st.Mode&0o7777)
}

// TestRunImplicitWorkspace: without --workspace, "/" is refused (it would
// make every file the command's) and the home directory is warned about.
func TestRunImplicitWorkspace(t *testing.T) {
	t.Chdir("/")
	code, _, stderr := runCLI(t, "run", "--timeout", "1m", "--", "true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--workspace")

	home := wsDir(t)
	t.Setenv("HOME", home)
	t.Chdir(home)
	code, _, stderr = runCLI(t, "run", "--timeout", "1m", "--", "true")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "warning: the workspace is your home directory")

	code, _, stderr = runCLI(t, "run", "--timeout", "1m", "--workspace", home, "--", "true")
	assert.Equal(t, 0, code, stderr)
	assert.NotContains(t, stderr, "home directory", "an explicit --workspace is the caller's choice")
}

// TestNeedsSupervisor: the supervise-or-execve decision (kernel-free
// but for the PID-namespace row, which follows the namespace probe).
func TestNeedsSupervisor(t *testing.T) {
	pidnsHere := landlock.ABI() > 0 && kerneltest.ExpectNamespaces(t, nsview.Probe())
	tty := stdioSet{isTerm: [3]bool{false, true, false}}
	cases := []struct {
		name    string
		o       options
		stdio   stdioSet
		leaves  bool
		want    bool
		asksTTY bool // whether leave must have been called
	}{
		{"plain, detached", options{NoPIDNamespace: true}, stdioSet{}, true, false, true},
		{"plain, cannot leave the terminal's session", options{NoPIDNamespace: true}, stdioSet{}, false, true, true},
		// A PID namespace needs a fork: supervised wherever it is in
		// force (root, namespaces allowed, Landlock); elsewhere (ns=EPERM,
		// landlock=ENOSYS) the plain case again.
		{"PID namespace", options{}, stdioSet{}, true, pidnsHere, !pidnsHere},
		{"no namespaces at all", options{NoNamespaces: true}, stdioSet{}, true, false, true},
		{"timeout", options{Timeout: 1}, stdioSet{}, true, true, false},
		{"report", options{Report: "r"}, stdioSet{}, true, true, false},
		{"a terminal", options{}, tty, true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			got, why := needsSupervisor(&tc.o, false, tc.stdio, func() bool { called = true; return tc.leaves })
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.want, why != "")
			assert.Equal(t, tc.asksTTY, called, "leave has a side effect (setsid): only when execve is otherwise chosen")
		})
	}
}
