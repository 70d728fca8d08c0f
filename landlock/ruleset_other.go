//go:build !linux

package landlock

import (
	"errors"
	"fmt"

	"github.com/landjail/landjail/jail"
)

func kernelABI() int { return 0 }

func startProbe(bool) {}

func compile(ws *jail.Workspace, opt Options) (*Ruleset, error) {
	return nil, fmt.Errorf("landlock: Compile: %w", errors.ErrUnsupported)
}

func (r *Ruleset) restrictSelf() error {
	return fmt.Errorf("landlock: RestrictSelf: %w", errors.ErrUnsupported)
}

func (r *Ruleset) close() error { return nil }

// keptRules exists on Linux only.
type keptRules struct{}
