package limits

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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

// TestStartPendingBeforeSweep: a StartPending made while StartEarly's
// goroutine is at work gets its group from that goroutine before the
// stale groups are removed (the stale one still exists when the group is
// there), the group is a working one, and WaitEarly (Run.BeforeExec)
// returns only once the stale group is gone.
//
// Shown able to fail: with serveEarly(false) moved after the sweep, the
// stale group is gone when the group is made; with a BeforeExec that does
// not wait, the stale group is still there after it.
func TestStartPendingBeforeSweep(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only (the group is made by hand in the pids hierarchy)")
	}
	dir := filepath.Join(p.v1["pids"], "landjail")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	g := filepath.Join(dir, "landjail-"+strconv.FormatUint(selfPIDNS(), 10)+"-999999998-1-78")
	require.NoError(t, os.Mkdir(g, 0o755))
	t.Cleanup(func() { unix.Rmdir(g) })

	staleMu.Lock()
	staleDone = map[string]bool{} // as in a fresh process
	staleMu.Unlock()
	locked, release := make(chan struct{}), make(chan struct{})
	earlyLocked = func() { close(locked); <-release }
	served, proceed := make(chan bool, 1), make(chan struct{})
	earlyServed = func() {
		_, err := os.Stat(g)
		served <- err == nil
		<-proceed // the sweep waits until the test is in BeforeExec
	}
	t.Cleanup(func() { earlyLocked, earlyServed = func() {}, func() {} })
	StartEarly()
	<-locked // StartEarly's goroutine holds the sweep's lock
	pending := StartPending(DefaultSpec(), Options{})
	close(release)
	r, err := pending.Wait()
	require.NoError(t, err)
	assert.True(t, <-served, "the group was made after the stale group was removed")
	require.NotEmpty(t, r.Path())
	assert.DirExists(t, r.Path())
	assert.FileExists(t, filepath.Join(r.Path(), "pids.max"))
	go func() { time.Sleep(20 * time.Millisecond); close(proceed) }()
	r.BeforeExec()
	assert.NoDirExists(t, g, "BeforeExec returned before the sweep removed the stale group")
	_, err = r.Close()
	assert.NoError(t, err)
	assert.NoDirExists(t, r.Path())
}

// TestStartPendingRacesEarlyEnd: a StartPending made at any moment of
// StartEarly's goroutine's life, its end included, is served once (by
// that goroutine or by one of its own), never lost.
func TestStartPendingRacesEarlyEnd(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only")
	}
	for i := range 50 {
		StartEarly()
		if i%2 == 1 {
			time.Sleep(time.Duration(i) * 10 * time.Microsecond)
		}
		pending := StartPending(DefaultSpec(), Options{})
		done := make(chan struct{})
		var r *Run
		var err error
		go func() { r, err = pending.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the request was never served", i)
		}
		require.NoError(t, err)
		_, err = r.Close()
		require.NoError(t, err)
		WaitEarly()
	}
}

// TestStartPendingInvalid: an invalid Spec is refused at once, as by
// Start.
func TestStartPendingInvalid(t *testing.T) {
	_, err := StartPending(Spec{Pids: -1}, Options{}).Wait()
	assert.ErrorIs(t, err, ErrInvalid)
}

// TestStartPendingAfterSweep: a StartPending made after StartEarly's
// goroutine swept, before it ended, is served by its last serveEarly (a
// working group), and one made after it ended by a goroutine of its own.
//
// Shown able to fail: with the last serveEarly dropping the request, its
// Wait never returns.
func TestStartPendingAfterSweep(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only")
	}
	swept, release := make(chan struct{}), make(chan struct{})
	earlySwept = func() { close(swept); <-release }
	t.Cleanup(func() { earlySwept = func() {} })
	StartEarly()
	<-swept
	queued := StartPending(DefaultSpec(), Options{})
	close(release)
	after := func(p *Pending) *Run {
		t.Helper()
		done := make(chan struct{})
		var r *Run
		var err error
		go func() { r, err = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the request was never served")
		}
		require.NoError(t, err)
		assert.DirExists(t, r.Path())
		return r
	}
	r := after(queued)
	WaitEarly()
	r2 := after(StartPending(DefaultSpec(), Options{}))
	for _, r := range []*Run{r, r2} {
		_, err := r.Close()
		assert.NoError(t, err)
	}
}

// TestThen: work handed to StartEarly's goroutine while it is at work
// runs there, after its sweep and in order, and WaitEarly returns only
// once it has run; once that goroutine has ended, Then refuses (the
// caller runs the work itself), as it does before any StartEarly.
// Shown able to fail: with runThen removed from the goroutine, the work
// had not run when WaitEarly returned.
func TestThen(t *testing.T) {
	WaitEarly() // no goroutine of an earlier test is left
	assert.False(t, Then(func() { t.Error("ran without StartEarly") }), "control: no goroutine to hand work to")
	hold := make(chan struct{})
	earlyLocked = func() { <-hold } // keep the goroutine at work until both are handed
	t.Cleanup(func() { earlyLocked = func() {} })
	staleMu.Lock()
	staleDone = map[string]bool{} // as in a fresh process
	staleMu.Unlock()
	StartEarly()
	var got []int
	swept := false
	earlySwept = func() { swept = true }
	t.Cleanup(func() { earlySwept = func() {} })
	require.True(t, Then(func() { got = append(got, 1); assert.True(t, swept, "after the sweep") }))
	require.True(t, Then(func() { got = append(got, 2) }))
	close(hold)
	WaitEarly()
	assert.Equal(t, []int{1, 2}, got)
	assert.False(t, Then(func() { t.Error("ran after the goroutine ended") }), "the goroutine has ended")
}
