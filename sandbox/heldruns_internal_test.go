package sandbox

import (
	osexec "os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/proctest"
)

// TestHeldRunsPruned: the runs a server's ended calls closed are dropped
// as new ones are added, not kept until a freeze (red team round 23,
// R23c-7: 1.5 KB a bash call, 19 to 43 MB over 15,000 calls). Control:
// a run still open is kept.
func TestHeldRunsPruned(t *testing.T) {
	if limits.Available().Mechanism == limits.NotEnforced {
		kerneltest.Missing(t, "no usable cgroup")
	}
	var h heldRuns
	open, err := limits.Start(limits.DefaultSpec(), limits.Options{})
	require.NoError(t, err)
	defer open.Close()
	h.add(open)
	for range 20 {
		r, err := limits.Start(limits.DefaultSpec(), limits.Options{})
		require.NoError(t, err)
		h.add(r)
		_, err = r.Close()
		require.NoError(t, err)
	}
	last, err := limits.Start(limits.DefaultSpec(), limits.Options{})
	require.NoError(t, err)
	defer last.Close()
	h.add(last)
	assert.Equal(t, []*limits.Run{open, last}, h.runs)
}

// TestHeldRunsEnd: end (Plan.EndHolds) makes a hold in progress return
// at once and thaws its group, and later holds do nothing, so that a
// session's commands can be killed when it ends (red team round 24,
// R24c-1: a hold of 65 s kept a v1-frozen command, which takes no
// SIGKILL, and the session past its client's grace). A loop in the
// group is frozen by a 30 s hold (control: it stops running), then runs
// again within a second of end. Red without the end: the hold goes on.
func TestHeldRunsEnd(t *testing.T) {
	p := limits.Available()
	if p.Mechanism == limits.NotEnforced || (p.Mechanism == limits.CgroupV1 && !slices.Contains(p.Controllers, "freezer")) {
		kerneltest.Missing(t, "no usable cgroup freezer")
	}
	t.Parallel()
	r, err := limits.Start(limits.DefaultSpec(), limits.Options{})
	require.NoError(t, err)
	defer r.Close()
	c := osexec.Command("/bin/sh", "-c", "while :; do :; done")
	require.NoError(t, r.Start(c))
	defer c.Wait()
	defer c.Process.Kill()
	var h heldRuns
	h.add(r)
	held := make(chan struct{})
	go func() { h.hold(30 * time.Second); close(held) }()
	running := func() bool {
		before := proctest.CPU(t, c.Process.Pid)
		time.Sleep(300 * time.Millisecond)
		return proctest.CPU(t, c.Process.Pid)-before > 50*time.Millisecond
	}
	// Each state is asked for up to 5 s: the v1 freezer's FREEZING may
	// take a moment, and on a loaded host (load 10 on 2 CPUs) a running
	// loop gets under 50 ms in 300.
	within5s := func(want bool) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
			if running() == want {
				return true
			}
		}
		return false
	}
	require.True(t, within5s(false), "control: the hold froze the loop")
	h.end()
	select {
	case <-held:
	case <-time.After(time.Second):
		t.Fatal("the hold went on after end")
	}
	assert.True(t, within5s(true), "thawed at end")
	done := make(chan struct{})
	go func() { h.hold(30 * time.Second); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("a hold after end held")
	}
	assert.True(t, within5s(true), "not frozen after end")
}
