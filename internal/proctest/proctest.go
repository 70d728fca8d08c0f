// Package proctest helps tests that check which processes outlive a
// confined command: a script that leaves descendants behind, and reading
// their pids and whether they still run (proc(5)).
package proctest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// SpawnDescendants is a shell script that starts a setsid'd grandchild
// (it escapes the caller's process group and session) and a plain
// background child, both sleeping 300 s, each writing its pid to gc.pid
// and bg.pid in the current directory (atomically, by rename), and
// returns once both files exist.
const SpawnDescendants = `setsid sh -c 'echo $$ > gc.pid.tmp && mv gc.pid.tmp gc.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
sh -c 'echo $$ > bg.pid.tmp && mv bg.pid.tmp bg.pid; exec sleep 300' </dev/null >/dev/null 2>&1 &
while [ ! -f gc.pid ] || [ ! -f bg.pid ]; do sleep 0.05; done
`

// ReadPid returns the pid written in the file at path (as
// SpawnDescendants writes it); it fails the test if the file is missing
// or holds no number.
func ReadPid(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
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
