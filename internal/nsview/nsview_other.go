//go:build !linux

package nsview

import (
	"errors"
	"fmt"
)

func enter(View) error {
	return fmt.Errorf("%w: %w (Linux only)", ErrUnavailable, errors.ErrUnsupported)
}

func probe() error { return enter(View{}) }

func prepareNetwork()     {}
func keepProbeNamespace() {}
func probeUserNS() error  { return enter(View{}) }

// OpenPrivateTmp is Linux only.
func OpenPrivateTmp() (int, error) { return -1, enter(View{}) }

// GrantPrivateTmp is Linux only.
func GrantPrivateTmp(int, uint64) error { return enter(View{}) }
func mountBudget() (int, error) {
	return 0, fmt.Errorf("nsview: mount budget: %w (Linux only)", errors.ErrUnsupported)
}
