package exec

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fakeMainThread makes isMainThread report the first thread it is asked
// about as the main thread (its tid goes to fakeMain), and answer truly
// after that, until the test ends; calls counts the questions.
func fakeMainThread(t *testing.T) (calls *atomic.Int32, fakeMain *atomic.Int64) {
	calls, fakeMain = new(atomic.Int32), new(atomic.Int64)
	old := isMainThread
	t.Cleanup(func() { isMainThread = old })
	isMainThread = func() bool {
		if calls.Add(1) == 1 {
			fakeMain.Store(int64(unix.Gettid()))
			return true
		}
		return old() // the real check: a retry may land on the real main thread
	}
	return calls, fakeMain
}

// TestOnFreshThreadAvoidsMainThread pretends the first thread is the main
// thread: fn must then run on another thread, while the first one stays
// locked by the waiting goroutine so the retry cannot land on it.
func TestOnFreshThreadAvoidsMainThread(t *testing.T) {
	calls, fakeMain := fakeMainThread(t)
	var ranOn int
	require.NoError(t, onFreshThread(func() error { ranOn = unix.Gettid(); return nil }))
	assert.GreaterOrEqual(t, calls.Load(), int32(2), "at least one retry")
	assert.NotEqual(t, int(fakeMain.Load()), ranOn, "fn ran on the thread flagged as main")
	assert.NotEqual(t, unix.Getpid(), ranOn, "fn ran on the real main thread")
}
