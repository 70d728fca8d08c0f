package main

import (
	"bytes"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunKillAfterSIGTERM: a supervised command that ignores the
// SIGTERM landjail forwards is killed --kill-after later (default 5 s),
// and the sweep of --protect-agent-config then runs (red team round 23,
// R23b-1: landjail waited for it, so the supervisor's SIGKILL of
// landjail after its own grace skipped the sweep, and the command's
// core.fsmonitor in a repository it made stayed for the user's next
// git). The command ignores SIGTERM, makes the repository, then sleeps
// 100 s. Control: with --kill-after 0 landjail still waits 3 s after the
// signal (its --timeout ends it). Red with no kill after the grace:
// every run but the control still runs 15 s after SIGTERM.
func TestRunKillAfterSIGTERM(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Parallel()
	bin := landjailBin(t)
	// In a subdirectory: the Landlock-only layer (ns=EPERM) freezes the
	// workspace's root, where protected names are carved out.
	const script = "trap '' TERM; git init -q sub/newdir && git -C sub/newdir config core.fsmonitor 'echo PWNED' && echo > sub/ready && exec sleep 100\n"

	for _, tc := range []struct {
		name   string
		flags  []string
		grace  time.Duration // 0: landjail waits for the command
		nobody bool          // as uid 65534: the user-namespace stage
	}{
		{"default grace", nil, 5 * time.Second, false},
		{"kill-after 1s", []string{"--kill-after", "1s"}, time.Second, false},
		{"kill-after 1s, no namespaces", []string{"--kill-after", "1s", "--no-namespaces"}, time.Second, false},
		{"kill-after 1s, no PID namespace", []string{"--kill-after", "1s", "--no-pid-namespace"}, time.Second, false},
		{"kill-after 1s, uid 65534", []string{"--kill-after", "1s"}, time.Second, true},
		{"control: kill-after 0", []string{"--kill-after", "0", "--timeout", "8s"}, 0, false},
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
			require.NoError(t, os.Mkdir(filepath.Join(ws, "sub"), 0o755))
			require.NoError(t, os.Chmod(filepath.Join(ws, "sub"), 0o777)) // uid 65534's
			writeScript(t, ws, "term.sh", script)
			args := append([]string{"run", "--workspace", ws, "--protect-agent-config"}, tc.flags...)
			c := osexec.Command(bin, append(args, "--", "sh", "term.sh")...)
			c.Dir = ws
			if tc.nobody {
				c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + ws}
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out := &lockedBuffer{}
			c.Stdout, c.Stderr = out, out
			require.NoError(t, c.Start())
			exited := make(chan struct{})
			go func() { c.Wait(); close(exited) }()
			t.Cleanup(func() { c.Process.Kill(); <-exited })
			config := filepath.Join(ws, "sub/newdir/.git/config")
			require.Eventually(t, func() bool {
				_, err := os.Stat(filepath.Join(ws, "sub/ready"))
				return err == nil
			}, 30*time.Second, 20*time.Millisecond, "the command never started: %s", out.String())
			b, err := os.ReadFile(config)
			require.NoError(t, err)
			require.True(t, bytes.Contains(b, []byte("fsmonitor")), "control: the command set core.fsmonitor")

			signaled := time.Now()
			require.NoError(t, c.Process.Signal(unix.SIGTERM))
			if tc.grace == 0 {
				select {
				case <-exited:
					t.Fatalf("landjail ended %s after SIGTERM with --kill-after 0: %s", time.Since(signaled), out.String())
				case <-time.After(3 * time.Second):
				}
			}
			select {
			case <-exited:
			case <-time.After(tc.grace + 15*time.Second):
				t.Fatalf("landjail still runs %s after SIGTERM (its command ignores it): %s", time.Since(signaled), out.String())
			}
			b, _ = os.ReadFile(config)
			assert.False(t, bytes.Contains(b, []byte("fsmonitor")), "core.fsmonitor swept after the command: %s", out.String())
			if tc.grace > 0 {
				assert.GreaterOrEqual(t, time.Since(signaled), tc.grace, "killed before the grace")
				assert.Equal(t, 128+int(unix.SIGKILL), c.ProcessState.ExitCode(), out.String())
				assert.Contains(t, out.String(), "after SIGTERM: killed (--kill-after)")
			} else {
				assert.NotContains(t, out.String(), "--kill-after")
			}
		})
	}
}
