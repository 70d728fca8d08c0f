//go:build !linux

package egressns

import "fmt"

// Setup is Linux only.
func Setup(ports []uint16) (*Sockets, error) {
	return nil, fmt.Errorf("egressns: %w", ErrUnsupported)
}
