package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
)

// TestRunSignalDuringPlanning: a signal that reaches a supervised run
// before its command starts ends landjail (status 128 + the signal), as
// it ends a run that execve's; it was caught for the command and held
// until the planning ended (red team round 21, R21-1: timeout's SIGTERM
// at 60 s, landjail gone after 3 min 26 s, the command started all the
// same). The planning is made long by R21-1's plant (a self-link for 48
// directory components of the secrets preset, and 2,000 files, under
// --deny-secrets: seconds of walk); the signal is sent once landjail has
// spent 0.2 s of CPU time. The command ignores SIGTERM from its start, so
// a run that forwarded the signal would still write out/ran (when the
// signal reaches it after its exec). Control: the same run without the
// signal writes out/ran and spends more than twice the CPU time (the
// whole planning). Red with sigForward.watch keeping the signal: the
// whole planning's CPU time, and at times out/ran written, status 0.
func TestRunSignalDuringPlanning(t *testing.T) {
	t.Parallel()
	bin := landjailBin(t)
	plant := func(t *testing.T) string {
		ws := wsDir(t)
		p := filepath.Join(ws, "p")
		require.NoError(t, os.Mkdir(p, 0o755))
		var comps []string
		for _, pat := range jail.SecretPatterns {
			rest, ok := strings.CutPrefix(pat, "**/")
			if !ok {
				continue
			}
			parts := strings.Split(rest, "/")
			for _, c := range parts[:len(parts)-1] {
				if c != "" && !strings.ContainsAny(c, "*?[ ") && !slices.Contains(comps, c) {
					comps = append(comps, c)
				}
			}
		}
		// 48 of them: more make so many names that the walk fails at
		// once (landlock.ErrLinkNames).
		for _, c := range comps[:48] {
			require.NoError(t, os.Symlink(".", filepath.Join(p, c)))
		}
		for i := range 2000 {
			require.NoError(t, os.WriteFile(filepath.Join(p, fmt.Sprint("f", i)), nil, 0o644))
		}
		// Not ws itself: the Landlock-only layer freezes a directory
		// holding carve-outs.
		require.NoError(t, os.Mkdir(filepath.Join(ws, "out"), 0o755))
		return ws
	}
	cpuTicks := func(pid int) int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.Atoi(f[11])
		s, _ := strconv.Atoi(f[12])
		return u + s
	}
	// run runs the planted run, with signal SIGTERM once landjail has
	// spent 0.2 s of CPU time; it returns the CPU time landjail (and what
	// it waited for) spent.
	run := func(t *testing.T, signal bool) time.Duration {
		ws := plant(t)
		c := osexec.Command(bin, "run", "--deny-secrets", "--workspace", ws, "--",
			"env", "--ignore-signal=TERM", "sh", "-c", "echo x > out/ran")
		c.Dir = ws
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		require.NoError(t, c.Start())
		if signal {
			for cpuTicks(c.Process.Pid) < 20 {
				_, err := os.Stat(filepath.Join(ws, "out/ran"))
				require.True(t, errors.Is(err, os.ErrNotExist), "the planning ended before landjail had spent 0.2 s: the plant is too small here")
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, c.Process.Signal(unix.SIGTERM))
		}
		err := c.Wait()
		_, ran := os.Stat(filepath.Join(ws, "out/ran"))
		cpu := c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		if !signal {
			require.NoError(t, err, "control: the planted run starts its command: %s", out.String())
			assert.NoError(t, ran, "control: the command ran")
			return cpu
		}
		// Supervised: 128 + the signal; a run that execve's (the
		// Landlock-only fallback) dies of it.
		st := c.ProcessState.Sys().(syscall.WaitStatus)
		assert.True(t, st.ExitStatus() == 128+int(unix.SIGTERM) || st.Signal() == unix.SIGTERM,
			"ended by the signal before the command started: %v, %s", c.ProcessState, out.String())
		assert.ErrorIs(t, ran, os.ErrNotExist, "the command never started")
		return cpu
	}
	whole := run(t, false)
	cut := run(t, true)
	t.Logf("landjail's CPU time: %v for the whole planning, %v with SIGTERM after 0.2 s", whole, cut)
	// A run that held the signal until its command started planned to
	// the end (and a forwarded SIGTERM may or may not reach the command
	// before it writes out/ran): the CPU time tells.
	assert.Less(t, cut, whole/2, "ended during the planning, not after it")
}
