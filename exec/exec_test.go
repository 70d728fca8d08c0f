package exec_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/internal/wstest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

var (
	helperOnce sync.Once
	helperBin  string
	helperErr  error
)

// buildHelper builds testdata/helper once per test binary.
func buildHelper(t testing.TB) string {
	t.Helper()
	helperOnce.Do(func() {
		dir, err := os.MkdirTemp("", "landjail-exec-helper-")
		if err != nil {
			helperErr = err
			return
		}
		helperBin = filepath.Join(dir, "helper")
		out, err := osexec.Command("go", "build", "-o", helperBin, "./testdata/helper").CombinedOutput()
		if err != nil {
			helperErr = fmt.Errorf("go build helper: %v\n%s", err, out)
		}
	})
	require.NoError(t, helperErr)
	return helperBin
}

// Markers: the content of the fixture's outside secret, the value of the
// environment secret TestChildAdversarial sets, and the private key of
// TestMainJobGoBuild. A refused attack must never print one of them; the
// unconfined control prints it, so its absence means something.
const (
	outsideMarker = wstest.Secret
	envMarker     = "LANDJAIL-EXEC-ENV-SECRET"
	keyMarker     = "LANDJAIL-EXEC-SSH-KEY"
)

// Refusal texts: what the child prints for the errno it was refused with.
const (
	eacces = "Permission denied"         // EACCES, from Landlock
	eperm  = "Operation not permitted"   // EPERM, a dropped capability or the seccomp guard
	exdev  = "Invalid cross-device link" // EXDEV, Landlock's refer right missing
)

// assertRefused checks that a confined child was refused for the
// expected reason: it ran and exited non-zero (not a spawn failure), its
// output says want, and it holds none of the markers.
func assertRefused(t *testing.T, out []byte, err error, want, name string) {
	t.Helper()
	var ee *osexec.ExitError
	if assert.ErrorAs(t, err, &ee, "%s: the confined child succeeded: %s", name, out) {
		assert.NotZero(t, ee.ExitCode(), "%s", name)
	}
	assert.Contains(t, string(out), want, "%s: refused for another reason", name)
	for _, m := range []string{outsideMarker, envMarker, keyMarker} {
		assert.NotContains(t, string(out), m, "%s: the secret reached the output", name)
	}
}

// fixture: the wstest tree (a workspace, a read-only and a read-exec
// root, a directory outside every root with a secret, and a private
// temporary directory) and a Workspace on it.
type fixture struct {
	root, ro, rox, outside, tmp string
	helper                      string // copy of the helper in rox
	ws                          *jail.Workspace
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	d := wstest.New(t)
	f := &fixture{root: d.Root, ro: d.RO, rox: d.ROX, outside: d.Outside, tmp: d.Tmp}
	ws, err := jail.New(f.root, jail.WithAllowed(f.ro, jail.ReadOnly), jail.WithAllowed(f.rox, jail.ReadExec))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	f.ws = ws
	return f
}

func (f *fixture) withHelper(t testing.TB) {
	t.Helper()
	data, err := os.ReadFile(buildHelper(t))
	require.NoError(t, err)
	f.helper = filepath.Join(f.rox, "helper")
	require.NoError(t, os.WriteFile(f.helper, data, 0o755))
}

func (f *fixture) compile(t testing.TB, opt landlock.Options) *landlock.Ruleset {
	t.Helper()
	opt.System = true
	opt.TmpDir = f.tmp
	rs, err := landlock.Compile(f.ws, opt)
	require.NoError(t, err)
	// Release stops the Ruleset's spawner workers now rather than after
	// their idle timeout, so a later test counting confined threads
	// sees only its own.
	t.Cleanup(func() { exec.Release(rs); rs.Close() })
	return rs
}

// serve is listentest.Serve, for namespaces_linux_test.go.
func serve(t *testing.T, l net.Listener) { listentest.Serve(t, l) }

