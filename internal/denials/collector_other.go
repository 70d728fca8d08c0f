//go:build !linux

package denials

import (
	"context"
	"errors"
	"fmt"
)

// Main does nothing: there is no audit watchdog on this OS.
func Main() {}

// Available reports false: Landlock exists only on Linux.
func Available() (ok bool, why string) { return false, "Landlock audit needs Linux" }

// Collector is not available on this OS.
type Collector struct{}

// Start returns an error wrapping ErrUnavailable and errors.ErrUnsupported.
func Start(ctx context.Context, filter Filter) (*Collector, error) {
	return nil, fmt.Errorf("%w: %w", ErrUnavailable, errors.ErrUnsupported)
}

// SetThrottle does nothing.
func (c *Collector) SetThrottle(throttle func(work func())) {}

// Stop returns ErrStopped.
func (c *Collector) Stop() ([]Denial, error) { return nil, ErrStopped }

// Records returns nil.
func (c *Collector) Records() []Record { return nil }
