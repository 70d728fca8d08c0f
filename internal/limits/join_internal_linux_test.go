package limits

import (
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
)

// TestJoinThreadWaitsForThaw: a thread joining a frozen v1 group waits
// for the thaw instead of being frozen in it (red team round 25,
// R25a-4: the live watch froze a spawning thread of landjail, which can
// stop a Go program at its next garbage collection). While the group is
// frozen the joining thread (alive, waiting) is not in its tasks; after
// Thaw the join returns. Control: a group not frozen is joined at once. Red
// without the wait: the thread is listed (and frozen) while the group
// is.
func TestJoinThreadWaitsForThaw(t *testing.T) {
	p := Available()
	switch {
	case p.Mechanism == CgroupV2:
		t.Skip("cgroup v2: a thread never joins a group alone (CLONE_INTO_CGROUP)")
	case p.Mechanism != CgroupV1 || !slices.Contains(p.Controllers, "freezer"):
		kerneltest.Missing(t, "no cgroup v1 freezer")
	}
	r, err := Start(DefaultSpec(), Options{})
	require.NoError(t, err)
	defer r.Close()
	c := osexec.Command("/bin/sleep", "30")
	require.NoError(t, r.Start(c))
	defer c.Wait()
	defer c.Process.Kill()

	listed := func(tid int) bool {
		b, err := os.ReadFile(r.g.procs())
		require.NoError(t, err)
		return slices.Contains(strings.Fields(string(b)), strconv.Itoa(tid))
	}
	join := func() (*atomic.Int64, chan error) {
		tid, done := new(atomic.Int64), make(chan error, 1)
		osthread.Go(func() { // a fresh thread, destroyed after
			tid.Store(int64(unix.Gettid()))
			done <- r.JoinThread()
		})
		return tid, done
	}

	tid, done := join()
	select {
	case err := <-done:
		require.NoError(t, err, "control: a group not frozen is joined")
	case <-time.After(10 * time.Second):
		t.Fatal("control: the join of a group not frozen waited")
	}

	require.NoError(t, waitGone(t, int(tid.Load())))
	require.NoError(t, r.Freeze())
	tid, done = join()
	time.Sleep(300 * time.Millisecond)
	assert.False(t, listed(int(tid.Load())), "a thread of this process joined the frozen group")
	require.NoError(t, r.Thaw())
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the join did not return after Thaw")
	}
}

// waitGone waits until the thread tid of this process has exited (a
// locked thread ends with its goroutine, shortly after).
func waitGone(t *testing.T, tid int) error {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if unix.Tgkill(unix.Getpid(), tid, 0) == unix.ESRCH {
			return nil
		}
	}
	return unix.EBUSY
}
