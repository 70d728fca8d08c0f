package exec

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// notifyFds counts this process's seccomp listener descriptors (one per
// live supervisor).
func notifyFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == "anon_inode:seccomp notify" {
			n++
		}
	}
	return n
}

// TestSupervisorLifetime: each spawner thread that installs a Supervised
// filter gets one listener; when the thread is gone (pool idle timeout,
// Release, or a fresh thread after its fork) and its children have been
// reaped, the supervisor closes it: recreating workers leaks nothing, and
// a child outliving its pooled thread is still served.
func TestSupervisorLifetime(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	old := poolIdleTimeout
	poolIdleTimeout = 50 * time.Millisecond
	t.Cleanup(func() { poolIdleTimeout = old })
	ws, _, _ := internalFixture(t)
	rs, err := landlock.Compile(ws, landlock.Options{System: true, BindTCP: []uint16{1}})
	require.NoError(t, err)
	t.Cleanup(func() { Release(rs); rs.Close() })
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true, BindTCP: []uint16{1}})
	require.NoError(t, err)
	require.True(t, filter.Supervised())
	base := notifyFds(t)

	run := func(fresh bool, script string) *Cmd {
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", script)
		c.Seccomp, c.FreshThread = filter, fresh
		require.NoError(t, c.Start())
		return c
	}
	// A child that outlives its pooled worker: the worker idles out
	// while the child sleeps, and the child's listen is still answered
	// (EACCES from the supervisor, which python reports; ENOSYS would
	// mean nobody answers).
	long := run(false, "sleep 0.5; exec python3 -c 'import socket; s = socket.socket(); s.listen()' 2>&1 | grep -q PermissionError")
	for range 5 {
		require.NoError(t, run(false, "true").Wait())
		time.Sleep(3 * poolIdleTimeout) // the worker exits; the next spawn makes a new one
		require.NoError(t, run(true, "true").Wait())
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		assert.NoError(t, long.Wait(), "listen of a child whose worker is gone is answered by the supervisor")
	} else {
		long.Wait()
	}
	Release(rs)
	assert.Eventually(t, func() bool { return notifyFds(t) == base }, 5*time.Second, 20*time.Millisecond,
		"every listener is closed once its thread and children are gone")
}
