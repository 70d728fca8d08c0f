package reaper

import (
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// zombieLeaderEnv makes the test binary a process whose thread-group
// leader exits alone (exit(2), not exit_group) while another thread lives
// on: its /proc/PID/stat says Z, and it cannot be reaped, until that
// thread ends.
const zombieLeaderEnv = "LANDJAIL_REAPER_ZOMBIE_LEADER"

func init() {
	if os.Getenv(zombieLeaderEnv) != "1" {
		return
	}
	runtime.GOMAXPROCS(4)
	go func() {
		time.Sleep(time.Minute)
		os.Exit(0)
	}()
	runtime.LockOSThread()
	unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0) // this thread (the leader) only
}

// startZombieLeader starts such a process and waits until its leader has
// exited (state Z) while another of its threads has not.
func startZombieLeader(t *testing.T) *osexec.Cmd {
	t.Helper()
	c := osexec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), zombieLeaderEnv+"=1")
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	pid := c.Process.Pid
	require.Eventually(t, func() bool {
		st, err := readStat(pid)
		return err == nil && st.state == 'Z'
	}, 10*time.Second, time.Millisecond, "the leader exits alone")
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	require.NoError(t, err)
	require.Greater(t, len(ents), 1, "other threads live on")
	return c
}

// TestZombieLeaderIsALeftover: red team round 30, R30c-2. A leftover whose
// leader exited alone reads Z in /proc/PID/stat while its other threads
// run (and plant a link): Leftovers took it for dead, and landjail-mcp's
// file tools stopped re-planning. Control: a child that really exited and
// waits to be reaped is no leftover.
func TestZombieLeaderIsALeftover(t *testing.T) {
	dead := osexec.Command("true")
	require.NoError(t, dead.Start())
	t.Cleanup(func() { dead.Wait() })
	require.Eventually(t, func() bool {
		st, err := readStat(dead.Process.Pid)
		return err == nil && st.state == 'Z'
	}, 10*time.Second, time.Millisecond)
	left, err := Leftovers()
	require.NoError(t, err)
	assert.False(t, left, "control: an exited child is no leftover")

	z := startZombieLeader(t)
	left, err = Leftovers()
	require.NoError(t, err)
	assert.True(t, left, "a zombie leader with a living thread is a leftover")
	assert.True(t, alive(z.Process.Pid), "alive")
	assert.False(t, alive(dead.Process.Pid), "control: not alive")

	// KillDescendants kills it (the kill reaches the whole group) and
	// reaps it.
	Spare(dead.Process.Pid)
	t.Cleanup(func() { Unspare(dead.Process.Pid) })
	_, err = KillDescendants()
	require.NoError(t, err)
	assert.ErrorIs(t, unix.Kill(z.Process.Pid, 0), unix.ESRCH, "killed and reaped")
}

// TestKillSessionZombieLeader: red team round 30, R30c-3. A member of the
// session whose leader exited alone, re-parented to this subreaper: it
// was not signalled (its state read Z) and then waited for without
// WNOHANG, so KillSession blocked for as long as its other thread lived.
// It must be killed and KillSession must return. Control: before
// KillSession the member lives on (its thread runs for a minute).
func TestKillSessionZombieLeader(t *testing.T) {
	require.NoError(t, Become())
	sh := osexec.Command("sh", "-c", `"$0" -test.run='^$' >/dev/null 2>&1 & echo $!`, os.Args[0])
	sh.Env = append(os.Environ(), zombieLeaderEnv+"=1")
	sh.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := sh.Output() // the shell exits; the member is re-parented here
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	require.NoError(t, err)
	t.Cleanup(func() { unix.Kill(pid, unix.SIGKILL) })
	require.Eventually(t, func() bool {
		st, err := readStat(pid)
		return err == nil && st.state == 'Z' && st.ppid == os.Getpid()
	}, 10*time.Second, time.Millisecond, "the leader exits alone and the process is re-parented here")
	time.Sleep(50 * time.Millisecond)
	require.True(t, alive(pid), "control: its thread lives on")

	done := make(chan error, 1)
	go func() { _, err := KillSession(sh.Process.Pid); done <- err }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("KillSession blocked on the member")
	}
	assert.ErrorIs(t, unix.Kill(pid, 0), unix.ESRCH, "killed and reaped")
}
