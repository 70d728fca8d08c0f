package landlock

import (
	"errors"
	"fmt"
)

var (
	// ErrNotEnforced: the Ruleset has no Landlock domain to apply (the
	// kernel has no usable Landlock: Report().Level is "path-check only").
	// RestrictSelf returns it; callers fall back to path checks.
	ErrNotEnforced = errors.New("landlock: ruleset is not enforced by the kernel")

	// ErrNotEnforceable: Strict was set and the policy asks for something
	// Landlock cannot express at all, whatever the ABI: a carve-out that
	// cannot be compiled (patterns of an unrestricted policy, a tree
	// larger than Options.WalkLimit, Options.NoCarve) or that another
	// rule widens again (see Options.Strict).
	ErrNotEnforceable = errors.New("landlock: policy cannot be enforced by Landlock")

	// ErrClosed: the Ruleset was used after Close.
	ErrClosed = errors.New("landlock: ruleset is closed")
)

// ABIError is returned by Compile in Strict mode when the running kernel's
// Landlock ABI (Have) is below the one the requested rights need (Want).
// Missing names every right or feature that would have been dropped,
// comma-separated, each with the ABI it needs, for example
// "net.bind_tcp (ABI 4), scope.signal (ABI 6)".
//
// errors.Is(err, errors.ErrUnsupported) is true for an *ABIError.
type ABIError struct {
	Have, Want int
	Missing    string
}

func (e *ABIError) Error() string {
	if e.Have == 0 {
		return fmt.Sprintf("landlock: strict mode: the kernel has no usable Landlock (want ABI %d for %s)", e.Want, e.Missing)
	}
	return fmt.Sprintf("landlock: strict mode: kernel Landlock ABI %d lacks %s (want ABI %d)", e.Have, e.Missing, e.Want)
}

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e *ABIError) Is(target error) bool { return target == errors.ErrUnsupported }
