//go:build !linux

package kernel

import (
	"errors"
	"fmt"
	"runtime"
)

var errNotLinux = fmt.Errorf("kernel: Landlock on %s: %w", runtime.GOOS, errors.ErrUnsupported)

func landlockABI() int       { return 0 }
func landlockRawABI() int    { return 0 }
func landlockErr() error     { return errNotLinux }
func releaseString() string  { return "" }
func openat2Supported() bool { return false }
func seccompMode() int       { return -1 }
func noNewPrivs() bool       { return false }
