//go:build !linux

package limits

import (
	"errors"
	"fmt"
	osexec "os/exec"
)

// Options: see the Linux documentation.
type Options struct {
	Parent string
	Strict bool
	Stats  bool
}

// Run is never made outside Linux.
type Run struct{}

// ChildRlimit: see the Linux documentation.
type ChildRlimit struct {
	Resource int
	Cur, Max uint64
}

// Probe: see the Linux documentation.
type Probe struct {
	Mechanism       Mechanism `json:"mechanism"`
	Reason          string    `json:"reason,omitempty"`
	Controllers     []string  `json:"controllers,omitempty"`
	CgroupNamespace bool      `json:"cgroup_namespace"`
	ReadOnly        bool      `json:"read_only"`
	Systemd         string    `json:"systemd"`
}

// Available reports NotEnforced outside Linux.
func Available() Probe { return Probe{Reason: "not Linux", Systemd: "absent"} }

// Start fails outside Linux with an error wrapping ErrNotEnforced and
// errors.ErrUnsupported.
func Start(spec Spec, opts Options) (*Run, error) {
	return nil, fmt.Errorf("limits: Start: %w (%w)", ErrNotEnforced, errors.ErrUnsupported)
}

// CleanStale does nothing outside Linux.
func CleanStale(parent string) (int, error) { return 0, nil }

func (r *Run) Limits() []Limit           { return nil }
func (r *Run) Path() string              { return "" }
func (r *Run) CgroupFD() int             { return -1 }
func (r *Run) JoinThread() error         { return errors.ErrUnsupported }
func (r *Run) Rlimits() []ChildRlimit    { return nil }
func (r *Run) RlimitsHard()              {}
func (r *Run) Start(c *osexec.Cmd) error { return errors.ErrUnsupported }
func (r *Run) Kill() (int, error)        { return 0, errors.ErrUnsupported }
func (r *Run) Close() (*Result, error)   { return &Result{}, nil }
func (r *Run) Stats() Result             { return Result{} }
func (r *Run) Freeze() error             { return ErrNotEnforced }
func (r *Run) Thaw() error               { return nil }
func (r *Run) Closed() bool              { return false }

// StartEarly does nothing outside Linux.
func StartEarly() {}

// WaitEarly does nothing outside Linux.
func WaitEarly() {}

// Pending is a Start under way (StartPending).
type Pending struct {
	run *Run
	err error
}

// StartPending is Start; Wait returns its result.
func StartPending(spec Spec, opts Options) *Pending {
	r, err := Start(spec, opts)
	return &Pending{r, err}
}

// Wait returns what Start returned.
func (p *Pending) Wait() (*Run, error) { return p.run, p.err }

// BeforeExec does nothing here.
func (r *Run) BeforeExec() {}

// Then reports false outside Linux (no goroutine to hand work to).
func Then(f func()) bool { return false }
