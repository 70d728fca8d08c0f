package exec

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// poolIdleTimeout is how long a spawner thread waits for a request before
// it exits (and the runtime destroys it). Long enough that an agent
// running one command after another keeps its workers (the confinement
// cost, ≈ 90 µs plus ≈ 0.17 µs per rule, is then paid once), short enough
// that an idle server does not keep confined threads around. A variable
// for tests.
var poolIdleTimeout = 10 * time.Second

// errPoolStopped: the pool was released while a request waited, or the
// pool cannot be used (no spawner guard); the caller falls back to a
// fresh thread.
var errPoolStopped = errors.New("exec: spawner pool unavailable (the caller falls back to a fresh thread)")

// spawnReq is one spawn handed to a worker: start runs on the worker's
// confined thread (it must not touch the file system: everything it needs
// was opened by the caller), its error comes back on res.
type spawnReq struct {
	start func() error
	res   chan error
}

// pool is the set of confined spawner threads for one (Ruleset, KeepCaps)
// pair. Workers are started lazily, at most max, and exit after
// poolIdleTimeout without requests, when done is closed (Release, or the
// Ruleset was garbage-collected), or when their confinement fails.
type pool struct {
	reqs chan *spawnReq // unbuffered: a send succeeds only into an idle worker
	done chan struct{}
	max  int
	idle time.Duration // poolIdleTimeout when the pool was made

	mu      sync.Mutex
	workers int  // started and not exited
	waiting int  // callers blocked on reqs: idle workers must not exit
	stopped bool // done is closed
}

// rsEntry is what exec keeps per Ruleset: its pools (indexed by KeepCaps)
// and the cached self-test result.
type rsEntry struct {
	pools    map[poolKey]*pool
	selfTest *selfTestResult
	// ready holds the prepared PID-namespace spawners (pidready_linux.go),
	// preparing the keys one is being prepared for.
	ready     map[readyKey]*readySpawner
	preparing map[readyKey]bool
}

// registry maps each Ruleset (weakly: it does not keep the Ruleset
// alive) to its entry. A cleanup registered with the Ruleset removes the
// entry and stops its workers when the Ruleset is collected.
var registry struct {
	mu sync.Mutex
	m  map[weak.Pointer[landlock.Ruleset]]*rsEntry
}

// entryFor returns rs's entry, creating it. The caller holds registry.mu.
func entryFor(rs *landlock.Ruleset) *rsEntry {
	key := weak.Make(rs)
	if registry.m == nil {
		registry.m = make(map[weak.Pointer[landlock.Ruleset]]*rsEntry)
	}
	e := registry.m[key]
	if e == nil {
		e = &rsEntry{}
		registry.m[key] = e
		if rs != nil {
			runtime.AddCleanup(rs, releaseKey, key)
		}
	}
	return e
}

// poolFor returns the live pool for (rs, keepCaps), creating it.
// poolKey is what a worker thread carries besides the Ruleset's domain:
// whether it kept its capabilities, and the seccomp filter its children
// inherit. Workers are never shared across keys.
type poolKey struct {
	keepCaps bool
	filter   *seccomp.Filter
	pidns    bool // workers fork the PID-namespace init stage: view only, not confined
}

func poolFor(rs *landlock.Ruleset, k poolKey) *pool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e := entryFor(rs)
	if e.pools == nil {
		e.pools = make(map[poolKey]*pool)
	}
	p := e.pools[k]
	if p == nil || p.isStopped() {
		p = &pool{
			reqs: make(chan *spawnReq),
			done: make(chan struct{}),
			max:  max(1, runtime.GOMAXPROCS(0)),
			idle: poolIdleTimeout,
		}
		e.pools[k] = p
	}
	return p
}

func (p *pool) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// stop makes every worker exit once idle (a spawn in progress finishes)
// and sends waiting callers back to the fresh-thread path.
func (p *pool) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped {
		p.stopped = true
		close(p.done)
	}
}

func release(rs *landlock.Ruleset) { releaseKey(weak.Make(rs)) }

