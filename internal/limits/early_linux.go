package limits

import (
	"github.com/landjail/landjail/internal/selfproc"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// early is the sweep StartEarly started, for WaitEarly.
var early sync.WaitGroup

// earlyMu guards earlyOpen and earlyReq: whether StartEarly's goroutine
// still takes a StartPending request, and the one it has to serve.
var (
	earlyMu   sync.Mutex
	earlyOpen bool
	earlyReq  *Pending
)

// StartEarly starts, on another goroutine, what the first Start of this
// process does before it makes a group under the default parents: the
// facts a group name holds, the probe and the sweep of stale groups
// (cleanDefault), so that they overlap the caller's other start-up work
// (landjail run calls it before parsing its flags). The goroutine makes
// the group of a StartPending made meanwhile (see there). Start still waits
// for the sweep to end before it makes its group (both take the sweep's
// lock, and whichever comes first sweeps), so what Start guarantees does
// not change; calling StartEarly more than once, or never, changes only
// timing. A process that may exit without calling Start calls WaitEarly
// first, so that a sweep is not cut short between freezing a stale group
// and thawing it (the next start would finish it, as after a SIGKILL).
func StartEarly() {
	early.Add(1)
	earlyRunning.Add(1)
	earlyMu.Lock()
	earlyOpen, thenOpen = true, true
	earlyMu.Unlock()
	body := func() {
		defer early.Done()
		defer earlyRunning.Add(-1) // before Done: WaitEarly's spin sees it first
		// First: the caller reads this process's start time too
		// (procstat.SelfStartTime, shared: privdirs' live marker), and
		// the first /proc/self look-up of a process is the dearest
		// (≈40 µs here, then ≈11).
		selfStart()
		selfPIDNS()
		staleMu.Lock()
		earlyLocked()
		probe()
		serveEarly(false) // a StartPending made meanwhile: its group first
		cleanStaleLocked("", func() { serveEarly(false) })
		staleMu.Unlock()
		earlySwept()
		serveEarly(true)
		runThen()
	}
	// On the goroutine internal/prenet/early started before most
	// packages initialized, which has read what selfStart, selfPIDNS and
	// probe read first (internal/selfproc), when there is one.
	if !selfproc.Go(body) {
		go body()
	}
}

// serveEarly makes the group of the StartPending request StartEarly's
// goroutine holds, if any; last closes the goroutine to new requests
// (they get a goroutine of their own).
func serveEarly(last bool) {
	earlyMu.Lock()
	p := earlyReq
	earlyReq = nil
	if last {
		earlyOpen = false
	}
	earlyMu.Unlock()
	if p != nil {
		p.run, p.err = start(p.spec, p.opts)
		p.ready.Store(true)
		close(p.done)
		earlyServed()
	}
}

// thenOpen and thenWork (guarded by earlyMu) are Then's: whether
// StartEarly's goroutine still takes work, and the work it has taken.
var (
	thenOpen bool
	thenWork []func()
)

// Then hands f to the goroutine StartEarly started, which runs it after
// its own work (the sweep and the group of a StartPending made
// meanwhile), and reports true; false when that goroutine was not started
// or no longer takes work (the caller runs f itself). WaitEarly waits
// for f too. f must not wait for anything that waits for WaitEarly.
// Work handed to a goroutine that is otherwise done spares the caller's
// thread the start of a goroutine of its own, and runs once the sweep has
// freed the other CPU (BENCHMARKS.md, round 8).
func Then(f func()) bool {
	earlyMu.Lock()
	defer earlyMu.Unlock()
	if !thenOpen {
		return false
	}
	thenWork = append(thenWork, f)
	return true
}

// runThen runs what Then handed StartEarly's goroutine, in order, until
// nothing more is there, and then closes Then.
func runThen() {
	for {
		earlyMu.Lock()
		work := thenWork
		thenWork = nil
		if len(work) == 0 {
			thenOpen = false
		}
		earlyMu.Unlock()
		if len(work) == 0 {
			return
		}
		for _, f := range work {
			f()
		}
	}
}

// earlyServed is called by StartEarly's goroutine after it made a
// StartPending's group (a test hook).
var earlyServed = func() {}

// Pending is a Start under way (StartPending).
type Pending struct {
	spec Spec
	opts Options
	done chan struct{} // closed once run and err are set
	// ready is set right before done is closed: Wait spins on it first.
	ready atomic.Bool
	run   *Run
	err   error
}

// Wait waits until the group is made and returns what Start returns.
// Safe to call more than once.
//
// Wait first spins (yielding to other goroutines) for up to waitSpin
// before it parks: the group is usually made within that, and a parked
// goroutine readied by another thread that goes on running (the sweep)
// resumes only once an idle thread is woken and steals it, ≈50 µs later
// on this 2-vCPU VM (phase marks, round 7).
func (p *Pending) Wait() (*Run, error) {
	spin(p.ready.Load, true)
	<-p.done
	return p.run, p.err
}

// waitSpin bounds Pending.Wait's spin.
const waitSpin = 50 * time.Microsecond

// StartPending begins Start(spec, opts) on another goroutine and returns
// at once; Wait gives its result. After StartEarly (opts.Parent ""), the
// group is made by StartEarly's goroutine as soon as it has probed, and
// the stale groups are removed after it, not before: no name of a stale
// group can be the new group's (its owner, this live process, is in the
// name), and what the sweep does to them is the same. The sweep then
// ends by WaitEarly, not by Wait; a process that replaces itself
// (execve) calls WaitEarly first (Run.BeforeExec), so that the sweep is
// not cut short. Otherwise StartPending is Start on a goroutine of its
// own, the sweep first.
func StartPending(spec Spec, opts Options) *Pending {
	p := &Pending{spec: spec, opts: opts, done: make(chan struct{})}
	if err := spec.Validate(); err != nil {
		p.err = err
		p.ready.Store(true)
		close(p.done)
		return p
	}
	if opts.Parent == "" {
		earlyMu.Lock()
		queued := earlyOpen && earlyReq == nil
		if queued {
			earlyReq = p
		}
		earlyMu.Unlock()
		if queued {
			return p
		}
	}
	go func() {
		defer close(p.done)
		p.run, p.err = Start(spec, opts)
		p.ready.Store(true)
	}()
	return p
}

// earlyLocked is called by StartEarly's goroutine once it holds the
// sweep's lock, earlySwept once it released it, before its last
// serveEarly (test hooks).
var earlyLocked, earlySwept = func() {}, func() {}

// WaitEarly waits until the goroutines StartEarly started have ended.
// Like Pending.Wait it spins for up to waitSpin first, without yielding:
// its caller (Run.BeforeExec) is a locked thread, for which
// runtime.Gosched hands the processor to another thread and sleeps until
// it is handed back.
func WaitEarly() {
	spin(func() bool { return earlyRunning.Load() == 0 }, false)
	early.Wait()
}

// earlyRunning counts StartEarly's goroutines still running.
var earlyRunning atomic.Int32

// spin returns when done reports true or waitSpin has passed; yield lets
// other goroutines run meanwhile (runtime.Gosched).
func spin(done func() bool, yield bool) {
	if done() {
		return
	}
	for end := time.Now().Add(waitSpin); !done() && time.Now().Before(end); {
		if yield {
			runtime.Gosched()
		}
	}
}

// BeforeExec is called by exec.Cmd.Exec right before the execve that
// replaces this process with the command (exec.Cmd.Cgroup): it waits for
// StartEarly's sweep (WaitEarly), which StartPending may have left
// running after the group was made, so that the execve does not cut it
// short between freezing a stale group and thawing it. Nothing else.
func (r *Run) BeforeExec() { WaitEarly() }
