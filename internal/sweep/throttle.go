package sweep

import (
	"time"

	"github.com/landjail/landjail/internal/cpushare"
)

// Throttle bounds the CPU time the live watch spends handling what the
// command creates, moves and removes: Share is the run's share of
// landjail's CPU (cpushare; the --cpus limit: red team round 22,
// R22c-2: a loop renaming a directory of 20,000 subdirectories back and
// forth under --cpus 0.1 made landjail use 0.9 CPU), charged for each
// buffer of events and each re-examination; Hold holds the command for
// the time given while the share is owed (limits.Run.Pause: its group
// frozen, so that it makes no more events meanwhile and inotify's queue
// does not overflow). A nil Share or Hold: no bound. Freeze, when not
// nil, holds the command until the function it returns is called (ok
// false: it cannot be held): the watch holds it while a read of its
// events finds a backlog (more than half a buffer), whatever the CPU
// share, so that a command that makes events faster than the watch
// handles them waits instead of overflowing inotify's queue.
type Throttle struct {
	Share  *cpushare.Share
	Hold   func(time.Duration)
	Freeze func() (thaw func(), ok bool)
}

// do runs work under t.
func (t Throttle) do(work func()) {
	if t.Share == nil || t.Hold == nil {
		work()
		return
	}
	t.Share.Do(work, t.Hold)
}

// chargeEvery is how many entries a walk of the watch (tree, reexamine)
// handles between two charges of its Throttle: a charge is a
// clock_gettime of the process's CPU time, an entry a few system calls.
const chargeEvery = 64

// charge charges the work so far (cpushare.Share.Charge) on every
// chargeEvery-th call counted by n.
func (t Throttle) charge(n *int) {
	if *n++; *n%chargeEvery != 0 || t.Share == nil || t.Hold == nil {
		return
	}
	t.Share.Charge(t.Hold)
}
