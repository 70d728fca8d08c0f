package kernel_test

import (
	"testing"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

func TestRelease(t *testing.T) {
	var u unix.Utsname
	require.NoError(t, unix.Uname(&u))
	assert.Equal(t, unix.ByteSliceToString(u.Release[:]), kernel.Release())
	assert.NotEmpty(t, kernel.Release())
}

func TestLandlockABI(t *testing.T) {
	if errno, ok := kerneltest.Blocked(kerneltest.FeatureLandlock); ok {
		assert.Equal(t, 0, kernel.LandlockABI())
		assert.ErrorIs(t, kernel.LandlockErr(), errno)
		return
	}
	kerneltest.RequireLandlockABI(t, 1)
	raw, err := llsyscall.LandlockGetABIVersion()
	require.NoError(t, err)
	assert.Equal(t, raw, kernel.LandlockABI())
	assert.NoError(t, kernel.LandlockErr())
}

func TestLandlockABIBlocked(t *testing.T) {
	for _, spec := range []string{"landlock=EPERM", "landlock=ENOSYS"} {
		t.Run(spec, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"="+spec) {
				return
			}
			errno, ok := kerneltest.Blocked(kerneltest.FeatureLandlock)
			require.True(t, ok)
			assert.Equal(t, 0, kernel.LandlockABI())
			assert.ErrorIs(t, kernel.LandlockErr(), errno)
		})
	}
}

func TestOpenat2Supported(t *testing.T) {
	if _, ok := kerneltest.Blocked(kerneltest.FeatureOpenat2); ok {
		assert.False(t, kernel.Openat2Supported())
		return
	}
	kerneltest.RequireOpenat2(t)
	assert.True(t, kernel.Openat2Supported())
}

func TestOpenat2Blocked(t *testing.T) {
	for _, spec := range []string{"openat2=ENOSYS", "openat2=EPERM"} {
		t.Run(spec, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"="+spec) {
				return
			}
			assert.False(t, kernel.Openat2Supported())
		})
	}
}

// TestOpenat2NotCached: the probe sees a filter installed after it first
// answered true.
func TestOpenat2NotCached(t *testing.T) {
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	kerneltest.RequireOpenat2(t)
	require.True(t, kernel.Openat2Supported())
	require.NoError(t, kerneltest.Install("openat2=ENOSYS"))
	assert.False(t, kernel.Openat2Supported())
}

func TestSeccompAndNoNewPrivs(t *testing.T) {
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	if kerneltest.Emulated() == "" {
		// A fresh child of a native run: whatever the container gave us,
		// the mode is readable.
		assert.Contains(t, []int{0, 1, 2}, kernel.SeccompMode())
	}
	require.NoError(t, kerneltest.Install("landlock=ENOSYS"))
	assert.Equal(t, 2, kernel.SeccompMode())
	assert.True(t, kernel.NoNewPrivs())
}
