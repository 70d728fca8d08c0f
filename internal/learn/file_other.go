//go:build !linux

package learn

import (
	"errors"
	"fmt"
)

// File is a --learn FILE; see the Linux implementation.
type File struct{}

// Open returns an error wrapping errors.ErrUnsupported: --learn writes
// through directory descriptors (openat, renameat) on Linux only.
func Open(path string) (*File, error) {
	return nil, fmt.Errorf("--learn %s: %w", path, errors.ErrUnsupported)
}

// Path is "".
func (f *File) Path() string { return "" }

// Dir is "".
func (f *File) Dir() string { return "" }

// Text is nil.
func (f *File) Text() []byte { return nil }

// Write returns errors.ErrUnsupported.
func (f *File) Write([]byte) error { return errors.ErrUnsupported }

// Close does nothing.
func (f *File) Close() error { return nil }

// ErrMoved: see the Linux implementation.
var ErrMoved = errors.New("the directory was moved or replaced during the run")
