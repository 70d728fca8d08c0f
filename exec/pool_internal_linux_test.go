package exec

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/wstest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// internalFixture: the wstest tree, a Workspace on its ws/ alone (so
// outside/secret is outside the policy), compiled with the system preset.
func internalFixture(t *testing.T) (ws *jail.Workspace, rs *landlock.Ruleset, secret string) {
	t.Helper()
	d := wstest.New(t)
	secret = filepath.Join(d.Outside, "secret")
	ws, err := jail.New(d.Root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err = landlock.Compile(ws, landlock.Options{System: true})
	require.NoError(t, err)
	t.Cleanup(func() { Release(rs); rs.Close() })
	return ws, rs, secret
}

// threadState is what a request sees of its worker thread.
type threadState struct {
	tid        int
	nnp        bool
	chownBound bool  // CAP_CHOWN still in the bounding set
	openSecret error // opening a file outside the policy
}

// probeWorker runs one pooled request that records its thread's state.
// It only makes raw syscalls: it runs on a confined thread.
func probeWorker(t *testing.T, rs *landlock.Ruleset, keepCaps bool, secret string) threadState {
	t.Helper()
	var s threadState
	err := spawnPooled(rs, poolKey{keepCaps: keepCaps}, func() error {
		s.tid = unix.Gettid()
		v, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		s.nnp = v == 1
		b, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_CHOWN, 0, 0, 0)
		s.chownBound = b == 1
		fd, err := unix.Open(secret, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		s.openSecret = err
		return nil
	})
	require.NoError(t, err)
	return s
}

// TestPoolWorkers: requests run on at most GOMAXPROCS reused threads,
// none of them the main thread, each carrying no_new_privs, the Landlock
// domain and (without KeepCaps) an empty bounding set; KeepCaps requests
// run on other threads that keep the bounding set.
func TestPoolWorkers(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	_, rs, secret := internalFixture(t)
	tids := map[int]bool{}
	for range 50 {
		s := probeWorker(t, rs, false, secret)
		tids[s.tid] = true
		assert.NotEqual(t, unix.Getpid(), s.tid, "worker on the main thread")
		assert.True(t, s.nnp, "no_new_privs")
		assert.ErrorIs(t, s.openSecret, unix.EACCES, "worker thread not confined")
		if os.Geteuid() == 0 {
			assert.False(t, s.chownBound, "bounding set not dropped")
		}
	}
	assert.LessOrEqual(t, len(tids), runtime.GOMAXPROCS(0), "workers are reused")

	k := probeWorker(t, rs, true, secret)
	assert.False(t, tids[k.tid], "a KeepCaps request ran on a worker that dropped capabilities")
	assert.ErrorIs(t, k.openSecret, unix.EACCES)
	if os.Geteuid() == 0 {
		assert.True(t, k.chownBound, "KeepCaps worker lost its bounding set")
	}

	// This goroutine's thread is not confined.
	_, err := os.ReadFile(secret)
	assert.NoError(t, err)
}

// TestPoolIdleAndRelease: workers exit after the idle timeout and on
// Release (their threads die); spawns afterwards start new workers.
func TestPoolIdleAndRelease(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	_, rs, secret := internalFixture(t)
	Release(rs) // the pool takes poolIdleTimeout when made
	old := poolIdleTimeout
	poolIdleTimeout = 50 * time.Millisecond
	t.Cleanup(func() { poolIdleTimeout = old })

	alive := func(tid int) bool {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
		return err == nil
	}
	waitDead := func(tid int) bool {
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if !alive(tid) {
				return true
			}
		}
		return false
	}
	s := probeWorker(t, rs, false, secret)
	assert.True(t, alive(s.tid))
	assert.True(t, waitDead(s.tid), "idle worker thread still alive")
	p := poolFor(rs, poolKey{})
	p.mu.Lock()
	assert.Zero(t, p.workers)
	p.mu.Unlock()

	Release(rs)
	poolIdleTimeout = time.Hour
	s = probeWorker(t, rs, false, secret)
	assert.ErrorIs(t, s.openSecret, unix.EACCES)
	Release(rs)
	assert.True(t, waitDead(s.tid), "released worker thread still alive")
	s2 := probeWorker(t, rs, false, secret)
	assert.NotEqual(t, s.tid, s2.tid)
	assert.ErrorIs(t, s2.openSecret, unix.EACCES)
}

