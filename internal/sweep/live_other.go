//go:build !linux

package sweep

import "io"

// MaxLive: see the Linux file.
const MaxLive = 8

// Live is nothing outside Linux.
type Live struct{}

// Watch does nothing outside Linux: the sweep after the command alone
// neutralises agent configuration.
func (s *Snapshot) Watch(w io.Writer, abort func(reason string), cpu Throttle) (*Live, error) {
	return nil, nil
}

// Stop does nothing.
func (l *Live) Stop() {}
