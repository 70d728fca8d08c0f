package exec_test

import (
	"bufio"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// pidnsSetup compiles the fixture with the namespace layer and checks
// which path this mode takes. Native (root): nsview.Probe succeeds, the
// Ruleset has a view and the child runs under the init stage in a PID
// namespace of its own. LANDJAIL_EMULATE=ns=EPERM: no view, so no PID
// namespace, and PIDNamespace says why (the fallback: the host's PID
// namespace under Landlock carve-outs, signal scoping in force).
// landlock=ENOSYS and all=EPERM: skipped by RequireLandlockABI (the
// emulation takes Landlock away on purpose; there is no domain to confine
// the init stage with).
func pidnsSetup(t *testing.T) (*fixture, *landlock.Ruleset, bool) {
	t.Helper()
	kerneltest.RequireLandlockABI(t, 4)
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{Namespaces: true})
	in, why := exec.PIDNamespace(rs, nil)
	want := nsview.Probe() == nil
	require.Equal(t, want, in, "PID namespace in force; reason %q", why)
	if !in {
		assert.Contains(t, why, "no namespace view", "the fallback says why")
	}
	return f, rs, in
}

// hostSleeper starts an unconfined sleep on the host and returns its PID.
func hostSleeper(t *testing.T) int {
	t.Helper()
	c := osexec.Command("/bin/sleep", "60")
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c.Process.Pid
}

// shOut runs script under /bin/sh confined by rs and returns its output.
func shOut(t *testing.T, f *fixture, rs *landlock.Ruleset, script string) string {
	t.Helper()
	c := exec.CommandContext(t.Context(), f.ws, rs, "/bin/sh", "-c", script)
	c.Timeout = time.Minute
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	require.NoError(t, err, "stdout %q stderr %q", out, stderr.String())
	return strings.TrimSpace(string(out))
}

// TestPIDNamespaceInside: inside the PID namespace the shell is PID 2
// (PID 1 is the init; the shell's parent, the spawning process, is
// outside the namespace, so getppid returns 0), /proc is the fresh
// procfs and readable (Landlock grants it through a rule on its root,
// added per spawn: procRuleset) and lists the init and the shell only,
// /proc/self works, /dev/stdout works and a host process is invisible
// (kill -0: No such process; no /proc entry). The unconfined control sees
// and may signal the same host process; the fallback (no view) has no
// /proc at all (the system preset does not grant it) and is refused the
// signal by Landlock's signal scope, or sees it (ABI < 6).
func TestPIDNamespaceInside(t *testing.T) {
	f, rs, in := pidnsSetup(t)
	host := hostSleeper(t)
	hp := strconv.Itoa(host)
	control, err := osexec.Command("/bin/sh", "-c", "kill -0 "+hp+" && test -d /proc/"+hp+" && echo visible").CombinedOutput()
	require.NoError(t, err, "%s", control)
	require.Equal(t, "visible", strings.TrimSpace(string(control)), "unconfined control sees the host process")

	for _, tc := range []struct {
		name, script string
		check        func(t *testing.T, out string)
	}{
		{"the shell is PID 2, its parent outside", `echo $$ $PPID`, func(t *testing.T, out string) {
			if in {
				assert.Equal(t, "2 0", out)
			} else {
				assert.NotEqual(t, "2 0", out)
			}
		}},
		{"/proc lists the namespace only, the init hidden", `for p in /proc/[0-9]*; do echo ${p#/proc/}; done; cat /proc/1/cmdline 2>&1 | grep -o 'No such file\|denied'`, func(t *testing.T, out string) {
			if in {
				assert.Equal(t, "2\nNo such file", out)
			} else {
				assert.Equal(t, "[0-9]*\ndenied", out, "no /proc without the layer")
			}
		}},
		{"/proc/self and /proc/1", `head -1 /proc/self/status 2>&1 || echo denied; cat /proc/1/environ >/dev/null 2>&1 && echo init-environ-read || echo init-environ-refused`, func(t *testing.T, out string) {
			if in {
				assert.Equal(t, "Name:\thead\ninit-environ-refused", out)
			} else {
				assert.Contains(t, out, "denied")
			}
		}},
		{"/dev/stdout is writable", `echo hi > /dev/stdout`, func(t *testing.T, out string) {
			assert.Equal(t, "hi", out)
		}},
		{"a host process", `kill -0 ` + hp + ` 2>&1 | grep -o 'No such process\|not permitted' || echo signalled; test -d /proc/` + hp + ` && echo listed || echo unlisted`, func(t *testing.T, out string) {
			if in {
				assert.Equal(t, "No such process\nunlisted", out)
			} else {
				assert.Contains(t, []string{"not permitted\nlisted", "signalled\nlisted"}, out)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, shOut(t, f, rs, tc.script)) })
	}
}

