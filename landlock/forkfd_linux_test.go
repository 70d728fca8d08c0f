package landlock

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
)

// readOnThread confines a fresh locked thread with the ruleset fd (nil:
// none) and reports what reading each path returned there. The thread
// dies afterwards (never unlocked).
func readOnThread(t *testing.T, fd *os.File, flags uint32, paths ...string) []error {
	t.Helper()
	ch := make(chan []error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			ch <- []error{err}
			return
		}
		if err := ll.LandlockRestrictSelf(int(fd.Fd()), flags); err != nil {
			ch <- []error{err}
			return
		}
		var errs []error
		for _, p := range paths {
			_, err := os.ReadFile(p)
			errs = append(errs, err)
		}
		ch <- errs
	}()
	return <-ch
}

// TestForkFD: a forked ruleset grants what the Ruleset grants, a rule
// added to it grants its path there only, and neither the Ruleset nor
// another fork sees it (a control thread confined with a second fork
// cannot read the path). Without a view the descriptors are not kept:
// ErrUnavailable, as after Close ErrClosed.
func TestForkFD(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	inside := filepath.Join(f.root, "forkfd.txt")
	require.NoError(t, os.WriteFile(inside, []byte("in"), 0o644))
	extra := filepath.Join(f.outside, "extra")
	require.NoError(t, os.MkdirAll(extra, 0o755))
	extraFile := filepath.Join(extra, "f")
	require.NoError(t, os.WriteFile(extraFile, []byte("x"), 0o644))

	rs, err := Compile(f.ws, Options{System: true, TmpDir: f.tmpd, Namespaces: true})
	require.NoError(t, err)
	defer rs.Close()
	if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
		_, _, err := rs.ForkFD()
		assert.ErrorIs(t, err, ErrUnavailable, "no view (namespaces blocked): no kept rules")
		return
	}
	require.Equal(t, LayerNamespaces, rs.Report().Layer)

	orig, flags, err := rs.ForkFD() // a control with the Ruleset's rules alone
	require.NoError(t, err)
	defer orig.Close()
	fork, flags2, err := rs.ForkFD()
	require.NoError(t, err)
	defer fork.Close()
	assert.Equal(t, flags, flags2)

	// Add a rule for extra to the fork only.
	dfd, err := unix.Open(extra, unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	attr := ll.PathBeneathAttr{ParentFd: dfd, AllowedAccess: uint64(ll.AccessFSReadFile | ll.AccessFSReadDir)}
	require.NoError(t, ll.LandlockAddPathBeneathRule(int(fork.Fd()), &attr, 0))

	got := readOnThread(t, fork, flags, inside, extraFile, f.outside+"/secret")
	assert.NoError(t, got[0], "the fork grants the workspace")
	assert.NoError(t, got[1], "the added rule grants extra")
	assert.True(t, errors.Is(got[2], unix.EACCES), "the fork grants nothing else outside: %v", got[2])
	got = readOnThread(t, orig, flags, inside, extraFile)
	assert.NoError(t, got[0], "control: the second fork grants the workspace")
	assert.True(t, errors.Is(got[1], unix.EACCES), "the second fork is unchanged: extra denied, got %v", got[1])

	// Without a view nothing is kept.
	plain, err := Compile(f.ws, Options{System: true, TmpDir: f.tmpd})
	require.NoError(t, err)
	_, _, err = plain.ForkFD()
	assert.ErrorIs(t, err, ErrUnavailable)
	plain.Close()
	require.NoError(t, rs.Close())
	_, _, err = rs.ForkFD()
	assert.ErrorIs(t, err, ErrClosed)
}