func port(l net.Listener) string { return strconv.Itoa(l.Addr().(*net.TCPAddr).Port) }

// TestChildAdversarial runs the child side of the adversarial list through
// exec: every attack is refused for the confined child, and (as a control
// that the case means something) succeeds when the same script runs through
// plain os/exec; every positive control succeeds. Then it checks that the
// parent process is still unconfined.
func TestChildAdversarial(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 6)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the capability cases chown a file owned by another user and mount")
	}
	f := newFixture(t)
	f.withHelper(t)

	allowed := listentest.Listen(t, "tcp", "127.0.0.1:0")
	denied := listentest.Listen(t, "tcp", "127.0.0.1:0")
	freePort := strconv.Itoa(listentest.FreePort(t))
	abstractName := fmt.Sprintf("landjail-exec-test-%d", os.Getpid())
	listentest.Listen(t, "unix", "@"+abstractName)

	outsider := osexec.Command("/bin/sleep", "60")
	require.NoError(t, outsider.Start())
	t.Cleanup(func() { outsider.Process.Kill(); outsider.Wait() })

	for _, n := range []string{"owned1.txt", "owned2.txt"} {
		p := filepath.Join(f.root, n)
		require.NoError(t, os.WriteFile(p, nil, 0o644))
		require.NoError(t, os.Chown(p, 65534, 65534))
	}
	for _, n := range []string{"mv1.txt", "mv2.txt", "hl1.txt", "hl2.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(f.root, n), []byte(n), 0o644))
	}
	for _, d := range []string{"mnt1", "mnt2"} {
		require.NoError(t, os.Mkdir(filepath.Join(f.root, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(f.outside, "secret"), filepath.Join(f.root, "link")))
	require.NoError(t, os.Symlink(filepath.Join(f.outside, "created1"), filepath.Join(f.root, "dangle1")))
	require.NoError(t, os.Symlink(filepath.Join(f.outside, "created2"), filepath.Join(f.root, "dangle2")))
	t.Setenv("LANDJAIL_TEST_SECRET", envMarker)

	rs := f.compile(t, landlock.Options{ConnectTCP: []uint16{uint16(allowed.Addr().(*net.TCPAddr).Port)}})
	require.True(t, rs.Enforced())

	O, R, X, H := f.outside, f.ro, f.rox, f.helper
	// want: the refusal the confined child must print; leak: what the
	// unconfined control prints and the confined child must not.
	const envScript = `printenv LANDJAIL_TEST_SECRET || { echo "LANDJAIL_TEST_SECRET: not set" >&2; exit 1; }`
	attacks := []struct{ name, confined, control, want, leak string }{
		{"read outside", "cat " + O + "/secret", "", eacces, outsideMarker},
		{"write outside", "echo x > " + O + "/w1", "echo x > " + O + "/w2", eacces, ""},
		{"symlink escape", "cat link", "", eacces, outsideMarker},
		{"dangling symlink escape", "echo x > dangle1", "echo x > dangle2", eacces, ""},
		{"symlink made by the child", "ln -s " + O + "/secret l1 && cat l1", "ln -s " + O + "/secret l2 && cat l2", eacces, outsideMarker},
		{"hardlink out of the workspace", "ln hl1.txt " + O + "/hl1", "ln hl2.txt " + O + "/hl2", eacces, ""},
		{"hardlink an outside file in", "ln " + O + "/secret hlin1 && cat hlin1", "ln " + O + "/secret hlin2 && cat hlin2", exdev, outsideMarker},
		{"rename out of the workspace", "mv mv1.txt " + O + "/mv1", "mv mv2.txt " + O + "/mv2", eacces, ""},
		{"/proc/self/root", "cat /proc/self/root" + O + "/secret", "", eacces, outsideMarker},
		{"signal to an outside process", H + " kill " + strconv.Itoa(outsider.Process.Pid), "", "operation not permitted", ""},
		// The pooled spawner thread shares the child's Landlock domain;
		// only the seccomp guard keeps the child from killing the
		// parent through it.
		{"signal a thread of the parent", H + " parentthreads 100000", "", "no thread of parent", ""},
		{"tcp connect to a port not allowed", H + " tcp 127.0.0.1:" + port(denied), "", "connect: permission denied", ""},
		{"tcp bind", H + " bindtcp " + freePort, "", "bind: permission denied", ""},
		{"abstract unix socket", H + " abstract " + abstractName, "", "connect: operation not permitted", ""},
		{"env secret", envScript, "", "LANDJAIL_TEST_SECRET: not set", envMarker},
		{"chown a file owned by another user", "chown 0 owned1.txt", "chown 0 owned2.txt", eperm, ""},
		{"mount", "mount -t tmpfs none mnt1", "mount -t tmpfs none mnt2 && umount mnt2", "permission denied", ""},
		{"write into a ro root", "echo x > " + R + "/w1", "echo x > " + R + "/w2 && rm " + R + "/w2", eacces, ""},
		{"execute in a ro root", R + "/run.sh", "", eacces, "ran"},
		{"write into a rox root", "echo x > " + X + "/w1", "echo x > " + X + "/w2 && rm " + X + "/w2", eacces, ""},
		{"read /etc/shadow", "cat /etc/shadow", "", eacces, "root:"},
	}
	positive := []struct{ name, script string }{
		{"read write rename inside", "cat in.txt && echo x > new.txt && mv new.txt renamed.txt && grep -q x renamed.txt && mkdir -p d/e && mv renamed.txt d/e/ && rm -r d"},
		{"execute inside", "cp /bin/true ./mytrue && ./mytrue"},
		{"read a ro root", "grep -q readonly " + R + "/ro.txt"},
		{"execute in a rox root", X + "/run.sh"},
		{"allowed tcp port", H + " tcp 127.0.0.1:" + port(allowed)},
		{"tmpdir", `test "$TMPDIR" = ` + f.tmp + ` && echo x > "$TMPDIR/f" && grep -q x "$TMPDIR/f"`},
		{"home is the workspace", `test "$HOME" = ` + f.root},
		{"dev null", "echo x > /dev/null && head -c 4 /dev/urandom > /dev/null"},
		{"system tools", "ls /usr/bin >/dev/null && sort </dev/null && /usr/bin/env true"},
	}

	run := func(script string) ([]byte, error) {
		c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/bash", "-c", script)
		return c.CombinedOutput()
	}
	control := func(script string) ([]byte, error) {
		c := osexec.Command("/bin/bash", "-c", script)
		c.Dir = f.root
		return c.CombinedOutput()
	}
	for _, a := range attacks {
		out, err := run(a.confined)
		assertRefused(t, out, err, a.want, a.name)
		if a.leak != "" {
			assert.NotContains(t, string(out), a.leak, "%s: leaked", a.name)
		}
		t.Logf("%s: refused: %s", a.name, bytes.TrimSpace(out))
		script := a.control
		if script == "" {
			script = a.confined
		}
		out, err = control(script)
		if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked && a.name == "mount" {
			// LANDJAIL_EMULATE=ns=...: mount(2) is refused to everyone, as
			// under Docker's default profile; the control fails too.
			assert.Error(t, err, "mount: the emulation refuses mount to the control as well: %s", out)
			continue
		}
		assert.NoError(t, err, "%s: control (unconfined) failed, so the case proves nothing: %s", a.name, out)
		assert.Contains(t, string(out), a.leak, "%s: the control does not print what the confined child must not", a.name)
	}
	for _, p := range positive {
		out, err := run(p.script)
		assert.NoError(t, err, "%s: %s", p.name, out)
	}
	_, err := os.Stat(filepath.Join(f.outside, "created1"))
	assert.ErrorIs(t, err, os.ErrNotExist, "dangling symlink created a file outside")

	// Leaked fd: a descriptor without O_CLOEXEC in the parent. The
	// unconfined control (plain os/exec) inherits it; the confined child
	// does not.
	fd, err := unix.Open(filepath.Join(f.outside, "secret"), unix.O_RDONLY, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	leak := fmt.Sprintf("cat <&%d", fd)
	out, err := control(leak)
	assert.NoError(t, err, "control: plain os/exec should leak fd %d: %s", fd, out)
	assert.Contains(t, string(out), outsideMarker, "control: the leaked fd reads the secret")
	out, err = run(leak)
	assertRefused(t, out, err, "Bad file descriptor", fmt.Sprintf("leaked fd %d reached the child", fd))

	// Known gap, left to the seccomp layer: MPTCP sockets are not covered
	// by Landlock's TCP rules. The report must say so.
	assert.Contains(t, strings.Join(rs.Report().Notes, "\n"), "MPTCP")
	if out, err := run(H + " mptcp 127.0.0.1:" + port(denied)); err == nil {
		t.Logf("known gap on this kernel: MPTCP connect to a port not allowed succeeds")
	} else {
		t.Logf("MPTCP connect refused on this kernel: %s", out)
	}

	// The parent is still unconfined.
	assertUnconfined(t, filepath.Join(f.outside, "secret"), rs)
}

// assertUnconfined checks that this process can still read outside from
// many goroutines while the pooled spawner threads of rs are alive (no
// goroutine other than a worker ever runs on a confined thread), that at
// most 2×GOMAXPROCS threads (the two KeepCaps pools) are confined, and,
// after exec.Release(rs), that no thread carries no_new_privs or a reduced
// bounding set.
func assertUnconfined(t *testing.T, outsideFile string, rs *landlock.Ruleset) {
	t.Helper()
	proctest.AssertUnconfined(t, outsideFile)

	// no_new_privs is on every thread from the start when kerneltest.Main
	// emulates a kernel or the process inherited an outer seccomp filter.
	nnp := "NoNewPrivs:\t0"
	if kerneltest.NoNewPrivsAtStart() {
		nnp = "NoNewPrivs:\t1"
	}
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	assert.Contains(t, string(status), nnp, "main thread")

	confinedThreads := func() []string {
		var bad []string
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		for _, task := range tasks {
			s, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			if err != nil {
				continue // the thread just exited
			}
			if !strings.Contains(string(s), nnp) || !bytes.Equal(field(s, "CapBnd"), field(status, "CapBnd")) {
				bad = append(bad, task.Name())
			}
		}
		return bad
	}
	assert.LessOrEqual(t, len(confinedThreads()), 2*runtime.GOMAXPROCS(0), "more confined threads than pooled workers")

	// Released workers exit once idle; give them a moment.
	exec.Release(rs)
	var bad []string
	for deadline := time.Now().Add(3 * time.Second); ; {
		bad = confinedThreads()
		if len(bad) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Empty(t, bad, "threads left with no_new_privs or dropped capabilities")
}

func field(status []byte, name string) []byte {
	for _, line := range bytes.Split(status, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(name+":")); ok {
			return bytes.TrimSpace(v)
		}
	}
	return nil
}

func TestKeepCapsIsTheOnlyWayToChown(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	p := filepath.Join(f.root, "owned")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	require.NoError(t, os.Chown(p, 65534, 65534))

	c := exec.CommandContext(context.Background(), f.ws, rs, "chown", "0", "owned")
	out, err := c.CombinedOutput()
	assertRefused(t, out, err, eperm, "chown without KeepCaps")
	c = exec.CommandContext(context.Background(), f.ws, rs, "chown", "0", "owned")
	c.KeepCaps = true
	out, err = c.CombinedOutput()
	assert.NoError(t, err, "%s", out)
}

func TestCredential(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	f := newFixture(t)
	for d := f.root; d != "/tmp"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	rs := f.compile(t, landlock.Options{})
	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", "id -u; id -g; cat "+f.outside+"/secret")
	c.Credential = &syscall.Credential{Uid: 65534, Gid: 65534}
	var out bytes.Buffer
	c.Stdout = &out
	err := c.Run()
	t.Logf("run: %v", err)
	var ee *osexec.ExitError
	assert.ErrorAs(t, err, &ee, "still confined as another user")
	assert.Equal(t, "65534\n65534\n", out.String())
}

// TestCredentialMustMatchPlan (red team round 31, R31d-8): a Ruleset
// whose patterns were expanded for this process's credentials refuses a
// child started as another user (the walk had listed, as uid 0, what
// that user cannot: the view named it); controls: compiled with that
// Credential it runs, and a policy without patterns runs either way.
func TestCredentialMustMatchPlan(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	f := newFixture(t)
	for d := f.root; d != "/tmp"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	cred := &syscall.Credential{Uid: 65534, Gid: 65534}
	ws, err := jail.New(f.root, jail.WithDeny(".env"))
	require.NoError(t, err)
	defer ws.Close()
	run := func(ws *jail.Workspace, opt landlock.Options) error {
		opt.System, opt.TmpDir = true, f.tmp
		rs, err := landlock.Compile(ws, opt)
		require.NoError(t, err)
		defer rs.Close()
		c := exec.CommandContext(context.Background(), ws, rs, "/bin/true")
		c.Credential = cred
		return c.Run()
	}
	assert.ErrorIs(t, run(ws, landlock.Options{}), landlock.ErrCredential)
	assert.NoError(t, run(ws, landlock.Options{Credential: cred}), "control: planned for that user")
	assert.NoError(t, run(f.ws, landlock.Options{}), "control: no pattern, nothing planned by credentials")
}

func TestDir(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	require.NoError(t, os.Mkdir(filepath.Join(f.root, "sub"), 0o755))

	out, err := exec.CommandContext(context.Background(), f.ws, rs, "pwd").Output()
	require.NoError(t, err)
	assert.Equal(t, f.root+"\n", string(out), "defaults to the workspace root")

	c := exec.CommandContext(context.Background(), f.ws, rs, "pwd")
	c.Dir = "sub"
	out, err = c.Output()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(f.root, "sub")+"\n", string(out))

	c = exec.CommandContext(context.Background(), f.ws, rs, "pwd")
	c.Dir = f.outside
	assert.ErrorIs(t, c.Run(), jail.ErrOutsideWorkspace)

	c = exec.CommandContext(context.Background(), f.ws, rs, "no-such-command-landjail")
	assert.ErrorIs(t, c.Run(), exec.ErrNotFound)

	c = exec.CommandContext(context.Background(), nil, rs, "true")
	assert.ErrorIs(t, c.Run(), exec.ErrNoWorkspace)

	c = exec.CommandContext(context.Background(), f.ws, rs, "true")
	require.NoError(t, c.Run())
	assert.ErrorIs(t, c.Start(), exec.ErrAlreadyStarted)
}

func TestStdio(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", "cat; echo err >&2; cat <&3")
	c.Stdin = strings.NewReader("from stdin\n")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	_, err = w.WriteString("extra\n")
	require.NoError(t, err)
	w.Close()
	defer r.Close()
	c.ExtraFiles = []*os.File{r}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	require.NoError(t, c.Run())
	assert.Equal(t, "from stdin\nextra\n", stdout.String(), "ExtraFiles reach the child")
	assert.Equal(t, "err\n", stderr.String())
	assert.True(t, c.ProcessState.Success())
}

func TestEnv(t *testing.T) {
	f := newFixture(t)
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("LANDJAIL_PASS", "passed")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "nope")
	env := exec.DefaultEnv(f.ws, []string{"LANDJAIL_PASS", "SET=value", "UNSET_LANDJAIL"})
	assert.Contains(t, env, "HOME="+f.root)
	assert.Contains(t, env, "LANG=C.UTF-8")
	assert.Contains(t, env, "LANDJAIL_PASS=passed")
	assert.Contains(t, env, "SET=value")
	for _, e := range env {
		assert.NotContains(t, e, "AWS_SECRET")
		assert.NotContains(t, e, "UNSET_LANDJAIL")
	}
	assert.Contains(t, exec.DefaultEnv(f.ws, []string{"HOME=/x"}), "HOME=/x", "a later entry wins")

	rs := f.compile(t, landlock.Options{})
	out, err := exec.CommandContext(context.Background(), f.ws, rs, "env").Output()
	require.NoError(t, err)
	assert.NotContains(t, string(out), "AWS_SECRET")
	assert.Contains(t, string(out), "TMPDIR="+f.tmp)
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	// The background sleep ignores SIGTERM: only the group SIGKILL ends
	// it. Its unique argument finds it in /proc (no "$!": the path-check
	// fallback refuses parameter expansions).
	arg := fmt.Sprintf("60.%d", os.Getpid())
	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", `(trap "" TERM; exec sleep `+arg+`) & wait`)
	c.Timeout = 300 * time.Millisecond
	c.WaitDelay = 300 * time.Millisecond
	start := time.Now()
	require.NoError(t, c.Start())
	var pid int
	for deadline := time.Now().Add(2 * time.Second); pid == 0 && time.Now().Before(deadline); {
		pid = proctest.Find("sleep\x00" + arg)
		time.Sleep(10 * time.Millisecond)
	}
	require.NotZero(t, pid, "grandchild not found")
	err := c.Wait()
	var ee *osexec.ExitError
	assert.ErrorAs(t, err, &ee)
	assert.Less(t, time.Since(start), 5*time.Second)
	// The grandchild is dead (or a zombie waiting for init).
	deadline := time.Now().Add(2 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still alive: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestContextCancel(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	c := exec.CommandContext(ctx, f.ws, rs, "sleep", "60")
	require.NoError(t, c.Start())
	cancel()
	err := c.Wait()
	var ee *osexec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, syscall.SIGTERM, ee.Sys().(syscall.WaitStatus).Signal())
}

// TestContextCancelStopped: a child that stopped itself keeps SIGTERM
// pending, so a cancellation that sends SIGTERM alone ends it only with
// WaitDelay's SIGKILL; Cancel continues the group after SIGTERM, as
// timeout(1) does (red team R11b-7; red before: killed by SIGKILL after
// the 20 s delay).
func TestContextCancelStopped(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	arg := fmt.Sprintf("61.%d", os.Getpid())
	c := exec.CommandContext(ctx, f.ws, rs, "/bin/sh", "-c", "kill -STOP 0; exec sleep "+arg)
	c.WaitDelay = 20 * time.Second
	require.NoError(t, c.Start())
	// Stopped: the shell's state in /proc is T (it never reaches sleep).
	stopped := false
	for deadline := time.Now().Add(5 * time.Second); !stopped && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		stopped = groupStopped(c.Process.Pid)
	}
	require.True(t, stopped, "the child never stopped itself")
	start := time.Now()
	cancel()
	err := c.Wait()
	var ee *osexec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, syscall.SIGTERM, ee.Sys().(syscall.WaitStatus).Signal())
	assert.Less(t, time.Since(start), 10*time.Second, "ended by WaitDelay's SIGKILL, not by SIGTERM")
}

