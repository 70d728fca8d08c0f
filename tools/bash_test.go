package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/cmdcheck"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// withRuleset compiles e's policy with the system preset.
func withRuleset(t *testing.T, e *env) *landlock.Ruleset {
	t.Helper()
	rs, err := landlock.Compile(e.ws, landlock.Options{System: true})
	require.NoError(t, err)
	t.Cleanup(func() { rs.Close() })
	e.k.Ruleset = rs
	return rs
}

func TestBash(t *testing.T) {
	e := newEnv(t, []string{"f=hello\n"})
	withRuleset(t, e)
	ctx := context.Background()

	r, err := e.k.Bash(ctx, tools.BashArgs{Command: "pwd; cat f; echo err >&2; exit 3"})
	require.NoError(t, err)
	assert.Equal(t, e.root+"\nhello\nerr\n", r.Output)
	assert.Equal(t, 3, r.ExitCode)
	assert.False(t, r.Truncated)
	assert.True(t, strings.HasSuffix(r.String(), "[exit code 3]"), r.String())

	r, err = e.k.Bash(ctx, tools.BashArgs{Command: "true"})
	require.NoError(t, err)
	assert.Contains(t, r.String(), "(no output)\n[exit code 0]")

	e.k.Limits.BashOutput = 100
	r, err = e.k.Bash(ctx, tools.BashArgs{Command: "seq 1 1000 | sed s/^/line/"})
	require.NoError(t, err)
	assert.True(t, r.Truncated)
	assert.EqualValues(t, 7893, r.OutputBytes)
	assert.True(t, strings.HasPrefix(r.Output, "line1\nline2\n"), r.Output)
	assert.True(t, strings.HasSuffix(r.Output, "line1000\n"), r.Output)
	assert.Contains(t, r.Output, "bytes omitted")
	assert.Contains(t, r.String(), "[output truncated: 7893 bytes in all]")

	_, err = e.k.Bash(ctx, tools.BashArgs{Command: " "})
	assertToolErr(t, err, tools.ErrInvalidArgs)
	_, err = e.k.Bash(ctx, tools.BashArgs{Command: "true", Timeout: 100000})
	assertToolErr(t, err, tools.ErrInvalidArgs, "timeout")
}

func TestBashTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	e := newEnv(t, nil)
	withRuleset(t, e)
	start := time.Now()
	r, err := e.k.Bash(context.Background(), tools.BashArgs{Command: "echo started; sleep 30", Timeout: 1})
	require.NoError(t, err)
	assert.True(t, r.TimedOut)
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, 128+15, r.ExitCode, "SIGTERM")
	assert.Contains(t, r.String(), "started\n[timed out after")
}

// TestBashConfined: the shell cannot do what the file tools refuse.
func TestBashConfined(t *testing.T) {
	e := newEnv(t, []string{"out => $OUT"})
	rs := withRuleset(t, e)
	ctx := context.Background()
	if rs.Enforced() {
		for _, cmd := range []string{
			"cat /etc/shadow",
			"cat " + e.out + "/secret",
			"cat out/secret",
			"echo pwned > " + e.out + "/pwn",
			"cat ../out/secret",
			"cp ../out/secret stolen",
		} {
			r, err := e.k.Bash(ctx, tools.BashArgs{Command: cmd})
			require.NoError(t, err, cmd)
			assert.NotEqual(t, 0, r.ExitCode, "%s: %s", cmd, r.Output)
			assert.NotContains(t, r.Output, "SECRET", cmd)
			assert.Contains(t, r.Output, "Permission denied", cmd)
			assert.NotContains(t, r.String(), "does not enforce")
		}
		assert.NoFileExists(t, filepath.Join(e.out, "pwn"))
		r, err := e.k.Bash(ctx, tools.BashArgs{Command: "echo ok > inside && cat inside"})
		require.NoError(t, err)
		assert.Equal(t, "ok\n", r.Output)
	} else {
		kerneltest.RequireLandlockABI(t, 1) // skips or fails, saying why
	}
}

