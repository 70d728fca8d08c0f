//go:build !linux

package nsview

import (
	"errors"
	"fmt"
)

func enter(View, bool) error {
	return fmt.Errorf("%w: %w (Linux only)", ErrUnavailable, errors.ErrUnsupported)
}

func probe() error { return enter(View{}, false) }

func prepareNetwork()     {}
func keepProbeNamespace() {}
func probeUserNS() error  { return enter(View{}, false) }

// OpenPrivateTmp is Linux only.
func OpenPrivateTmp() (int, error) { return -1, enter(View{}, false) }

// GrantPrivateTmp is Linux only.
func GrantPrivateTmp(int, uint64) error { return enter(View{}, false) }
func mountBudget() (int, error) {
	return 0, fmt.Errorf("nsview: mount budget: %w (Linux only)", errors.ErrUnsupported)
}

func lastMountTable() ([]string, int) { return nil, 0 }

func keepMountTable([]string, int) {}
