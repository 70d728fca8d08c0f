//go:build !linux

package kerneltest

import (
	"errors"
	"fmt"
	"runtime"
)

func setup(spec string) error {
	e, err := parseSpec(spec)
	if err != nil {
		return err
	}
	if len(e) != 0 {
		return fmt.Errorf("kernel emulation on %s: %w", runtime.GOOS, errors.ErrUnsupported)
	}
	active = e
	return nil
}
