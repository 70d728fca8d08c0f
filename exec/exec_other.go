//go:build !linux

package exec

import (
	"errors"
	"fmt"
)

type runState struct{}

func (c *Cmd) start() error { return fmt.Errorf("exec: Start: %w", errors.ErrUnsupported) }
func (c *Cmd) wait() error  { return fmt.Errorf("exec: Wait: %w", errors.ErrUnsupported) }
func (c *Cmd) exec() error  { return fmt.Errorf("exec: Exec: %w", errors.ErrUnsupported) }
