// Package proctest helps tests that check which processes outlive a
// confined command: a script that leaves descendants behind, and reading
// their pids and whether they still run (proc(5)).
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// SpawnDescendants is a shell script that starts a setsid'd grandchild
// (it escapes the caller's process group and session) running
// GrandchildCmd and a plain background child running BackgroundCmd, both
// in the current directory, and returns once both run (each writes a
// file before its exec). Find them from the host with HostPid: a pid the
// script could print would be one of its PID namespace.
const SpawnDescendants = `setsid sh -c 'touch gc.started; exec ` + GrandchildCmd + `' </dev/null >/dev/null 2>&1 &
sh -c 'touch bg.started; exec ` + BackgroundCmd + `' </dev/null >/dev/null 2>&1 &
while [ ! -f gc.started ] || [ ! -f bg.started ]; do sleep 0.05; done
`

// The command lines SpawnDescendants leaves running.
const (
	GrandchildCmd = "sleep 300"
	BackgroundCmd = "sleep 301"
)

// HostPid returns the host pid of a living process whose command line
// (arguments joined by spaces) is cmdline and whose working directory is
// dir (same device and inode: the path may differ in another mount
// namespace), or 0. It fails the test if dir cannot be stat'ed.
func HostPid(t testing.TB, dir, cmdline string) int {
	t.Helper()
	var want unix.Stat_t
	require.NoError(t, unix.Stat(dir, &want))
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil || strings.Join(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), " ") != cmdline {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(fmt.Sprintf("/proc/%d/cwd", pid), &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
			continue
		}
		if Alive(pid) {
			return pid
		}
	}
	return 0
}

// Alive reports whether pid is a living process: /proc/<pid>/stat exists
// and its state field (after the parenthesised command name) is not Z.
func Alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// AssertUnconfined fails the test unless path can be read by 64
// goroutines 100 times each: spread over the process's threads, a read
// from a thread left with a Landlock domain (or any other confinement)
// fails, where a read from one thread would likely miss it.
func AssertUnconfined(t testing.TB, path string) {
	t.Helper()
	var wg sync.WaitGroup
	var failed sync.Map
	for range 64 {
		wg.Go(func() {
			for range 100 {
				if _, err := os.ReadFile(path); err != nil {
					failed.Store(err.Error(), true)
				}
			}
		})
	}
	wg.Wait()
	failed.Range(func(k, _ any) bool { t.Errorf("read from an unconfined thread failed: %v", k); return true })
}

// Kill sends SIGKILL to each pid greater than 1 (0, from HostPid's "not
// found", would signal the caller's own process group).
func Kill(pids ...int) {
	for _, p := range pids {
		if p > 1 {
			unix.Kill(p, unix.SIGKILL)
		}
	}
}

// Find returns the pid of a process whose command line
// (/proc/PID/cmdline: arguments each ended by a NUL byte) contains want,
// or 0.
func Find(want string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(b), want) {
			return pid
		}
	}
	return 0
}

// CPU is process pid's CPU time, every thread, user and system
// (/proc/PID/stat's utime and stime, in USER_HZ ticks of 10 ms). It fails
// the test if the process is gone.
func CPU(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, err := strconv.Atoi(f[11])
	require.NoError(t, err)
	s, err := strconv.Atoi(f[12])
	require.NoError(t, err)
	return time.Duration(u+s) * 10 * time.Millisecond
}
