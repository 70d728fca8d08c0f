package reaper

import (
	osexec "os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orphaner is a command that orphans n grandchildren that exit at once:
// each a zombie of the subreaper (this test process) until reaped.
func orphaner(n string) *osexec.Cmd {
	return osexec.Command("sh", "-c", `i=0; while [ $i -lt `+n+` ]; do (true &); i=$((i+1)); done`)
}

// zombieChildren counts this process's zombie children.
func zombieChildren(t *testing.T) int {
	t.Helper()
	pids, err := Children()
	require.NoError(t, err)
	n := 0
	for _, pid := range pids {
		if st, err := readStat(pid); err == nil && st.state == 'Z' {
			n++
		}
	}
	return n
}

// settle waits until an earlier test's orphans are gone: each such
// orphan was forked by a shell that has exited, so it may still be
// running (not yet a zombie, not reaped by the earlier test's check of
// zombies) when the next test starts counting (CI, 29 Nov: 31 of 30).
// Every test that counts exactly starts from no children at all.
func settle(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		if _, err := ReapOrphans(); err != nil {
			return false
		}
		pids, err := Children()
		return err == nil && len(pids) == 0
	}, 10*time.Second, 5*time.Millisecond, "an earlier test's orphans exit and are reaped")
}

// TestReapOrphans: R26d-2. The orphans a command leaves stay zombies of
// the subreaper (the control: nothing else reaps them) until ReapOrphans,
// which leaves an owned child that exited but was not waited for yet to
// its exec.Cmd.Wait.
func TestReapOrphans(t *testing.T) {
	require.NoError(t, Become())
	settle(t)
	owned := osexec.Command("true")
	require.NoError(t, owned.Start())
	require.NoError(t, orphaner("50").Run())
	require.Eventually(t, func() bool { return zombieChildren(t) >= 51 }, 5*time.Second, 10*time.Millisecond,
		"the control: the orphans (and the unwaited owned child) are zombies of this process")

	n, err := ReapOrphans()
	require.NoError(t, err)
	assert.Equal(t, 50, n, "every orphan reaped, the owned child not")
	assert.Equal(t, 1, zombieChildren(t), "only the owned child is left")
	require.NoError(t, owned.Wait(), "its Wait still gets its status")
	assert.True(t, owned.ProcessState.Success())
}

// TestOrphanReaperOwnedRace: with the reaper running on SIGCHLD and
// orphans exiting all the while, every exec.Cmd of this process still
// gets its own child's status (an owned child whose exit races the
// reaper is never taken). Run it with -race.
func TestOrphanReaperOwnedRace(t *testing.T) {
	require.NoError(t, Become())
	stop, err := StartOrphanReaper(nil)
	require.NoError(t, err)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the attacker: orphans exiting all the time
		defer wg.Done()
		for range 20 {
			assert.NoError(t, orphaner("20").Run())
		}
	}()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				c := osexec.Command("sh", "-c", "exit 3")
				err := c.Run()
				var ee *osexec.ExitError
				if !assert.ErrorAs(t, err, &ee, "worker %d run %d: the status was stolen", w, i) {
					return
				}
				assert.Equal(t, 3, ee.ExitCode())
			}
		}()
	}
	wg.Wait()
	assert.Eventually(t, func() bool { return zombieChildren(t) == 0 }, 5*time.Second, 10*time.Millisecond,
		"every orphan reaped as it exited")
}

// TestReapOrphansPerZombie: red team round 30, R30b-1. With many living
// children (orphans that sleep), reaping the ones that exit must not list
// and read every child: the cost was per child and per SIGCHLD, and a
// command made landjail burn a CPU. The orphans are reaped without the
// scan; control: the scan is what reaps them when the kernel's first
// zombie is owned.
func TestReapOrphansPerZombie(t *testing.T) {
	require.NoError(t, Become())
	settle(t)
	var sleepers []*osexec.Cmd
	for range 100 {
		c := osexec.Command("sleep", "60")
		require.NoError(t, c.Start())
		sleepers = append(sleepers, c)
	}
	t.Cleanup(func() {
		for _, c := range sleepers {
			c.Process.Kill()
			c.Wait()
		}
	})
	scans := 0
	scan = func(owned map[int]bool) (int, error) { scans++; return reapScan(owned) }
	t.Cleanup(func() { scan = reapScan })

	require.NoError(t, orphaner("30").Run())
	require.Eventually(t, func() bool { return zombieChildren(t) >= 30 }, 5*time.Second, 10*time.Millisecond)
	n, err := ReapOrphans()
	require.NoError(t, err)
	assert.Equal(t, 30, n)
	assert.Zero(t, scans, "reaped one zombie at a time, no child listed")

	// Control: an owned child that exited and is not waited for yet comes
	// first; the orphans behind it are found by the scan.
	owned := osexec.Command("true")
	require.NoError(t, owned.Start())
	require.Eventually(t, func() bool { return zombieChildren(t) >= 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, orphaner("10").Run())
	require.Eventually(t, func() bool { return zombieChildren(t) >= 11 }, 5*time.Second, 10*time.Millisecond)
	n, err = ReapOrphans()
	require.NoError(t, err)
	assert.Equal(t, 10, n)
	assert.Equal(t, 1, scans, "the owned zombie first: the scan")
	require.NoError(t, owned.Wait(), "its Wait still gets its status")
}
