package tools

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/landjail/landjail/jail"
)

// planGate is what the file tools of one Workspace know about its plans
// (Toolkit.Replan): whether a bash command ran since the last plan that
// succeeded, and the newest plan's error. Every Toolkit of that
// Workspace shares it (Narrow's copies included), like bashGates. Safe
// for concurrent use.
type planGate struct {
	mu sync.Mutex
	// running counts the bash commands started and not yet reaped.
	running int
	// epoch is bumped when a bash command starts and when it is reaped:
	// the tree may have changed since a plan made at an older epoch.
	epoch uint64
	// valid is the epoch of the newest plan that succeeded while no
	// command ran, and saw no command start or end before it finished.
	valid uint64
	// seq numbers the plans in the order they began; err is the error
	// of the newest one (plan errSeq) to finish.
	seq, errSeq uint64
	err         error
	// left: a process a bash call left behind lived when the newest plan
	// ended (Toolkit.Leftovers): it may have changed the tree since,
	// even if it is gone now.
	left bool

	// replan lets one Replan run at a time: calls waiting for it then
	// take its answer when nothing changed meanwhile.
	replan sync.Mutex
}

// planGates holds, per Workspace (weakly: a gate goes with its
// Workspace), its planGate.
var planGates sync.Map // weak.Pointer[jail.Workspace] -> *planGate

// gateOf returns ws's planGate.
func gateOf(ws *jail.Workspace) *planGate {
	key := weak.Make(ws)
	g, loaded := planGates.LoadOrStore(key, &planGate{})
	if !loaded && ws != nil {
		runtime.AddCleanup(ws, func(k weak.Pointer[jail.Workspace]) { planGates.Delete(k) }, key)
	}
	return g.(*planGate)
}

// begin starts a plan: its number, the epoch it sees, and whether no
// command ran then.
func (g *planGate) begin() (seq, epoch uint64, quiet bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seq++
	return g.seq, g.epoch, g.running == 0
}

// end records the outcome of the plan begin numbered seq.
func (g *planGate) end(seq, epoch uint64, quiet bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if seq > g.errSeq {
		g.err, g.errSeq = err, seq
	}
	if err == nil && quiet && g.running == 0 && g.epoch == epoch {
		g.valid = epoch
	}
}

// started and reaped bracket a bash command's run.
func (g *planGate) started() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running++
	g.epoch++
}

func (g *planGate) reaped() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.epoch++
}

// current reports whether the last plan still holds: it succeeded, and
// no bash command ran since or runs now.
func (g *planGate) current() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err == nil && g.running == 0 && g.valid == g.epoch && !g.left
}

// leftovers is Leftovers' answer (false without it; true on its error).
func (k *Toolkit) leftovers() bool {
	if k.Leftovers == nil {
		return false
	}
	left, err := k.Leftovers()
	return left || err != nil
}

// planned is the file tools' gate: nil when the policy's last plan still
// holds (and no process a bash call left behind lives, or lived when it
// ended: Leftovers); else it plans again (Replan) and returns that plan's
// error as ErrPolicyRefused. Without Replan it lets every call through.
func (k *Toolkit) planned() error {
	if k.Replan == nil {
		return nil
	}
	g := gateOf(k.WS)
	if g.current() {
		return nil
	}
	g.replan.Lock()
	defer g.replan.Unlock()
	if g.current() { // planned while this call waited
		return nil
	}
	seq, epoch, quiet := g.begin()
	err := k.Replan()
	g.end(seq, epoch, quiet, err)
	if k.Leftovers != nil {
		// Asked after the plan: a process living now may change the
		// tree after it (and a bash call's leftovers are children by
		// the time the call is reaped, with Become).
		left := k.leftovers()
		g.mu.Lock()
		g.left = left
		g.mu.Unlock()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPolicyRefused, err)
	}
	return nil
}
