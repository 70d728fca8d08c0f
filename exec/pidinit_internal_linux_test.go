package exec

import (
	"context"
	"errors"
	"os"
	osexec "os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/internal/wstest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// pidnsInternalFixture: the wstest tree, a Workspace on its ws/ and a
// Ruleset with the namespace layer (skipped where namespaces or Landlock
// are missing, through kerneltest).
func pidnsInternalFixture(t *testing.T) (wstest.Dirs, *jail.Workspace, *landlock.Ruleset) {
	t.Helper()
	kerneltest.RequireLandlockABI(t, 1)
	kerneltest.RequireNamespaces(t, nsview.Probe())
	d := wstest.New(t)
	ws, err := jail.New(d.Root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true, Namespaces: true})
	require.NoError(t, err)
	t.Cleanup(func() { Release(rs); rs.Close() })
	return d, ws, rs
}

// TestPIDInitBothWays runs a child in a PID namespace through each init
// this architecture has: the assembly one (CLONE_VM, amd64) and the
// forked copy (the only one elsewhere), from a pooled worker and from a
// fresh thread. Each must give the namespace its fresh /proc, readable
// (the shell sees itself, PID 2; PID 1, the init, is hidden), kill a leftover when the
// child exits (the unconfined control: the same background sleep
// outlives a plain sh), and a failure in the init's set-up (a procfs
// type the kernel does not know: ENODEV) must come back as Start's error
// naming the step, with nothing run.
func TestPIDInitBothWays(t *testing.T) {
	d, ws, rs := pidnsInternalFixture(t)
	require.Equal(t, landlock.LayerNamespaces, rs.Report().Layer)

	control := osexec.Command("/bin/sh", "-c", "(exec sleep 302 </dev/null >/dev/null 2>&1) & echo started")
	control.Dir = d.Root
	out, err := control.Output()
	require.NoError(t, err, "%s", out)
	pid := proctest.HostPid(t, d.Root, "sleep 302")
	assert.NotZero(t, pid, "control: the leftover outlives a plain sh")
	proctest.Kill(pid)

	ways := []bool{false}
	if haveCloneVM {
		ways = append(ways, true)
	}
	defer forkInit.Store(false)
	// Every spawn clones its init here, none takes a prepared spawner
	// (TestPIDReadySpawner covers those).
	readyDisabled.Store(true)
	defer readyDisabled.Store(false)
	for _, vm := range ways {
		name := "fork"
		if vm {
			name = "clone_vm"
		}
		t.Run(name, func(t *testing.T) {
			forkInit.Store(!vm)
			for _, fresh := range []bool{false, true} {
				c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", `for p in /proc/[0-9]*; do echo ${p#/proc/}; done; (exec sleep 302 </dev/null >/dev/null 2>&1) & echo started`)
				c.FreshThread = fresh
				c.Timeout = time.Minute
				out, err := c.Output()
				require.NoError(t, err, "%s", out)
				lines := strings.Fields(string(out))
				assert.Equal(t, []string{"2", "started"}, lines, "PID 1 hidden (hidepid=4); fresh thread %v", fresh)
				assert.Zero(t, proctest.HostPid(t, d.Root, "sleep 302"), "the leftover died with the namespace")

				bad := "nosuchfs"
				testProcFS.Store(&bad)
				c = CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "echo ran")
				c.FreshThread = fresh
				out, err = c.Output()
				testProcFS.Store(nil)
				require.Error(t, err)
				assert.ErrorIs(t, err, unix.ENODEV)
				assert.Contains(t, err.Error(), "mount(proc, /proc)")
				assert.Empty(t, out)
			}
		})
	}
}

// TestPIDInitNoLeak: 100 pooled and fresh-thread spawns with a PID
// namespace each leave this process as they found it: no descriptor
// (pidfds, keep-alive pipes, rulesets), no child (inits are reaped), and
// no init still running.
func TestPIDInitNoLeak(t *testing.T) {
	d, ws, rs := pidnsInternalFixture(t)
	run := func(fresh bool) {
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "(exec sleep 303 </dev/null >/dev/null 2>&1) & :")
		c.FreshThread = fresh
		require.NoError(t, c.Run())
	}
	run(false) // the pool's worker and the view exist from here on,
	run(true)  // and what the fresh-thread path opens once
	fds := func() int {
		runtime.GC() // files other tests dropped are closed by finalizers first
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(ents)
	}
	before := fds()
	for i := range 100 {
		run(i%2 == 0)
	}
	// A leak would be one or more per spawn (100); a file another test
	// dropped may still be closed meanwhile.
	assert.LessOrEqual(t, fds(), before+2, "descriptors (before: %d)", before)
	// The prepared spawner (an idle init) is the one child allowed: a
	// Release ends it.
	Release(rs)
	deadline := time.Now().Add(5 * time.Second)
	kids, err := reaper.Children()
	for err == nil && len(kids) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		kids, err = reaper.Children()
	}
	require.NoError(t, err)
	assert.Empty(t, kids, "children left after Release (an unreaped init or child)")
	assert.Zero(t, proctest.HostPid(t, d.Root, "sleep 303"), "a leftover outlived its namespace")
}

