package seccomp

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestPIDRulesLive: the pid rules on their own, without Landlock (the
// path-check level: Options.LandlockABI 0, so the ptrace family is refused
// by the filter too), on the filtered thread itself. Each call is made on
// a fresh `sleep` of the host, first from an unfiltered thread (the
// control: it succeeds and its effect shows on the victim), then from the
// filtered thread on another victim (EPERM, victim unchanged); the same
// calls on the caller (pid 0) still work. The exec package's
// TestSeccompPIDSyscalls runs the whole table (testdata/pidsyscalls.toml)
// with Landlock.
func TestPIDRulesLive(t *testing.T) {
	requireSeccomp(t)
	f, err := Build(Options{LandlockABI: 0})
	require.NoError(t, err)
	victim := func(t *testing.T) int {
		c := osexec.Command("sleep", "600")
		require.NoError(t, c.Start())
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c.Process.Pid
	}
	stat := func(pid int, field int) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		require.NoError(t, err)
		s := string(b)
		return strings.Fields(s[strings.LastIndexByte(s, ')')+2:])[field-3]
	}
	limits := func(pid int, prefix string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
		require.NoError(t, err)
		for line := range strings.Lines(string(b)) {
			if strings.HasPrefix(line, prefix) {
				return strings.Fields(strings.TrimPrefix(line, prefix))[0]
			}
		}
		return "?"
	}
	cases := []struct {
		name string
		call func(pid int) error
		// effect reads the victim's state after a successful call: it
		// must differ from the untouched victim's.
		effect func(pid int) string
		// self is the call on the caller, when call(0) would change the
		// whole test process.
		self func() error
	}{
		{"prlimit64 RLIMIT_CPU", func(pid int) error {
			return unix.Prlimit(pid, unix.RLIMIT_CPU, &unix.Rlimit{Cur: 0, Max: unix.RLIM_INFINITY}, nil)
		}, func(pid int) string { return limits(pid, "Max cpu time") }, func() error {
			// RLIMIT_CPU is the process's: set RLIMIT_NOFILE to what it is.
			var rl unix.Rlimit
			if err := unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &rl); err != nil {
				return err
			}
			return unix.Prlimit(0, unix.RLIMIT_NOFILE, &rl, nil)
		}},
		{"setpriority", func(pid int) error { return unix.Setpriority(unix.PRIO_PROCESS, pid, 19) },
			func(pid int) string { return stat(pid, 19) }, nil},
		{"sched_setaffinity", func(pid int) error {
			var set unix.CPUSet
			set.Set(0)
			return unix.SchedSetaffinity(pid, &set)
		}, func(pid int) string {
			var set unix.CPUSet
			require.NoError(t, unix.SchedGetaffinity(pid, &set))
			return fmt.Sprint(set.Count())
		}, nil},
		{"ioprio_set", func(pid int) error {
			return errnoOf(unix.Syscall(unix.SYS_IOPRIO_SET, 1 /* IOPRIO_WHO_PROCESS */, uintptr(pid), 3<<13))
		}, func(pid int) string {
			p, _, _ := unix.RawSyscall(unix.SYS_IOPRIO_GET, 1, uintptr(pid), 0)
			return fmt.Sprint(p >> 13)
		}, nil},
		{"get_robust_list", func(pid int) error {
			var head, size uintptr
			return errnoOf(unix.Syscall(unix.SYS_GET_ROBUST_LIST, uintptr(pid), uintptr(unsafe.Pointer(&head)), uintptr(unsafe.Pointer(&size))))
		}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			control, target := victim(t), victim(t)
			var before string
			if tc.effect != nil {
				before = tc.effect(control)
				if tc.name == "sched_setaffinity" && before == "1" {
					t.Skip("one CPU: pinning to CPU 0 changes nothing to see")
				}
			}
			require.NoError(t, tc.call(control), "control: unfiltered, the call reaches the victim")
			if tc.effect != nil {
				require.NotEqual(t, before, tc.effect(control), "control: the victim changed")
			}
			var filtered, self error
			onFilteredThread(t, f, func() {
				filtered = tc.call(target)
				if tc.self != nil {
					self = tc.self()
				} else {
					self = tc.call(0) // the filtered thread only: it dies afterwards
				}
			})
			assert.ErrorIs(t, filtered, unix.EPERM)
			if tc.effect != nil {
				assert.Equal(t, before, tc.effect(target), "the filtered call left the victim alone")
			}
			if tc.name == "get_robust_list" {
				assert.ErrorIs(t, self, unix.EPERM, "without Landlock the whole ptrace family is refused")
			} else {
				assert.NoError(t, self, "pid 0, the caller, stays allowed")
			}
		})
	}
}
