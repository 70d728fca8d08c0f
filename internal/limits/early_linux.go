package limits

import "sync"

// early is the sweep StartEarly started, for WaitEarly.
var early sync.WaitGroup

// StartEarly starts, on another goroutine, what the first Start of this
// process does before it makes a group under the default parents: the
// facts a group name holds, the probe and the sweep of stale groups
// (cleanDefault), so that they overlap the caller's other start-up work
// (landjail run calls it before parsing its flags). Start still waits
// for the sweep to end before it makes its group (both take the sweep's
// lock, and whichever comes first sweeps), so what Start guarantees does
// not change; calling StartEarly more than once, or never, changes only
// timing. A process that may exit without calling Start calls WaitEarly
// first, so that a sweep is not cut short between freezing a stale group
// and thawing it (the next start would finish it, as after a SIGKILL).
func StartEarly() {
	early.Add(1)
	go func() {
		defer early.Done()
		// First: the caller reads this process's start time too
		// (procstat.SelfStartTime, shared: privdirs' live marker), and
		// the first /proc/self look-up of a process is the dearest
		// (≈40 µs here, then ≈11).
		selfStart()
		selfPIDNS()
		staleMu.Lock()
		earlyLocked()
		cleanStaleLocked("")
		staleMu.Unlock()
	}()
}

// earlyLocked is called by StartEarly's goroutine once it holds the
// sweep's lock (a test hook).
var earlyLocked = func() {}

// WaitEarly waits until the goroutines StartEarly started have ended.
func WaitEarly() { early.Wait() }