// TestPIDReadySpawner: after a pooled spawn a spawner is prepared in the
// background (init cloned, thread joined and confined); the next spawn
// takes it and still gets a namespace of its own (a fresh init: the
// first run's leftover is gone, PID 2 again), confined (a file outside
// the policy stays unreadable, with the unconfined control reading it);
// Release ends an idle one (its init reaped).
func TestPIDReadySpawner(t *testing.T) {
	d, ws, rs := pidnsInternalFixture(t)
	// Outside the policy and outside the view's private /tmp (which
	// would hide wstest's outside/ altogether).
	dir, err := os.MkdirTemp("/var/tmp", "landjail-ready-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	secret := dir + "/secret"
	require.NoError(t, os.WriteFile(secret, []byte("s"), 0o644))
	_, err = os.ReadFile(secret)
	require.NoError(t, err, "control: readable unconfined")
	script := `echo $$; cat ` + secret + ` 2>&1 | grep -o 'Permission denied'; (exec sleep 304 </dev/null >/dev/null 2>&1) &`
	for i := range 5 {
		if i > 0 {
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				registry.mu.Lock()
				e := registry.m[weak.Make(rs)]
				ok := e != nil && e.ready[readyKey{}] != nil
				registry.mu.Unlock()
				if ok {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			require.NotNil(t, func() *readySpawner {
				registry.mu.Lock()
				defer registry.mu.Unlock()
				return registry.m[weak.Make(rs)].ready[readyKey{}]
			}(), "a spawner was prepared after spawn %d", i)
		}
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", script)
		c.Timeout = time.Minute
		out, err := c.Output()
		require.NoError(t, err, "%s", out)
		assert.Equal(t, "2\nPermission denied\n", string(out), "spawn %d", i)
		assert.Zero(t, proctest.HostPid(t, d.Root, "sleep 304"), "spawn %d: the leftover died with its namespace", i)
	}
}

// TestPIDFreshFailureNoLeak: a fresh-thread spawn with a PID namespace
// that fails after its ruleset copy was started on the caller's
// goroutine (spawnPID) and before the thread took it (an InNamespace
// hook failing) closes that copy: 50 such spawns leave no descriptor.
// Shown red: without the close of an untaken copy, 50 descriptors more.
func TestPIDFreshFailureNoLeak(t *testing.T) {
	_, ws, rs := pidnsInternalFixture(t)
	hookErr := errors.New("hook refused")
	run := func() {
		c := CommandContext(context.Background(), ws, rs, "/bin/true")
		c.InNamespace = func() error { return hookErr }
		assert.ErrorIs(t, c.Run(), hookErr)
	}
	run() // what the path opens once
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(ents)
	}
	// No collection between the counts: a dropped *os.File would be
	// closed by its finalizer and hide the leak.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	before := fds()
	for range 50 {
		run()
	}
	// Each failed spawn's init is reaped in the background (its pidfd
	// closed then): wait for those.
	n := fds()
	for deadline := time.Now().Add(5 * time.Second); n > before+2 && time.Now().Before(deadline); n = fds() {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, n, before+2, "descriptors (before: %d)", before)
}

// TestReadProcFile: readProcFile reads a procfs file whole, past its
// first buffer (the init's children list can be long), as os.ReadFile
// does.
func TestReadProcFile(t *testing.T) {
	runtime.LockOSThread() // the task file of this thread
	defer runtime.UnlockOSThread()
	for _, name := range []string{"/proc/self/mountinfo", "/proc/self/environ", "/proc/self/task/" + strconv.Itoa(unix.Gettid()) + "/children"} {
		got, err := readProcFile(name)
		require.NoError(t, err, name)
		want, err := os.ReadFile(name)
		require.NoError(t, err, name)
		assert.Equal(t, string(want), string(got), name)
	}
	b, err := readProcFile("/proc/self/mountinfo")
	require.NoError(t, err)
	assert.Greater(t, len(b), 512, "more than the first buffer")
	_, err = readProcFile("/proc/self/no-such-file")
	assert.ErrorIs(t, err, unix.ENOENT)
}
