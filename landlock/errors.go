package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/landjail/landjail/internal/nsview"
)

var (
	// ErrUnavailable: the Ruleset has no Landlock domain to apply (the
	// kernel has no usable Landlock: Report().Level is "path-check only").
	// RestrictSelf returns it; callers fall back to path checks. (Not to
	// be confused with exec.ErrNotEnforced: a domain that was applied but
	// that the self-test saw not enforce.)
	ErrUnavailable = errors.New("landlock: no usable Landlock: the ruleset has no domain to apply")

	// ErrNotEnforceable: the policy asks for something Landlock cannot
	// express at all, whatever the ABI. Always for deny, read-only or
	// private-key patterns of an unrestricted policy (carving them would
	// walk the whole file system; a deny pattern never fails open). With
	// Strict also for Options.NoCarve with something to carve, and for a
	// carve-out that another rule widens again (see Options.Strict).
	ErrNotEnforceable = errors.New("landlock: policy cannot be enforced by Landlock")

	// ErrWalkLimit: expanding the policy's patterns would visit more than
	// Options.WalkLimit entries. Compile refuses in every mode, strict or
	// best effort, rather than leave the matches beyond the limit
	// reachable for children; the error names the limit, the root, and
	// how to raise it (Options.WalkLimit; the CLI's --walk-limit).
	ErrWalkLimit = errors.New("landlock: walk limit reached while expanding the policy's patterns")
	// ErrHomeScanLimit: the look for the symbolic links a dotfiles
	// manager puts into HOME (its hidden directories, $XDG_CONFIG_HOME)
	// met more directories and links than it reads (200,000): a link
	// beyond them could lead a denied name into the policy, so Compile
	// fails closed. The error names the directory where it stopped; not
	// raised by --walk-limit (red team rounds 15 and 16, R15a-1, R16-3).
	ErrHomeScanLimit = errors.New("landlock: too many entries in HOME's configuration directories to look for links")
	// ErrLinkNames: a directory is reached through symbolic links by
	// more than MaxLinkNames names that the policy's patterns tell apart
	// (jail.Workspace.BelowKeyOf), each of which the carve walk would
	// walk it by: planted links back to the directory, named like the
	// patterns' components (red team rounds 21 and 22, R21-1, R22a-1:
	// 938 such names, 48 s before the command started), or the walks
	// by link names number more than 4,096 in all (16 × MaxLinkNames:
	// directories cross-linked that way, R22c-5). Compile fails closed
	// at once; the error, a *fs.PathError, names the directory (in all:
	// the workspace). Not raised by --walk-limit: remove the links.
	ErrLinkNames = errors.New("landlock: a directory is reached through symbolic links by too many names the patterns tell apart")

	// ErrMountLimit: the namespace layer would need more mounts than the
	// kernel allows in one mount namespace (fs.mount-max,
	// /proc/sys/fs/mount-max, 100,000 by default): one mask per file or
	// directory a deny pattern matches. Compile refuses before anything
	// is built, naming the deny patterns with the most masks and the
	// counts; without the namespace layer (Options.Namespaces false) the
	// files are carved out of the Landlock rules instead, with no mount
	// each. It is the error the view itself returns when it does not fit
	// (nsview's, at spawn), so errors.Is matches both.
	ErrMountLimit = nsview.ErrMountLimit

	// ErrClosed: the Ruleset was used after Close. It wraps fs.ErrClosed,
	// so errors.Is(err, fs.ErrClosed) holds, as for os.File and os.Root.
	ErrClosed error = &wrapped{"landlock: ruleset is closed: " + fs.ErrClosed.Error(), fs.ErrClosed}
)

// ABIError is returned by Compile in Strict mode when the running kernel's
// Landlock ABI (Have) is below the one the requested rights need (Want).
// Missing lists every required right or feature that would have been
// dropped, each with the ABI it needs; its String method reads, for
// example, "net.bind_tcp (ABI 4), scope.signal (ABI 6)".
//
// errors.Is(err, errors.ErrUnsupported) is true for an *ABIError.
type ABIError struct {
	Have, Want int
	Missing    FeatureList
}

func (e *ABIError) Error() string {
	if e.Have == 0 {
		return fmt.Sprintf("landlock: strict mode: the kernel has no usable Landlock (want ABI %d for %s)", e.Want, e.Missing)
	}
	return fmt.Sprintf("landlock: strict mode: kernel Landlock ABI %d lacks %s (want ABI %d)", e.Have, e.Missing, e.Want)
}

// Is makes errors.Is(err, errors.ErrUnsupported) true.
func (e *ABIError) Is(target error) bool { return target == errors.ErrUnsupported }

// FeatureList is a list of Landlock features (ABIError.Missing).
type FeatureList []Feature

// String names each feature with the ABI it needs, comma-separated:
// "net.bind_tcp (ABI 4), scope.signal (ABI 6)".
func (l FeatureList) String() string {
	names := make([]string, len(l))
	for i, f := range l {
		names[i] = fmt.Sprintf("%s (ABI %d)", f.Name, f.ABI)
	}
	return strings.Join(names, ", ")
}

// Names returns the features' names ("net.bind_tcp", "scope.signal").
func (l FeatureList) Names() []string {
	names := make([]string, len(l))
	for i, f := range l {
		names[i] = f.Name
	}
	return names
}

// wrapped is a fixed message wrapping a sentinel: fmt.Errorf at package
// initialisation would make every landjail start pay for fmt's first use.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
