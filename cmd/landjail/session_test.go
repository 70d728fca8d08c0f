package main

import (
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// sessionOf runs the shell line that prints "PID SID" of the shell
// (which execve'd from landjail, or was started directly) and returns
// both, with the pid of the process the test started.
func sessionOf(t *testing.T, argv ...string) (started, pid, sid int) {
	t.Helper()
	c := osexec.Command(argv[0], argv[1:]...)
	out, err := c.Output()
	require.NoError(t, err, "%q: %s", argv, out)
	f := strings.Fields(string(out))
	require.Len(t, f, 2, "%q: %s", argv, out)
	pid, err = strconv.Atoi(f[0])
	require.NoError(t, err)
	sid, err = strconv.Atoi(f[1])
	require.NoError(t, err)
	return c.Process.Pid, pid, sid
}

// printSession prints the shell's pid and session id (/proc/PID/stat's
// sixth field; comm is "sh", without spaces).
const printSession = `set -- $(cat /proc/$$/stat); echo $$ $6`

// TestRunExecveOwnSession: an execve'd run (landjail started as an
// ordinary child: no process-group leader) leaves the caller's session
// before the command starts: the command is landjail's process (same
// pid) and leads a session of its own, whether landjail called setsid
// itself or handed it to the limits goroutine (leaveTerminal; red with
// that setsid made a no-op: the command stayed in the test's session).
// Control: the same shell started directly is in the test's session.
func TestRunExecveOwnSession(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	bin := landjailBin(t)
	ws := wsDir(t)
	started, pid, sid := sessionOf(t, bin, "run", "--workspace", ws, "--no-namespaces", "--ro", "/proc", "--", "sh", "-c", printSession)
	assert.Equal(t, started, pid, "the command replaced landjail (execve)")
	assert.Equal(t, pid, sid, "the command leads a session of its own")

	_, cpid, csid := sessionOf(t, "sh", "-c", printSession)
	assert.NotEqual(t, cpid, csid, "control: a child of the test is in the test's session")
}