// groupStopped reports whether a process of process group pgid (the
// child, or the child of its init in a PID namespace) is stopped.
func groupStopped(pgid int) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 3 && fields[0] == "T" && fields[3] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// TestPathCheckFallback runs with Landlock refused by seccomp: commands
// naming paths outside the policy are refused before they start.
func TestPathCheckFallback(t *testing.T) {
	if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"=landlock=ENOSYS") {
		return
	}
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	require.Equal(t, landlock.LevelPathCheck, rs.Report().Level)

	c := exec.CommandContext(context.Background(), f.ws, rs, "cat", f.outside+"/secret")
	err := c.Run()
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
	assert.Nil(t, c.Process, "refused before it started")

	c = exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", "cat ../outside/secret")
	assert.ErrorIs(t, c.Run(), jail.ErrOutsideWorkspace)

	out, err := exec.CommandContext(context.Background(), f.ws, rs, "/bin/cat", "in.txt", f.ro+"/ro.txt").Output()
	require.NoError(t, err)
	assert.Equal(t, "inside\nreadonly\n", string(out))

	// Without a Ruleset only the workspace policy counts: /bin/cat is
	// outside it.
	c = exec.CommandContext(context.Background(), f.ws, nil, "/bin/cat", "in.txt")
	assert.ErrorIs(t, c.Run(), jail.ErrOutsideWorkspace)

	assert.ErrorIs(t, exec.SelfTest(f.ws, rs), landlock.ErrUnavailable, "nothing to self-test")
	c = exec.CommandContext(context.Background(), f.ws, rs, "/bin/cat", "in.txt")
	c.SelfTest = true
	assert.NoError(t, c.Run(), "SelfTest is ignored without a Landlock domain")

	_, err = landlock.Compile(f.ws, landlock.Options{Strict: true})
	var ae *landlock.ABIError
	assert.ErrorAs(t, err, &ae)
}

