//go:build !linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
)

func build(Options) (*Filter, error) {
	return nil, fmt.Errorf("%w: %s: %w", ErrUnsupportedArch, runtime.GOOS, errors.ErrUnsupported)
}

func (f *Filter) install(b Broker) error {
	if b != nil {
		b.Close()
	}
	return fmt.Errorf("seccomp: install on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// sockFilter stands for struct sock_filter, which only Linux has.
type sockFilter struct{}

// decision exists on Linux only (Options.Explain).
type decision struct{}

// Serve fails: there is no seccomp on this OS.
func (f *Filter) Serve(listener int) error {
	return fmt.Errorf("seccomp: %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