// TestPoolMainThreadRetry: a worker that lands on the (fake) main thread
// moves to another thread before confining anything.
func TestPoolMainThreadRetry(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	_, rs, secret := internalFixture(t)
	calls, fakeMain, restore := osthread.FakeMain()
	t.Cleanup(restore)
	s := probeWorker(t, rs, false, secret)
	assert.GreaterOrEqual(t, calls.Load(), int32(2), "at least one retry")
	assert.NotEqual(t, int(fakeMain.Load()), s.tid)
	assert.NotEqual(t, unix.Getpid(), s.tid, "worker on the real main thread")
	assert.ErrorIs(t, s.openSecret, unix.EACCES)
}

// TestPoolReleaseRace releases the pool again and again while spawns run:
// every spawn succeeds (released callers fall back to a fresh thread) and
// is confined.
func TestPoolReleaseRace(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	_, rs, secret := internalFixture(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				Release(rs)
				time.Sleep(100 * time.Microsecond)
			}
		}
	})
	var spawners sync.WaitGroup
	var failures, pooled atomic.Int32
	for range 8 {
		spawners.Go(func() {
			for range 100 {
				var openErr error
				err := spawnPooled(rs, poolKey{}, func() error {
					fd, err := unix.Open(secret, unix.O_RDONLY|unix.O_CLOEXEC, 0)
					if err == nil {
						unix.Close(fd)
					}
					openErr = err
					return nil
				})
				if errors.Is(err, errPoolStopped) {
					continue // Start falls back to a fresh thread here
				}
				if err != nil || !errors.Is(openErr, unix.EACCES) {
					failures.Add(1)
				}
				pooled.Add(1)
			}
		})
	}
	spawners.Wait()
	close(stop)
	wg.Wait()
	assert.Zero(t, failures.Load())
	assert.NotZero(t, pooled.Load(), "no spawn reached a worker")
	t.Logf("%d of 800 requests served by a worker", pooled.Load())
}

// TestStartClosedRuleset: after Release and Close, Start fails with
// landlock.ErrClosed on both paths.
func TestStartClosedRuleset(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	ws, rs, _ := internalFixture(t)
	require.NoError(t, CommandContext(context.Background(), ws, rs, "/bin/true").Run())
	Release(rs)
	require.NoError(t, rs.Close())
	for _, fresh := range []bool{false, true} {
		c := CommandContext(context.Background(), ws, rs, "/bin/true")
		c.FreshThread = fresh
		assert.ErrorIs(t, c.Run(), landlock.ErrClosed, "fresh=%v", fresh)
		assert.Nil(t, c.Process)
	}
}

// TestPoolWaitingCallerReleased: with every worker busy, a further caller
// waits; Release sends it back (errPoolStopped, so Start falls back to a
// fresh thread) instead of leaving it blocked.
func TestPoolWaitingCallerReleased(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	_, rs, _ := internalFixture(t)
	p := poolFor(rs, poolKey{})
	block := make(chan struct{})
	var busy sync.WaitGroup
	var started sync.WaitGroup
	for range p.max {
		started.Add(1)
		busy.Go(func() {
			spawnPooled(rs, poolKey{}, func() error { started.Done(); <-block; return nil })
		})
	}
	started.Wait()
	res := make(chan error, 1)
	go func() { res <- spawnPooled(rs, poolKey{}, func() error { return nil }) }()
	for {
		p.mu.Lock()
		w := p.waiting
		p.mu.Unlock()
		if w == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	Release(rs)
	assert.ErrorIs(t, <-res, errPoolStopped)
	close(block)
	busy.Wait()
}
