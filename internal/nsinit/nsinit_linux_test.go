package nsinit

import (
	"encoding/binary"
	"os"
	osexec "os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) {
	Main()
	if mode, ok := os.LookupEnv(envPollerProbe); ok {
		os.Exit(pollerProbe(mode))
	}
	kerneltest.Main(m)
}

// envPollerProbe makes the test binary, right after Main, report whether
// the runtime's network poller holds an epoll descriptor (exit 3) or not
// (exit 0); "open" first opens a file with os.Open, the control.
const envPollerProbe = "NSINIT_TEST_POLLER_PROBE"

func pollerProbe(mode string) int {
	if mode == "open" {
		if f, err := os.Open("/proc/self/exe"); err == nil {
			defer f.Close()
		}
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 2
	}
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == "anon_inode:[eventpoll]" {
			return 3
		}
	}
	return 0
}

// TestMainNoPoller: Main opens the binary without the runtime's network
// poller (no epoll instance made at every start: BENCHMARKS.md round 8);
// the control, an os.Open of the same file, makes one, so the probe can
// see it.
func TestMainNoPoller(t *testing.T) {
	for _, tc := range []struct {
		mode string
		code int
	}{
		{"", 0},
		{"open", 3}, // the control
	} {
		c := osexec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), envPollerProbe+"="+tc.mode)
		out, err := c.CombinedOutput()
		assert.Equal(t, tc.code, c.ProcessState.ExitCode(), "mode %q: %s %v", tc.mode, out, err)
	}
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

// TestReadSpecSocket: the spec read from the stage's socket is every byte
// the parent wrote until it shut down its side, and the descriptors
// passed with it arrive as the same files, close-on-exec; control: a spec
// written without descriptors brings none.
func TestReadSpecSocket(t *testing.T) {
	for _, pass := range []bool{false, true} {
		t.Run(map[bool]string{false: "no descriptors", true: "two descriptors"}[pass], func(t *testing.T) {
			sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			defer unix.Close(sv[1])
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer r.Close()
			defer w.Close()
			var rights []byte
			if pass {
				rights = unix.UnixRights(int(r.Fd()), int(w.Fd()))
			}
			require.NoError(t, unix.Sendmsg(sv[0], []byte(`{"nfiles":`), rights, nil, 0))
			_, err = unix.Write(sv[0], []byte(`3}`))
			require.NoError(t, err)
			require.NoError(t, unix.Shutdown(sv[0], unix.SHUT_WR))
			defer unix.Close(sv[0])
			spec, fds, err := readSpecSocket(sv[1])
			require.NoError(t, err)
			assert.Equal(t, `{"nfiles":3}`, string(spec))
			if !pass {
				assert.Empty(t, fds)
				return
			}
			require.Len(t, fds, 2)
			for i, f := range []*os.File{r, w} {
				defer unix.Close(fds[i])
				var a, b unix.Stat_t
				require.NoError(t, unix.Fstat(fds[i], &a))
				require.NoError(t, unix.Fstat(int(f.Fd()), &b))
				assert.Equal(t, b.Ino, a.Ino, "descriptor %d", i)
				flags, err := unix.FcntlInt(uintptr(fds[i]), unix.F_GETFD, 0)
				require.NoError(t, err)
				assert.NotZero(t, flags&unix.FD_CLOEXEC, "descriptor %d close-on-exec", i)
			}
		})
	}
}

