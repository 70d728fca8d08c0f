//go:build !linux

package exec

import (
	"errors"
	"fmt"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

type runState struct{}

func (c *Cmd) start() error { return fmt.Errorf("exec: Start: %w", errors.ErrUnsupported) }
func (c *Cmd) wait() error  { return fmt.Errorf("exec: Wait: %w", errors.ErrUnsupported) }
func (c *Cmd) exec() error  { return fmt.Errorf("exec: Exec: %w", errors.ErrUnsupported) }

func release(rs *landlock.Ruleset) {}

func prestartUserStage(bool) {}

type prestage struct{}

func (c *Cmd) reservePrestage() {}

func hardRlimits() bool { return false }

func selfTest(ws *jail.Workspace, rs *landlock.Ruleset) error {
	return fmt.Errorf("exec: SelfTest: %w", errors.ErrUnsupported)
}

// PIDNamespace is never in force outside Linux.
func PIDNamespace(rs *landlock.Ruleset, filter *seccomp.Filter) (bool, string) {
	return false, "not Linux"
}
