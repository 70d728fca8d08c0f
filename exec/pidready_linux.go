package exec

import (
	"os"
	"sync/atomic"
	"time"
	"weak"

	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// readyKey is what a prepared PID-namespace spawner carries besides its
// Ruleset's rules: whether it kept its capabilities and the seccomp
// filter installed on it.
type readyKey struct {
	keepCaps bool
	filter   *seccomp.Filter
}

// readySpawner is a locked thread prepared, between spawns, for the next
// pooled spawn in a new PID namespace: the init is cloned (from a pooled
// worker inside the view), the thread has joined its namespaces and is
// confined with the Ruleset's rules plus the init's procfs. A spawn then
// only hands it its start function: the thread forks the child, answers
// and dies. One per (Ruleset, readyKey); a new one is prepared in the
// background after each spawn; unused for poolIdleTimeout, it kills its
// init and exits.
type readySpawner struct {
	key weak.Pointer[landlock.Ruleset]
	k   readyKey
	ini *pidInit
	req chan *spawnReq // one request, or nil to stop
}

// readyDisabled turns prepared spawners off (for tests of the init
// itself, which must take the ordinary path every time).
var readyDisabled atomic.Bool

// takeReady removes and returns the prepared spawner for (rs, k), or nil.
func takeReady(rs *landlock.Ruleset, k readyKey) *readySpawner {
	if readyDisabled.Load() {
		return nil
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e := registry.m[weak.Make(rs)]
	if e == nil || e.ready == nil {
		return nil
	}
	r := e.ready[k]
	delete(e.ready, k)
	return r
}

// refill prepares a spawner for (rs, k), idle for at most idle, unless
// one is ready or being prepared. Errors are dropped: the next spawn takes the ordinary path
// and meets them there.
func refill(rs *landlock.Ruleset, k readyKey, idle time.Duration) {
	if readyDisabled.Load() {
		return
	}
	key := weak.Make(rs)
	registry.mu.Lock()
	e := entryFor(rs)
	if e.ready == nil {
		e.ready = map[readyKey]*readySpawner{}
		e.preparing = map[readyKey]bool{}
	}
	if e.ready[k] != nil || e.preparing[k] {
		registry.mu.Unlock()
		return
	}
	e.preparing[k] = true
	registry.mu.Unlock()

	r := prepareReady(rs, k, idle)

	registry.mu.Lock()
	e.preparing[k] = false
	live := registry.m[key] == e
	if r != nil && live {
		r.key = key
		e.ready[k] = r
		r = nil
	}
	registry.mu.Unlock()
	if r != nil {
		r.req <- nil // released meanwhile
	}
}

// prepareReady makes one readySpawner, or returns nil.
func prepareReady(rs *landlock.Ruleset, k readyKey, idle time.Duration) *readySpawner {
	var ini *pidInit
	err := spawnPooled(rs, poolKey{pidns: true}, func() error {
		var err error
		if ini, err = newPIDInit(true); err != nil { // from the pool's shared view
			return err
		}
		return ini.ready()
	})
	if err != nil {
		return nil
	}
	r := &readySpawner{k: k, ini: ini, req: make(chan *spawnReq, 1)}
	ok := make(chan error, 1)
	rsv := rs
	goLocked(func() {
		err := ini.join()
		if err == nil {
			var f *os.File
			var flags uint32
			if f, flags, err = procRuleset(rsv); err == nil {
				err = confineWith(f, flags, k.keepCaps, k.filter, withBroker(rsv, k.keepCaps))
				f.Close()
			}
		}
		rsv = nil // the waiting thread must not keep the Ruleset alive
		ok <- err
		if err != nil {
			return
		}
		r.serve(idle)
	})
	if err := <-ok; err != nil {
		ini.close()
		return nil
	}
	return r
}

// serve, on the prepared thread, waits for the one request (or a stop,
// or idle, poolIdleTimeout when the spawn that asked for it ran) and
// runs it. A spawner that stops or expires unused ends its namespace.
func (r *readySpawner) serve(d time.Duration) {
	idle := time.NewTimer(d)
	defer idle.Stop()
	var req *spawnReq
	select {
	case req = <-r.req:
	case <-idle.C:
		if r.expire() {
			r.ini.close()
			return
		}
		req = <-r.req // taken meanwhile: the request is on its way
	}
	if req == nil {
		r.ini.close()
		return
	}
	req.res <- req.start()
}

// expire removes r from its slot; false when a spawn took it first.
func (r *readySpawner) expire() bool {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	e := registry.m[r.key]
	if e == nil || e.ready[r.k] != r {
		return e == nil // released: stopped by releaseKey's nil
	}
	delete(e.ready, r.k)
	return true
}