// TestReadFrame: the view frame is exactly its length's bytes (what
// follows stays for the spec); a descriptor passed with it is refused
// (EINVAL: the parent passes them with the spec only), a length past
// maxFrame is EMSGSIZE. Control: the well-formed frame.
func TestReadFrame(t *testing.T) {
	frame := func(b []byte) []byte { return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...) }
	for _, tc := range []struct {
		name   string
		data   []byte
		rights bool
		want   string
		err    error
	}{
		{"control: a frame, then the spec", append(frame([]byte(`{"a":1}`)), `SPEC`...), false, `{"a":1}`, nil},
		{"descriptor with the frame", frame([]byte(`{}`)), true, "", unix.EINVAL},
		{"too long", binary.LittleEndian.AppendUint32(nil, maxFrame+1), false, "", unix.EMSGSIZE},
		{"end of file inside", frame([]byte(`{"a":1}`))[:6], false, "", unix.EPIPE},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			require.NoError(t, err)
			defer unix.Close(sv[1])
			var oob []byte
			if tc.rights {
				oob = unix.UnixRights(0)
			}
			require.NoError(t, unix.Sendmsg(sv[0], tc.data, oob, nil, 0))
			require.NoError(t, unix.Shutdown(sv[0], unix.SHUT_WR))
			defer unix.Close(sv[0])
			got, err := readFrame(sv[1])
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			rest, _, err := readSpecSocket(sv[1])
			require.NoError(t, err)
			assert.Equal(t, "SPEC", string(rest), "the spec after the frame")
		})
	}
}

// TestIsStage: the stage runs from this package's init only for exactly
// what package exec re-executes (argv {Argv0}, Env's environment, PID 1);
// every other row is left to Main. Shown able to fail: with the PID check
// dropped the "not PID 1" row matched, and with the environment check
// loosened to any second variable the "other variable" row did.
func TestIsStage(t *testing.T) {
	pid1 := func() int { return 1 }
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		pid  func() int
		want string
		ok   bool
	}{
		{"the stage", []string{Argv0}, []string{EnvMarker + "=3,3,net"}, pid1, "3,3,net", true},
		{"the stage, Env's environment", []string{Argv0}, Env("3,3"), pid1, "3,3", true},
		{"not PID 1", []string{Argv0}, Env("3,3"), func() int { return 2 }, "", false},
		{"another argv[0]", []string{"landjail"}, Env("3,3"), pid1, "", false},
		{"an argument more", []string{Argv0, "run"}, Env("3,3"), pid1, "", false},
		{"no marker", []string{Argv0}, []string{"GOMAXPROCS=2"}, pid1, "", false},
		{"other variable", []string{Argv0}, []string{EnvMarker + "=3,3", "HOME=/"}, pid1, "", false},
		{"marker not first", []string{Argv0}, []string{"GOMAXPROCS=2", EnvMarker + "=3,3"}, pid1, "", false},
		{"three variables", []string{Argv0}, append(Env("3,3"), "GOMAXPROCS=1"), pid1, "", false},
		{"empty environment", []string{Argv0}, nil, pid1, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := isStage(tc.args, tc.env, tc.pid)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	// Env: the marker first, then this process's GOMAXPROCS.
	assert.Equal(t, []string{EnvMarker + "=5,6", "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0))}, Env("5,6"))
}

// TestParseMarker: the marker's fields, each optional one only in its
// place; anything else is EINVAL (the stage then exits 125 before doing
// anything). Shown able to fail: with the trailing-field check removed
// the "ids before net" row parsed.
func TestParseMarker(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want marker
		ok   bool
	}{
		{"3,4", marker{spec: 3, status: 4}, true},
		{"3,3,net", marker{spec: 3, status: 3, net: true}, true},
		{"3,3,ids=1000:1001", marker{spec: 3, status: 3, ids: true, uid: 1000, gid: 1001}, true},
		{"7,8,net,ids=0:0", marker{spec: 7, status: 8, net: true, ids: true}, true},
		{"3", marker{}, false},
		{"2,3", marker{}, false},
		{"3,x", marker{}, false},
		{"3,3,ids=1000:1001,net", marker{}, false},
		{"3,3,unknown", marker{}, false},
		{"3,3,net,net", marker{}, false},
		{"3,3,ids=1000", marker{}, false},
		{"3,3,ids=-1:5", marker{}, false},
		{"3,3,ids=a:b", marker{}, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseMarker(tc.in)
			if !tc.ok {
				assert.ErrorIs(t, err, unix.EINVAL)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}