// TestBashPathCheckOnly: without Landlock (emulated away in a
// subprocess) the command's paths are checked before it starts, and the
// result says the running command is not confined.
func TestBashPathCheckOnly(t *testing.T) {
	if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"=landlock=ENOSYS") {
		return
	}
	e := newEnv(t, nil)
	rs := withRuleset(t, e)
	require.Equal(t, landlock.LevelPathCheck, rs.Report().Level)
	ctx := context.Background()
	r, err := e.k.Bash(ctx, tools.BashArgs{Command: "echo hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi\n", r.Output)
	assert.Equal(t, landlock.LevelPathCheck, r.Confinement)
	assert.Contains(t, r.String(), "does not enforce the sandbox here")

	_, err = e.k.Bash(ctx, tools.BashArgs{Command: "cat " + e.out + "/secret"})
	assertToolErr(t, err, jail.ErrOutsideWorkspace, "bash: refused")
	_, err = e.k.Bash(ctx, tools.BashArgs{Command: "echo $(cat /etc/shadow)"})
	assertToolErr(t, err, cmdcheck.ErrUnverifiable, "cannot confine the shell")
	_, err = e.k.Bash(ctx, tools.BashArgs{Command: "echo pwned > ../out/pwn"})
	assertToolErr(t, err, jail.ErrOutsideWorkspace, "bash: refused")
	_, err = os.Stat(filepath.Join(e.out, "pwn"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestBashCarveOutsFollowTheTree: carve-outs are computed when a Ruleset
// is compiled. With one Ruleset compiled when the server starts, a secret
// created later (sub/.env under a ".env" deny pattern) was readable by
// bash while read_file refused it (red-team finding). With
// Toolkit.Compile each call gets carve-outs for the tree as it is then.
// The control is the same call with the start-time Ruleset only.
func TestBashCarveOutsFollowTheTree(t *testing.T) {
	const marker = "LATE-SECRET-4d1c"
	e := newEnv(t, []string{"sub/main.go=package sub\n"}, jail.WithDeny(".env"))
	rs := withRuleset(t, e)
	if !rs.Enforced() {
		kerneltest.RequireLandlockABI(t, 1)
		return
	}
	ctx := context.Background()
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "sub", ".env"), []byte(marker+"\n"), 0o644))
	_, err := e.k.ReadFile(tools.ReadFileArgs{Path: "sub/.env"})
	require.ErrorIs(t, err, jail.ErrDenied, "the userspace layer refuses it")

	// Control: the start-time Ruleset did not carve the new file.
	r, err := e.k.Bash(ctx, tools.BashArgs{Command: "cat sub/.env"})
	require.NoError(t, err)
	require.Contains(t, r.Output, marker, "control: a start-time Ruleset leaves a later secret readable")

	e.k.Compile = func() (*landlock.Ruleset, error) { return landlock.Compile(e.ws, landlock.Options{System: true}) }
	r, err = e.k.Bash(ctx, tools.BashArgs{Command: "cat sub/.env; cat sub/main.go"})
	require.NoError(t, err)
	assert.NotContains(t, r.Output, marker)
	assert.Contains(t, r.Output, "Permission denied")
	assert.Contains(t, r.Output, "package sub", "the sibling stays readable")
}

// TestBashConcurrent: at most Limits.BashConcurrent bash calls of one
// Workspace run at once; the others wait for a slot (and give up with
// their context). The control, a larger cap on another Workspace, shows
// the same calls do overlap when allowed to.
func TestBashConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs batches of sleeps")
	}
	peak := func(t *testing.T, limit, calls int) int {
		// A script, so the command also passes the static check of the
		// path-check mode (no Landlock: $$ in the command is refused).
		e := newEnv(t, []string{"live/", "probe.sh=mkdir live/$$ && ls live | wc -l > peak.$$; sleep 0.4; rmdir live/$$\n"})
		withRuleset(t, e)
		e.k.Limits.BashConcurrent = limit
		var wg sync.WaitGroup
		for range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := e.k.Bash(context.Background(), tools.BashArgs{Command: "sh probe.sh"})
				if assert.NoError(t, err) {
					assert.Equal(t, 0, r.ExitCode, r.Output)
				}
			}()
		}
		wg.Wait()
		files, err := filepath.Glob(filepath.Join(e.root, "peak.*"))
		require.NoError(t, err)
		require.Len(t, files, calls)
		most := 0
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			most = max(most, n)
		}
		return most
	}
	assert.LessOrEqual(t, peak(t, 2, 6), 2, "more than BashConcurrent calls ran at once")
	assert.Greater(t, peak(t, 10, 6), 2, "control: without a tight cap the calls overlap")

	e := newEnv(t, nil)
	withRuleset(t, e)
	e.k.Limits.BashConcurrent = 1
	held := make(chan struct{})
	go func() {
		defer close(held)
		_, err := e.k.Bash(context.Background(), tools.BashArgs{Command: "sleep 1"})
		assert.NoError(t, err)
	}()
	time.Sleep(200 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := e.k.Bash(ctx, tools.BashArgs{Command: "true"})
	assert.ErrorIs(t, err, context.DeadlineExceeded, "a call waiting for a slot gives up with its context")
	<-held
}
