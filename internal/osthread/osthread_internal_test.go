package osthread

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeMainThread is FakeMain until the test ends.
func fakeMainThread(t *testing.T) (calls *atomic.Int32, fakeMain *atomic.Int64) {
	calls, fakeMain, restore := FakeMain()
	t.Cleanup(restore)
	return calls, fakeMain
}

// TestRunAvoidsMainThread pretends the first thread is the main
// thread: fn must then run on another thread, while the first one stays
// locked by the waiting goroutine so the retry cannot land on it.
func TestRunAvoidsMainThread(t *testing.T) {
	calls, fakeMain := fakeMainThread(t)
	var ranOn int
	require.NoError(t, Run(func() error { ranOn = unix.Gettid(); return nil }))
	assert.GreaterOrEqual(t, calls.Load(), int32(2), "at least one retry")
	assert.NotEqual(t, int(fakeMain.Load()), ranOn, "fn ran on the thread flagged as main")
	assert.NotEqual(t, unix.Getpid(), ranOn, "fn ran on the real main thread")
}

// TestRunThreadDies: the thread fn ran on is gone afterwards (the runtime
// ends a thread whose goroutine exits locked), so nothing fn did to it is
// ever reused.
func TestRunThreadDies(t *testing.T) {
	var tid int
	require.NoError(t, Run(func() error { tid = unix.Gettid(); return nil }))
	assert.Eventually(t, func() bool {
		return unix.Tgkill(unix.Getpid(), tid, 0) == unix.ESRCH
	}, 5*time.Second, 5*time.Millisecond, "thread %d still alive", tid)
}