// TestExec replaces a re-executed test binary with a confined shell.
func TestExec(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if dir := os.Getenv("LANDJAIL_EXEC_TEST_DIR"); dir != "" {
		f := &fixture{root: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside")}
		ws, err := jail.New(f.root)
		if err != nil {
			fmt.Println("jail.New:", err)
			os.Exit(3)
		}
		rs, err := landlock.Compile(ws, landlock.Options{System: true})
		if err != nil {
			fmt.Println("Compile:", err)
			os.Exit(3)
		}
		err = exec.Exec(ws, rs, []string{"/bin/sh", "-c", "pwd; cat in.txt; cat " + f.outside + "/secret || echo refused; grep NoNewPrivs /proc/self/status 2>/dev/null || echo noproc"}, nil, "")
		fmt.Println("Exec returned:", err)
		os.Exit(3)
	}
	f := newFixture(t)
	c := osexec.Command(os.Args[0], "-test.run=^TestExec$")
	c.Env = append(os.Environ(), "LANDJAIL_EXEC_TEST_DIR="+filepath.Dir(f.root))
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, f.root+"\ninside\nrefused\nnoproc\n", string(bytes.ReplaceAll(out, []byte("cat: "+f.outside+"/secret: Permission denied\n"), nil)))
}

func TestConcurrentSpawns(t *testing.T) {
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for range 200 {
		wg.Go(func() {
			out, err := exec.CommandContext(context.Background(), f.ws, rs, "/bin/cat", "in.txt").Output()
			if err == nil && string(out) != "inside\n" {
				err = errors.New("bad output " + string(out))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assertUnconfined(t, filepath.Join(f.outside, "secret"), rs)
}

// TestMainJobGoBuild is the main job on real input: build and test a
// third-party Go module (doublestar, from the module cache) confined to a
// copy of it, with the Go toolchain read-execute, the module cache
// read-only and GOCACHE inside the workspace; then git init/add/commit in
// it. The same sandbox refuses to read a private key in $HOME/.ssh.
func TestMainJobGoBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds a module (about 10 s)")
	}
	kerneltest.RequireLandlockABI(t, 1)
	goBin, err := osexec.LookPath("go")
	if err != nil {
		t.Skip("go not in PATH")
	}
	goenv, err := osexec.Command(goBin, "env", "GOROOT", "GOMODCACHE").Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(goenv)), "\n")
	require.Len(t, lines, 2)
	goroot, cache := lines[0], lines[1]
	src := filepath.Join(cache, "github.com/bmatcuk/doublestar/v4@v4.10.4")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("module not in the cache: %v", err)
	}
	gitPath, err := osexec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}

	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "ws")
	require.NoError(t, os.CopyFS(root, os.DirFS(src)))
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	}))
	home := filepath.Join(base, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	key := filepath.Join(home, ".ssh", "id_ed25519")
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+keyMarker+"\n"), 0o600))
	tmp := filepath.Join(base, "tmp")
	require.NoError(t, os.Mkdir(tmp, 0o700))

	ws, err := jail.New(root, jail.WithAllowed(goroot, jail.ReadExec), jail.WithAllowed(cache, jail.ReadOnly))
	require.NoError(t, err)
	defer ws.Close()
	rs, err := landlock.Compile(ws, landlock.Options{System: true, TmpDir: tmp})
	require.NoError(t, err)
	defer rs.Close()

	env := exec.DefaultEnv(ws, []string{
		"PATH=" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin",
		"GOCACHE=" + filepath.Join(root, ".gocache"),
		"GOMODCACHE=" + cache, "GOPATH=" + filepath.Join(root, ".gopath"),
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	})
	run := func(name string, args ...string) ([]byte, error) {
		c := exec.CommandContext(context.Background(), ws, rs, name, args...)
		c.Env = env
		c.Timeout = 5 * time.Minute
		return c.CombinedOutput()
	}
	out, err := run("go", "build", "./...")
	require.NoError(t, err, "%s", out)
	out, err = run("go", "vet", ".")
	require.NoError(t, err, "%s", out)
	out, err = run("/bin/sh", "-c", "git init -q . && git add . && git commit -qm init && git log --oneline | wc -l")
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "1\n", string(out))
	_, err = run(gitPath, "status", "--short")
	assert.NoError(t, err)

	out, err = run("cat", key)
	assertRefused(t, out, err, eacces, "read the private key")
	b, err := os.ReadFile(key)
	require.NoError(t, err, "the parent still can")
	assert.Contains(t, string(b), keyMarker)
}