// TestPIDNamespaceSignalForwarded: SIGTERM to the started process (the
// init, with a PID namespace) reaches a child that traps it, and its exit
// status comes back. Same expectation in the fallback (the process is the
// shell itself).
func TestPIDNamespaceSignalForwarded(t *testing.T) {
	f, rs, _ := pidnsSetup(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1} {
		t.Run(sig.String(), func(t *testing.T) {
			c := exec.CommandContext(t.Context(), f.ws, rs, "/bin/sh", "-c", `trap 'echo got; exit 7' `+strconv.Itoa(int(sig))+`; echo ready; while :; do sleep 0.05; done`)
			c.Timeout = time.Minute
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			c.Stdout = w
			require.NoError(t, c.Start())
			w.Close()
			br := bufio.NewReader(r)
			line, err := br.ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "ready\n", line)
			require.NoError(t, c.Process.Signal(sig))
			rest, _ := io.ReadAll(br)
			assert.Equal(t, "got\n", string(rest))
			err = c.Wait()
			require.Error(t, err)
			assert.Equal(t, 7, c.ProcessState.ExitCode())
		})
	}
}

// TestPIDNamespaceKillsLeftovers: a child that starts a daemon (setsid,
// out of its process group) and exits. With the PID namespace the daemon
// dies with the init: the pipe it holds reaches EOF at once. The fallback
// keeps the known gap (README: a process that leaves the group outlives
// the run): the daemon is still there, and the test kills it.
func TestPIDNamespaceKillsLeftovers(t *testing.T) {
	f, rs, in := pidnsSetup(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	c := exec.CommandContext(t.Context(), f.ws, rs, "/bin/sh", "-c", `setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!`)
	c.ExtraFiles = []*os.File{w}
	out, err := c.Output()
	w.Close()
	require.NoError(t, err)
	daemon, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	eof := make(chan struct{})
	go func() { io.Copy(io.Discard, r); close(eof) }()
	select {
	case <-eof:
		assert.True(t, in, "the daemon died although no PID namespace was in force")
	case <-time.After(3 * time.Second):
		assert.False(t, in, "the daemon outlived the PID namespace's init")
		syscall.Kill(daemon, syscall.SIGKILL) // fallback: a host PID
	}
}

// zombieScript double-forks 100 short-lived processes from a Python that
// never reaps what is reparented to it, says so and waits.
const zombieScript = `
import os, sys, time
for _ in range(100):
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
print("forked", flush=True)
time.sleep(5)
`

// zombiesOf counts the host's zombie processes whose parent is ppid.
func zombiesOf(t *testing.T, ppid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[0] == "Z" && f[1] == strconv.Itoa(ppid) {
			n++
		}
	}
	return n
}

// waitLine starts c with its stdout on a pipe and waits for one line.
func waitLine(t *testing.T, start func(w *os.File) error) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, start(w))
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "forked\n", line)
	time.Sleep(300 * time.Millisecond)
}

// TestPIDNamespaceReapsZombies: the grandchildren orphaned by the double
// fork are reparented to the init, which reaps them: the host sees no
// zombie child of the init. Control: the same program as PID 1 of a
// namespace with nothing reaping (unshare -pf) leaves about 100 zombies
// counted the same way. Fallback (no PID namespace): the orphans go to the
// host's reaper, which is not ours to check; only the mode is asserted.
func TestPIDNamespaceReapsZombies(t *testing.T) {
	f, rs, in := pidnsSetup(t)
	if !in {
		t.Log("no PID namespace in this mode: orphans are the host reaper's, nothing to assert")
		return
	}
	if unshare, err := osexec.LookPath("unshare"); err == nil {
		ctl := osexec.Command(unshare, "-pf", "/usr/bin/python3", "-c", zombieScript)
		waitLine(t, func(w *os.File) error { ctl.Stdout = w; return ctl.Start() })
		kids, err := os.ReadFile("/proc/" + strconv.Itoa(ctl.Process.Pid) + "/task/" + strconv.Itoa(ctl.Process.Pid) + "/children")
		require.NoError(t, err)
		pid1, err := strconv.Atoi(strings.TrimSpace(string(kids)))
		require.NoError(t, err, "%q", kids)
		assert.GreaterOrEqual(t, zombiesOf(t, pid1), 90, "control: a non-reaping PID 1 keeps zombies")
		ctl.Process.Kill()
		ctl.Wait()
	}
	c := exec.CommandContext(t.Context(), f.ws, rs, "/usr/bin/python3", "-c", zombieScript)
	c.Timeout = time.Minute
	waitLine(t, func(w *os.File) error { c.Stdout = w; return c.Start() })
	assert.Equal(t, 0, zombiesOf(t, c.Process.Pid), "zombies under the init")
	require.NoError(t, c.Process.Kill())
	c.Wait()
}

