package main

import (
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGCSparesLiveRun: landjail gc never removes the private HOME and
// TMPDIR of a run still going, however old they look: one that execve'd
// the command (the marker names the PID the command kept) and one that
// supervises it, without the namespace layer too. Control: once the
// runs are gone, the same gc removes both.
func TestGCSparesLiveRun(t *testing.T) {
	bin := landjailBin(t)
	base := wsDir(t)
	cache, tmp, ws := filepath.Join(base, "cache"), filepath.Join(base, "tmp"), filepath.Join(base, "ws")
	for _, d := range []string{cache, tmp, ws} {
		require.NoError(t, os.Mkdir(d, 0o700))
	}
	env := append(os.Environ(), "XDG_CACHE_HOME="+cache, "TMPDIR="+tmp)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"execve", []string{"--no-pid-namespace"}},
		// The marker written by the limits goroutine (limits.Then), the
		// process started as a root run without the view (selfproc).
		{"execve, no namespaces", []string{"--no-namespaces"}},
		{"supervised", []string{"--timeout", "1m"}},
		// A PID namespace: the marker written after the command's
		// start (sandbox.Settings.RecordAfterStart).
		{"supervised, default", nil},
	} {
		t.Run(mode.name, func(t *testing.T) {
			// A duration of its own, to find the command by (killAll):
			// SIGKILLed, a supervised landjail leaves it running where
			// no PID namespace or group ends it (LANDJAIL_EMULATE=all=EPERM).
			dur := fmt.Sprintf("60.%06d", time.Now().Nanosecond()/1000)
			args := append(append([]string{"run"}, mode.args...), "--workspace", ws, "--", "sleep", dur)
			run := osexec.Command(bin, underEmulation(args)...)
			run.Env = env
			// A file, not a pipe: a supervised run's command, left
			// behind by the SIGKILL below, would hold a pipe open and
			// Wait with it for the whole sleep.
			outFile, err := os.Create(filepath.Join(t.TempDir(), "out"))
			require.NoError(t, err)
			defer outFile.Close()
			run.Stdout, run.Stderr = outFile, outFile
			out := func() string { b, _ := os.ReadFile(outFile.Name()); return string(b) }
			require.NoError(t, run.Start())
			defer func() { run.Process.Kill(); run.Wait() }()
			home := waitGlob(t, filepath.Join(cache, "landjail", "home", "*"))
			runTmp := waitGlob(t, filepath.Join(tmp, "landjail-*"))
			waitGlob(t, filepath.Join(cache, "landjail", "live", "[0-9]*"))
			for _, d := range []string{home, runTmp} {
				old := time.Now().Add(-48 * time.Hour)
				require.NoError(t, os.Chtimes(d, old, old))
			}
			code, gcOut := runBinEnv(t, bin, env, "gc", "--older-than", "1h", "--verbose")
			require.Equal(t, 0, code, gcOut)
			assert.Contains(t, gcOut, "in use by pid ")
			assert.Contains(t, gcOut, "removed 0 directories")
			assert.DirExists(t, home, "a live run's HOME")
			assert.DirExists(t, runTmp, "a live run's TMPDIR")
			assert.Nil(t, run.ProcessState, "the run is still going: %s", out())

			// Control: the run gone, the same gc removes them.
			run.Process.Kill()
			run.Wait()
			killAll(t, "sleep\x00"+dur+"\x00")
			for _, d := range []string{home, runTmp} {
				if _, err := os.Stat(d); err == nil { // a supervised run removes its per-run TMPDIR itself
					old := time.Now().Add(-48 * time.Hour)
					require.NoError(t, os.Chtimes(d, old, old))
				}
			}
			code, gcOut = runBinEnv(t, bin, env, "gc", "--older-than", "1h")
			require.Equal(t, 0, code, gcOut)
			assert.NoDirExists(t, home, gcOut)
			assert.NoDirExists(t, runTmp, gcOut)
		})
	}
}

