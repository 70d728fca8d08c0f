package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGCSparesLiveRun: landjail gc never removes the private HOME and
// TMPDIR of a run still going, however old they look: one that execve'd
// the command (the marker names the PID the command kept) and one that
// supervises it. Control: once the runs are gone, the same gc removes
// both.
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
		{"supervised", []string{"--timeout", "1m"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			args := append(append([]string{"run"}, mode.args...), "--workspace", ws, "--", "sleep", "60")
			run := osexec.Command(bin, underEmulation(args)...)
			run.Env = env
			var out strings.Builder
			run.Stdout, run.Stderr = &out, &out
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
			assert.Nil(t, run.ProcessState, "the run is still going: %s", out.String())

			// Control: the run gone, the same gc removes them.
			run.Process.Kill()
			run.Wait()
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