func releaseKey(key weak.Pointer[landlock.Ruleset]) {
	registry.mu.Lock()
	e := registry.m[key]
	delete(registry.m, key)
	registry.mu.Unlock()
	if e == nil {
		return
	}
	for _, p := range e.pools {
		if p != nil {
			p.stop()
		}
	}
	registry.mu.Lock()
	ready := e.ready
	e.ready = nil
	registry.mu.Unlock()
	for _, r := range ready {
		r.req <- nil
	}
}

// spawnPooled runs start on a worker thread confined by rs (KeepCaps
// keepCaps): an idle worker if there is one, else a new one if fewer than
// GOMAXPROCS run, else the next worker to become idle. It returns start's
// error, the worker's confinement error, or errPoolStopped.
func spawnPooled(rs *landlock.Ruleset, k poolKey, start func() error) error {
	if guardUnavailable.Load() {
		return errPoolStopped
	}
	p := poolFor(rs, k)
	req := &spawnReq{start: start, res: make(chan error, 1)}
	select {
	case p.reqs <- req:
		return <-req.res
	default:
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errPoolStopped
	}
	if p.workers < p.max {
		p.workers++
		p.mu.Unlock()
		goLocked(func() { p.work(rs, k, req) })
		return <-req.res
	}
	p.waiting++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
	}()
	select {
	case p.reqs <- req:
		return <-req.res
	case <-p.done:
		return errPoolStopped
	}
}

// work is a worker's whole life, on a goroutine locked to a thread that
// is not the main thread (goLocked). It confines the thread once, serves
// first and then requests until idle or stopped, and returns still
// locked, so that the runtime destroys the thread.
func (p *pool) work(rs *landlock.Ruleset, k poolKey, first *spawnReq) {
	// rs is not used after this call, so the worker does not keep the
	// Ruleset alive (see registry). A Supervised filter gets its own
	// listener and supervisor goroutine here, one per worker thread; they
	// end when this thread and every child it forked are gone (not with
	// the pool), so children outliving the worker are still answered and
	// a recreated worker leaks nothing.
	if err := prepareThread(rs, k.keepCaps, k.filter, k.pidns); err != nil {
		// The thread may be half confined: it dies. Every other
		// caller retries on a fresh thread and gets the same error
		// there (for example landlock.ErrClosed).
		p.exit()
		p.stop()
		first.res <- err
		return
	}
	// A pidns worker needs no guard: its children live in a PID
	// namespace of their own, where this thread has no PID.
	if err := guardFor(k.pidns); err != nil {
		// Without the guard a child could signal or ptrace this
		// thread (see guard_linux.go): no pool, fresh threads only.
		guardUnavailable.Store(true)
		p.exit()
		p.stop()
		first.res <- errPoolStopped
		return
	}
	first.res <- first.start()
	idle := time.NewTimer(p.idle)
	defer idle.Stop()
	for {
		select {
		case req := <-p.reqs:
			req.res <- req.start()
			idle.Reset(p.idle)
		case <-idle.C:
			p.mu.Lock()
			if p.waiting > 0 {
				// A caller saw every worker busy and is about to
				// send: stay for it.
				p.mu.Unlock()
				idle.Reset(p.idle)
				continue
			}
			p.workers--
			p.mu.Unlock()
			return
		case <-p.done:
			p.exit()
			return
		}
	}
}

func (p *pool) exit() {
	p.mu.Lock()
	p.workers--
	p.mu.Unlock()
}

// goLocked is osthread.Go: fn on a fresh thread, not the main one, that
// dies afterwards.
func goLocked(fn func()) { osthread.Go(fn) }

// warmPidfd makes os run its one-time pidfd probe (pidfd_open and
// pidfd_send_signal on this process) on an ordinary thread, before the
// first spawn, instead of on a confined one where a seccomp filter or a
// signal scope could make it fail and disable pidfds for the whole
// process.
var warmPidfd = sync.OnceFunc(func() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
})

// guardFor installs the worker guard unless the worker forks PID-namespace
// init stages only.
func guardFor(pidns bool) error {
	if pidns {
		return nil
	}
	return installGuard()
}