// TestUnprivilegedParent re-executes the test binary as uid 65534 (no
// capabilities, so the bounding set cannot be dropped: no_new_privs keeps
// the child from gaining anything) and spawns confined children there.
func TestUnprivilegedParent(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if dir := os.Getenv("LANDJAIL_UNPRIV_DIR"); dir != "" {
		require.NotZero(t, os.Geteuid(), "the parent must be unprivileged here")
		ws, err := jail.New(filepath.Join(dir, "ws"))
		require.NoError(t, err)
		rs, err := landlock.Compile(ws, landlock.Options{System: true})
		require.NoError(t, err)
		out, err := exec.CommandContext(context.Background(), ws, rs, "/bin/cat", "in.txt").Output()
		require.NoError(t, err)
		assert.Equal(t, "inside\n", string(out))
		out, err = exec.CommandContext(context.Background(), ws, rs, "/bin/cat", filepath.Join(dir, "outside", "secret")).CombinedOutput()
		assertRefused(t, out, err, eacces, "read outside from an unprivileged parent")
		b, err := os.ReadFile(filepath.Join(dir, "outside", "secret"))
		require.NoError(t, err, "the unprivileged parent is not confined")
		assert.Equal(t, outsideMarker+"\n", string(b))
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
	f := newFixture(t)
	base := filepath.Dir(f.root)
	for d := base; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	bin := filepath.Join(base, "exec.test")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	c := osexec.Command(bin, "-test.run=^TestUnprivilegedParent$", "-test.v")
	c.Dir = base
	c.Env = append(os.Environ(), "LANDJAIL_UNPRIV_DIR="+base, "GOCOVERDIR=")
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestUnprivilegedParent")
}
