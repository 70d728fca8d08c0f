package exec

import (
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// pidNamespace reports whether Start runs c's child under the init stage
// in a PID namespace of its own, and why not.
func (c *Cmd) pidNamespace() (bool, string) {
	if c.NoPIDNamespace && !c.Ruleset.UserNamespace() {
		return false, "turned off (Cmd.NoPIDNamespace / --no-pid-namespace)"
	}
	return pidNamespace(c.Ruleset, c.Seccomp)
}

// PIDNamespace reports whether a child started with rs and filter (and
// NoPIDNamespace unset) runs in a PID namespace of its own, with a fresh
// procfs on /proc and a minimal init as PID 1 (see Cmd.NoPIDNamespace),
// and when not, why: rs has no Landlock domain, or no namespace view
// (not root, or namespaces unavailable: its Report().LayerReason says
// why). With a Ruleset whose view the user-namespace stage builds
// (Ruleset.UserNamespace: not root), always: the stage is the namespace's
// PID 1. filter is accepted for symmetry with the spawn (every filter,
// Supervised ones included, works there). Needs CLONE_NEWPID, setns(2)
// with a pidfd (Linux 5.8) and a root caller.
func PIDNamespace(rs *landlock.Ruleset, filter *seccomp.Filter) (bool, string) {
	return pidNamespace(rs, filter)
}

func pidNamespace(rs *landlock.Ruleset, _ *seccomp.Filter) (bool, string) {
	if !rs.Enforced() {
		return false, "no Landlock domain"
	}
	if rs.UserNamespace() {
		return true, "" // the user-namespace stage is PID 1 of its own
	}
	if _, ok := rs.View(); !ok {
		why := "no namespace view"
		if r := rs.Report(); r != nil && r.LayerReason != "" {
			why += ": " + r.LayerReason
		}
		return false, why
	}
	return true, ""
}
