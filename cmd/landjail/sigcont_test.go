package main

import (
	"bytes"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRunSignalStoppedCommand: a command that stops itself (SIGSTOP) keeps
// a forwarded SIGTERM pending; a supervisor continues it after the signal
// (timeout(1), systemd), so landjail must too, or SIGTERM and Ctrl-C to a
// supervised run do nothing until a SIGKILL (red team R11b-7). The
// unconfined control: the same script ends on SIGTERM followed by SIGCONT
// and not on SIGTERM alone (the shape is real: the signal stays pending).
func TestRunSignalStoppedCommand(t *testing.T) {
	t.Parallel()
	bin := landjailBin(t)
	const script = "echo $$ > ready; kill -STOP $$; sleep 60\n"

	// started waits until the command wrote its ready file and then
	// for it to stop itself (it does so right after).
	started := func(t *testing.T, ws string, c *osexec.Cmd) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(ws, "ready")); err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "the command never started")
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
	}
	// ends reports whether c exits within d, and its exit code.
	ends := func(c *osexec.Cmd, d time.Duration) (bool, int) {
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }()
		select {
		case <-done:
			return true, c.ProcessState.ExitCode()
		case <-time.After(d):
			c.Process.Kill()
			<-done
			return false, -1
		}
	}

	t.Run("unconfined control", func(t *testing.T) {
		t.Parallel()
		ws := wsDir(t)
		writeScript(t, ws, "stop.sh", script)
		c := osexec.Command("sh", "stop.sh")
		c.Dir = ws
		require.NoError(t, c.Start())
		started(t, ws, c)
		require.NoError(t, c.Process.Signal(unix.SIGTERM))
		time.Sleep(time.Second)
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
		require.NoError(t, err, "a stopped process ended on SIGTERM alone: the shape of the attack is not real here")
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		require.Equal(t, "T", fields[0], "the process is not stopped with SIGTERM pending")
		require.NoError(t, c.Process.Signal(unix.SIGCONT))
		ok, code := ends(c, 10*time.Second)
		require.True(t, ok, "SIGTERM and SIGCONT did not end the stopped process")
		assert.Equal(t, -1, code, "killed by SIGTERM") // ExitCode is -1 for a signal
		assert.Equal(t, syscall.SIGTERM, c.ProcessState.Sys().(syscall.WaitStatus).Signal())
	})

	for _, tc := range []struct {
		name   string
		flags  []string
		nobody bool // as uid 65534: the user-namespace stage forwards
	}{
		{"default", nil, false},
		{"no PID namespace", []string{"--no-pid-namespace"}, false},
		{"no namespaces", []string{"--no-namespaces"}, false},
		{"uid 65534, default", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.nobody && os.Geteuid() != 0 {
				t.Skip("needs root to switch to uid 65534") // not a kernel feature
			}
			ws, bin := wsDir(t), bin
			if tc.nobody { // a workspace and a copy of the binary uid 65534 reaches
				ws, bin = nobodyDir(t), nobodyBinary(t, bin)
			}
			writeScript(t, ws, "stop.sh", script)
			// --timeout: supervised in every mode (without it and
			// without a PID namespace landjail execs the command in
			// place, and the caller's signal is the command's own).
			args := append([]string{"run", "--workspace", ws, "--timeout", "1h"}, tc.flags...)
			c := osexec.Command(bin, append(args, "--", "sh", "stop.sh")...)
			c.Dir = ws
			if tc.nobody {
				c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out := &lockedBuffer{}
			c.Stdout, c.Stderr = out, out
			require.NoError(t, c.Start())
			started(t, ws, c)
			require.NoError(t, c.Process.Signal(unix.SIGTERM))
			ok, code := ends(c, 15*time.Second)
			require.True(t, ok, "landjail did not end on SIGTERM with its command stopped: %s", out.String())
			assert.Equal(t, 128+int(unix.SIGTERM), code, out.String())
		})
	}
}

// nobodyDir returns a canonical directory under the system's temporary
// directory that uid 65534 can write (mode 0777), removed after the test.
func nobodyDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "landjail-nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	require.NoError(t, os.Chmod(d, 0o777))
	d, err = filepath.EvalSymlinks(d)
	require.NoError(t, err)
	return d
}

// nobodyBinary returns a copy of bin that uid 65534 can execute, in a
// directory of nobodyDir's.
func nobodyBinary(t *testing.T, bin string) string {
	t.Helper()
	b, err := os.ReadFile(bin)
	require.NoError(t, err)
	cp := filepath.Join(nobodyDir(t), filepath.Base(bin))
	require.NoError(t, os.WriteFile(cp, b, 0o755))
	return cp
}
