package main

import (
	"bufio"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
)

// notifyRun runs argv (a notifyprobe, confined or not), creates dir/name
// once it prints "watching" (or at once if it never does), and returns
// everything it printed.
func notifyRun(t *testing.T, dir, name string, argv ...string) string {
	t.Helper()
	cmd := osexec.Command(argv[0], argv[1:]...)
	if strings.Contains(strings.Join(argv, " "), "proc/self/cwd") {
		cmd.Dir = dir
	}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var lines []string
	sc := bufio.NewScanner(out)
	created := false
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "watching" && !created {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("k"), 0o600))
			created = true
		}
	}
	cmd.Wait()
	return strings.Join(lines, "\n")
}

// TestRunNotifyOutsidePolicy: fanotify and inotify on a directory outside
// the policy. Landlock does not mediate either (security_path_notify), so
// the confined command without the seccomp layer learns the name of a file
// the host creates in a directory it cannot list (the control, as the
// unconfined run); with the seccomp layer fanotify_init is refused, and
// inotify_add_watch is answered by the broker (EACCES) in supervised runs
// or refused (EPERM) where landjail execve's the command in place
// (--no-namespaces without a terminal, --timeout or --report), in the
// namespace layer and with --no-namespaces. inotify still works inside the
// workspace in supervised runs.
func TestRunNotifyOutsidePolicy(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/notifyprobe", "CGO_ENABLED=0")
	ws := wsDir(t)
	p := filepath.Join(ws, "notifyprobe")
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data, 0o755))
	// Not below /tmp: the namespace layer's /tmp is private. 0700, as
	// ~/.ssh.
	outside, err := os.MkdirTemp("/var/tmp", "landjail-notify-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })

	private := filepath.Join(ws, "private")
	require.NoError(t, os.Mkdir(private, 0o700))
	require.NoError(t, os.Chown(private, 1000, 1000))
	magic := strings.Repeat("../", 64) + "proc/self/cwd" // from any working directory
	// Without openat2 the broker's openat follows magic links (README).
	magicWant := "inotify_add_watch: too many levels of symbolic links"
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureOpenat2); blocked {
		magicWant = "watching\nevent k17"
	}

	run := func(flags ...string) []string {
		return append(append([]string{bin, "run", "--workspace", ws}, flags...), "--")
	}
	const (
		inotifyBroker = "inotify_add_watch: permission denied"
		inotifyEPERM  = "inotify_add_watch: operation not permitted"
	)
	// A default run is supervised for its PID namespace; where the
	// emulation takes namespaces away it execve's in place.
	inDefault, wsDefault := inotifyBroker, "watching\nevent k5"
	if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
		inDefault, wsDefault = inotifyEPERM, inotifyEPERM
	}
	for _, tc := range []struct {
		name string
		argv []string
		want string
	}{
		{"unconfined", []string{p, "fanotify", outside, "k1"}, "watching\nevent k1"},
		{"no-seccomp", append(run("--no-seccomp"), p, "fanotify", outside, "k2"), "watching\nevent k2"},
		{"confined", append(run(), p, "fanotify", outside, "k3"), "fanotify_init: operation not permitted"},
		{"confined no-namespaces", append(run("--no-namespaces"), p, "fanotify", outside, "k4"), "fanotify_init: operation not permitted"},
		{"inotify unconfined", []string{p, "inotify", outside, "k6"}, "watching\nevent k6"},
		{"inotify no-seccomp", append(run("--no-seccomp"), p, "inotify", outside, "k7"), "watching\nevent k7"},
		{"inotify confined", append(run(), p, "inotify", outside, "k8"), inDefault},
		{"inotify confined no-pid-namespace timeout", append(run("--no-pid-namespace", "--timeout", "1m"), p, "inotify", outside, "k9"), inotifyBroker},
		{"inotify confined no-namespaces timeout", append(run("--no-namespaces", "--timeout", "1m"), p, "inotify", outside, "k10"), inotifyBroker},
		{"inotify confined no-namespaces in place", append(run("--no-namespaces"), p, "inotify", outside, "k11"), inotifyEPERM},
		{"inotify in the workspace", append(run(), p, "inotify", ws, "k5"), wsDefault},
		{"inotify in the workspace no-namespaces timeout", append(run("--no-namespaces", "--timeout", "1m"), p, "inotify", ws, "k12"), "watching\nevent k12"},
		// Red team R5: another user's 0700 directory inside the
		// workspace, which the confined root (capabilities dropped)
		// cannot list: the broker is refused as the child would be;
		// the unconfined root (CAP_DAC_READ_SEARCH) is not (control).
		{"inotify private unconfined", []string{p, "inotify", private, "k13"}, "watching\nevent k13"},
		{"inotify private no-pid-namespace timeout", append(run("--no-pid-namespace", "--timeout", "1m"), p, "inotify", private, "k14"), inotifyBroker},
		{"inotify private no-namespaces timeout", append(run("--no-namespaces", "--timeout", "1m"), p, "inotify", private, "k15"), inotifyBroker},
		// Red team R6: a relative path through /proc/self reached the
		// broker's (landjail's) own descriptors and directories; control:
		// the unconfined probe watches its working directory (the
		// workspace) through the magic link.
		{"inotify magic link unconfined", []string{p, "inotify", magic, "k16"}, "watching\nevent k16"},
		{"inotify magic link no-namespaces timeout", append(run("--no-namespaces", "--timeout", "1m"), p, "inotify", magic, "k17"), magicWant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := outside
			switch {
			case strings.Contains(tc.name, "workspace"), strings.Contains(tc.name, "magic"):
				dir = ws
			case strings.Contains(tc.name, "private"):
				dir = private
			}
			assert.Equal(t, tc.want, notifyRun(t, dir, tc.argv[len(tc.argv)-1], tc.argv...))
		})
	}
}

// TestRunTailFollow: `tail -f` inside the workspace, confined, sees a
// line the host appends: through the inotify broker in a supervised run,
// by polling where landjail execve's in place (--no-namespaces:
// inotify_add_watch refused with EPERM, tail falls back).
func TestRunTailFollow(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if _, err := osexec.LookPath("tail"); err != nil {
		t.Skip("no tail")
	}
	for _, flags := range [][]string{nil, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"run"}, flags...), " "), func(t *testing.T) {
			tailFollow(t, flags...)
		})
	}
}

func tailFollow(t *testing.T, flags ...string) {
	bin := landjailBin(t)
	ws := wsDir(t)
	log := filepath.Join(ws, "log")
	require.NoError(t, os.WriteFile(log, []byte("old\n"), 0o644))
	argv := append(append([]string{"run", "--workspace", ws}, flags...), "--", "tail", "-n", "0", "-f", log)
	cmd := osexec.Command(bin, argv...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	// Appended until seen: tail may set its watch after the first write.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l := <-got:
			assert.Equal(t, "new", l)
			return
		case <-tick.C:
			f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			f.WriteString("new\n")
			f.Close()
		case <-timeout:
			t.Fatal("tail -f printed nothing in 10 s")
		}
	}
}
