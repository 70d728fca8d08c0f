package nsinit

import (
	"os"
	osexec "os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) {
	Main()
	kerneltest.Main(m)
}

// TestMainRegisters: in an ordinary process Main returns, opens the
// running binary and marks the stage registered.
func TestMainRegisters(t *testing.T) {
	require.True(t, Registered())
	require.NotNil(t, Exe())
	var a, b unix.Stat_t
	require.NoError(t, unix.Fstat(int(Exe().Fd()), &a))
	require.NoError(t, unix.Stat("/proc/self/exe", &b))
	assert.Equal(t, b.Ino, a.Ino, "Exe is the running binary")
}

// TestMarkerOutsidePIDNamespaceRefused: the marker in the environment of
// a process that is not PID 1 makes it exit 125 before doing anything
// (a stray variable cannot turn a program into the init stage); the
// control without the marker runs the tests normally.
func TestMarkerOutsidePIDNamespaceRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		code int
	}{
		{"control without the marker", nil, 0},
		{"marker, not PID 1", []string{EnvMarker + "=3,4"}, 125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := osexec.Command(os.Args[0], "-test.run=^TestMainRegisters$")
			c.Env = append(os.Environ(), tc.env...)
			out, err := c.CombinedOutput()
			assert.Equal(t, tc.code, c.ProcessState.ExitCode(), "%s %v", out, err)
			if tc.code != 0 {
				assert.Contains(t, string(out), "refusing")
			}
		})
	}
}

// TestProgramRoundTrip: EncodeProgram and DecodeProgram are inverses; a
// length that is not a multiple of 8 is EINVAL.
func TestProgramRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		prog []unix.SockFilter
	}{
		{"empty", nil},
		{"two", []unix.SockFilter{{Code: 0x20, K: 4}, {Code: 0x06, Jt: 1, Jf: 2, K: 0x7fff0000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := EncodeProgram(tc.prog)
			assert.Len(t, b, 8*len(tc.prog))
			got, err := DecodeProgram(b)
			require.NoError(t, err)
			assert.Equal(t, tc.prog, got)
		})
	}
	_, err := DecodeProgram(make([]byte, 9))
	assert.ErrorIs(t, err, unix.EINVAL)
}