// killAll sends SIGKILL to every process whose /proc/PID/cmdline is
// cmdline and waits until none is left.
func killAll(t *testing.T, cmdline string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ents, err := os.ReadDir("/proc")
		require.NoError(t, err)
		found := false
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && string(b) == cmdline {
				found = true
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if !found {
			return
		}
	}
	t.Fatalf("%q still runs", cmdline)
}

// waitGlob waits (up to 20 s) until pattern matches exactly one name.
func waitGlob(t *testing.T, pattern string) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m, _ := filepath.Glob(pattern); len(m) == 1 {
			return m[0]
		}
	}
	t.Fatalf("nothing (or more than one) matches %s", pattern)
	return ""
}

// runBinEnv runs bin with args (no emulation adaptation) in env and
// returns its exit code and combined output.
func runBinEnv(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	c := osexec.Command(bin, args...)
	c.Env = env
	out, err := c.CombinedOutput()
	if ee, ok := err.(*osexec.ExitError); ok {
		return ee.ExitCode(), string(out)
	}
	require.NoError(t, err)
	return 0, string(out)
}

// TestGCUnprivilegedReadOnlyTree: a user's gc removes a private HOME
// holding directories without write permission (Go's module cache is
// 0555 throughout), which only root could remove as they were (checked
// red: "permission denied", the HOME left in place), and still follows
// no link: a link to a read-only directory of that user stays unchanged.
func TestGCUnprivilegedReadOnlyTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
	// A directory uid 65534 can reach (t.TempDir's parent is 0700), with
	// a copy of the binary.
	base, err := os.MkdirTemp("", "landjail-gc-unpriv-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	base, err = filepath.EvalSymlinks(base)
	require.NoError(t, err)
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	bin := filepath.Join(base, "landjail")
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	cache, tmp := filepath.Join(base, "cache"), filepath.Join(base, "tmp")
	home := filepath.Join(cache, "landjail", "home", "0123456789abcdef")
	mod := filepath.Join(home, "go", "pkg", "mod", "example.com", "m@v1.0.0")
	require.NoError(t, os.MkdirAll(mod, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n"), 0o444))
	other := filepath.Join(base, "other") // the user's own read-only directory, outside
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "keep"), nil, 0o444))
	require.NoError(t, os.Symlink(other, filepath.Join(home, "link")))
	require.NoError(t, os.Mkdir(tmp, 0o700))
	require.NoError(t, filepath.WalkDir(base, func(p string, _ fs.DirEntry, err error) error {
		require.NoError(t, err)
		if p == base || p == bin {
			return nil
		}
		return os.Lchown(p, 65534, 65534)
	}))
	for _, d := range []string{filepath.Dir(mod), mod, filepath.Join(home, "go", "pkg", "mod"), other} {
		require.NoError(t, os.Chmod(d, 0o555))
	}
	past := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(home, past, past))

	c := osexec.Command(bin, "gc", "--older-than", "1h")
	c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + base, "XDG_CACHE_HOME=" + cache, "TMPDIR=" + tmp}
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "removed: "+home, "%s", out)
	assert.NoDirExists(t, home)
	fi, err := os.Stat(other)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o555), fi.Mode().Perm(), "the link's target was changed")
	assert.FileExists(t, filepath.Join(other, "keep"))
}

// TestRunLeavesChosenHomeTimes: the live marker marks landjail's own
// directories used (their modification time), never a HOME the user
// chose: --home workspace must not touch the project's root (checked
// red: its mtime moved to the run's start).
func TestRunLeavesChosenHomeTimes(t *testing.T) {
	ws := wsDir(t)
	past := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(ws, past, past))
	code, _, stderr := runCLI(t, "run", "--timeout", "1m", "--workspace", ws, "--home", "workspace", "--", "true")
	require.Equal(t, 0, code, stderr)
	fi, err := os.Stat(ws)
	require.NoError(t, err)
	assert.True(t, fi.ModTime().Equal(past), "the workspace's mtime changed: %s", fi.ModTime())
}
