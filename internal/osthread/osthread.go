// Package osthread runs a function on a fresh OS thread that is not the
// process's main thread and dies afterwards: the pattern for code that
// changes per-thread kernel state it must not give back to the Go
// scheduler (unshare(2) of a namespace, setns(2), seccomp(2) and
// landlock_restrict_self(2) on one thread, credentials).
//
// Why not the main thread: a goroutine that exits while locked to its
// thread makes the runtime end that thread, except the main thread, which
// it cannot end and parks instead ("wedged"), still carrying whatever the
// goroutine did to it; and the main thread is the one /proc/self names.
// Any goroutine can land on it once main's own goroutine is parked.
package osthread

import (
	"runtime"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// isMain reports whether the calling thread is the process's main thread
// (a variable so that tests can exercise the retry).
var isMain = func() bool { return unix.Gettid() == unix.Getpid() }

// Go runs fn on a new goroutine locked to an OS thread that is not the
// process's main thread; the goroutine exits locked after fn, so the
// runtime destroys the thread whatever fn did to it. If the goroutine
// lands on the main thread, it keeps the main thread locked until a retry
// on another goroutine has locked a thread of its own (so that the retry
// cannot land there), then unlocks the untouched main thread. Go does not
// wait for fn.
func Go(fn func()) {
	go func() {
		runtime.LockOSThread()
		if isMain() {
			locked := make(chan struct{})
			Go(func() { close(locked); fn() })
			<-locked
			runtime.UnlockOSThread() // nothing was done to this thread
			return
		}
		fn()
		// Exit without UnlockOSThread: the runtime terminates the thread.
	}()
}

// Run is Go and waits for fn: it returns fn's error.
func Run(fn func() error) error {
	ch := make(chan error, 1)
	Go(func() { ch <- fn() })
	return <-ch
}

// FakeMain makes the main-thread check report the first thread it is
// asked about as the main thread (its tid goes to fakeMain) and answer
// truly after that; calls counts the questions. restore puts the real
// check back. For tests of callers that must survive landing on the main
// thread (the real one is reached only by chance). Not safe for
// concurrent use with Go or Run.
func FakeMain() (calls *atomic.Int32, fakeMain *atomic.Int64, restore func()) {
	calls, fakeMain = new(atomic.Int32), new(atomic.Int64)
	old := isMain
	isMain = func() bool {
		if calls.Add(1) == 1 {
			fakeMain.Store(int64(unix.Gettid()))
			return true
		}
		return old() // the real check: a retry may land on the real main thread
	}
	return calls, fakeMain, func() { isMain = old }
}