// ptraceScript attaches to the PID in argv[1] (PTRACE_ATTACH) and prints
// "attached" or the errno's name.
const ptraceScript = `
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
def err():
    return errno.errorcode[ctypes.get_errno()]
r = []
if libc.ptrace(16, pid, None, None) == 0:
    r.append("attach:ok")
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, None, None)
else:
    r.append("attach:" + err())
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(8)
local = iovec(ctypes.cast(buf, ctypes.c_void_p), 8)
remote = iovec(0x1000, 8)
n = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
e = ctypes.get_errno()
r.append("vm_readv:" + ("ok" if n >= 0 or e == errno.EFAULT else errno.errorcode[e]))
for f in ("mem", "environ", "maps"):
    try:
        with open("/proc/%d/%s" % (pid, f), "rb") as h:
            if f != "mem":
                h.read(1)
        r.append(f + ":ok")
    except OSError as x:
        r.append(f + ":" + errno.errorcode[x.errno])
fd = libc.syscall(434, pid, 0)
if fd < 0:
    r.append("pidfd_getfd:" + err())
else:
    g = libc.syscall(438, fd, 0, 0)
    r.append("pidfd_getfd:" + ("ok" if g >= 0 else err()))
print(" ".join(r))
`

// TestPIDNamespaceInitAttacks: the init is not a way out, although it is
// unconfined root and (on amd64) runs in the caller's own memory. From
// inside, SIGKILL to PID 1 is dropped by the kernel (a namespace's init
// only takes signals it handles from inside; it blocks them all) and the
// run goes on; every way to reach its memory or descriptors — ptrace,
// process_vm_readv, /proc/1/mem|environ|maps, pidfd_getfd — is refused:
// Landlock lets a sandboxed process ptrace-access only processes of its
// own domain or nested ones, and the procfs (hidepid=4) does not even
// list the init (the KeepCaps row, which keeps CAP_SYS_PTRACE, gets the
// same answers; before hidepid=4 it could read /proc/1/environ and maps,
// the caller's). The unconfined
// control reaches a host process of the same uid by each route. In the
// fallback (no PID namespace) PID 1 is the host's init: refused the same
// way.
func TestPIDNamespaceInitAttacks(t *testing.T) {
	f, rs, in := pidnsSetup(t)
	host := hostSleeper(t)
	ctl, err := osexec.Command("/usr/bin/python3", "-c", ptraceScript, strconv.Itoa(host)).CombinedOutput()
	require.NoError(t, err, "%s", ctl)
	require.Equal(t, "attach:ok vm_readv:ok mem:ok environ:ok maps:ok pidfd_getfd:ok", strings.TrimSpace(string(ctl)), "control: every route works unconfined")

	script := `kill -KILL 1 2>/dev/null; sleep 0.2; echo alive; /usr/bin/python3 -c '` + strings.ReplaceAll(ptraceScript, "'", `'"'"'`) + `' 1`
	// Inside, PID 1 is hidden from /proc (hidepid=4: the child may not
	// ptrace-read it, CAP_SYS_PTRACE or not); without a PID namespace
	// /proc is not granted.
	want := "alive\nattach:EPERM vm_readv:EPERM mem:EACCES environ:EACCES maps:EACCES pidfd_getfd:EPERM"
	if in {
		want = "alive\nattach:EPERM vm_readv:EPERM mem:ENOENT environ:ENOENT maps:ENOENT pidfd_getfd:EPERM"
	}
	assert.Equal(t, want, shOut(t, f, rs, script), "PID namespace in force: %v", in)
	c := exec.CommandContext(t.Context(), f.ws, rs, "/bin/sh", "-c", script)
	c.KeepCaps = true
	c.Timeout = time.Minute
	out, err := c.Output()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, want, strings.TrimSpace(string(out)), "KeepCaps (CAP_SYS_PTRACE kept)")
}
