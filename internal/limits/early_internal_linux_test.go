package limits

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestStartEarlyStartWaitsForSweep: after StartEarly, Start still returns
// only once the stale group a SIGKILLed landjail left (named for a dead
// owner of this PID namespace) is gone, as when Start sweeps itself.
//
// Shown able to fail: with StartEarly's goroutine marking the sweep done
// under the lock and sweeping 10 ms after releasing it, the group is
// still there when Start returns.
func TestStartEarlyStartWaitsForSweep(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only (the group is made by hand in the pids hierarchy)")
	}
	dir := filepath.Join(p.v1["pids"], "landjail")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	// pid 999999999 does not exist: its start time is never 1.
	g := filepath.Join(dir, "landjail-"+strconv.FormatUint(selfPIDNS(), 10)+"-999999999-1-77")
	require.NoError(t, os.Mkdir(g, 0o755))
	t.Cleanup(func() { unix.Rmdir(g) })

	staleMu.Lock()
	staleDone = map[string]bool{} // as in a fresh process
	staleMu.Unlock()
	locked := make(chan struct{})
	earlyLocked = func() { close(locked) }
	t.Cleanup(func() { earlyLocked = func() {} })
	StartEarly()
	<-locked // the early sweep is under way
	r, err := Start(DefaultSpec(), Options{})
	require.NoError(t, err)
	assert.NoDirExists(t, g, "Start returned before the early sweep removed the stale group")
	_, err = r.Close()
	assert.NoError(t, err)
	WaitEarly()
}
