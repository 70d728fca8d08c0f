package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
)

// landjailBin returns the CLI built once per test binary (buildCLI).
func landjailBin(t *testing.T) string {
	t.Helper()
	return buildCLI(t, ".")
}

// wsDir returns a canonical temporary workspace.
func wsDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// TestRunExitCodes runs the built binary without --timeout (landjail
// execve's the command) and with --timeout (supervised, in-process too),
// and checks that both map statuses the same way.
func TestRunExitCodes(t *testing.T) {
	bin := landjailBin(t)
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "noexec"), []byte("#!/bin/sh\n"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(ws, "adir"), 0o755))
	cases := []struct {
		name string
		argv []string
		want int
		msg  string
		// noLandlock is the status in path-check-only mode when it
		// differs: a script with $$ cannot be verified, so it is refused.
		noLandlock int
	}{
		{"success", []string{"true"}, 0, "", 0},
		{"child status", []string{"sh", "-c", "exit 3"}, 3, "", 0},
		{"status 124", []string{"sh", "-c", "exit 124"}, 124, "", 0},
		{"killed by SIGKILL", []string{"sh", "-c", "kill -KILL $$"}, 128 + 9, "", 126},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, "", 126},
		{"not found", []string{"no-such-command-xyz"}, 127, "landjail: no-such-command-xyz: command not found (PATH searched: /", 0},
		{"missing path", []string{"./missing"}, 127, "landjail: cannot execute ./missing: no such file or directory", 0},
		{"not executable", []string{"./noexec"}, 126, "landjail: cannot execute ./noexec: permission denied; check that it is executable (chmod +x)", 0},
		{"directory", []string{"./adir"}, 126, "landjail: cannot execute ./adir: ", 0},
	}
	for _, tc := range cases {
		if tc.noLandlock != 0 && kerneltestABI() == 0 {
			tc.want = tc.noLandlock
		}
		t.Run("exec/"+tc.name, func(t *testing.T) {
			code, out := runBin(t, bin, nil, append([]string{"run", "--workspace", ws, "--"}, tc.argv...)...)
			assert.Equal(t, tc.want, code, out)
			assert.Contains(t, out, tc.msg)
			assertNoGoErrors(t, out)
		})
		t.Run("supervised/"+tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"run", "--timeout", "1m", "--workspace", ws, "--"}, tc.argv...)...)
			assert.Equal(t, tc.want, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assertNoGoErrors(t, stderr)
		})
	}
}

// TestRunConfined: the execve'd command is confined (Landlock) and the
// supervised one too, while this test process stays unconfined.
func TestRunConfined(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	bin := landjailBin(t)
	// The emulation matrix's seccomp filter sets no_new_privs on the
	// whole test process; what must not change is its value.
	nnpBefore := readStatus(t, "NoNewPrivs")
	ws, outside := wsDir(t), wsDir(t)
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))

	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--", "cat", secret)
	assert.Equal(t, 1, code, out)
	assert.Regexp(t, refusedOrHidden, out)
	assert.NotContains(t, out, "s3cret")

	code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--ro", outside, "--", "cat", secret)
	assert.Equal(t, 0, code, "positive control: --ro grants it")
	assert.Equal(t, "s3cret", out)

	code, stdout, stderr := runCLI(t, "run", "--timeout", "1m", "--workspace", ws, "--", "sh", "-c", "echo in > f && cat f && cat "+secret)
	assert.Equal(t, 1, code)
	assert.Equal(t, "in\n", stdout)
	assert.Regexp(t, refusedOrHidden, stderr)

	// The parent is still unconfined.
	assert.Equal(t, nnpBefore, readStatus(t, "NoNewPrivs"))
	b, err := os.ReadFile(secret)
	require.NoError(t, err)
	assert.Equal(t, "s3cret", string(b))
}

func TestRunEnvAndHome(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1) // the path check refuses a script with $HOME
	ws := wsDir(t)
	t.Setenv("LANDJAIL_TEST_SECRET", "leak")
	t.Setenv("LANDJAIL_TEST_PASS", "passed")
	code, out, stderr := runCLI(t, "run", "--timeout", "1m", "--workspace", ws, "--home", "workspace",
		"--env", "LANDJAIL_TEST_PASS", "--env", "X=a,b", "--", "sh", "-c", `echo "$HOME|$LANDJAIL_TEST_SECRET|$LANDJAIL_TEST_PASS|$X|$PWD"`)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, ws+"||passed|a,b|"+ws+"\n", out)
}

func TestRunTimeout(t *testing.T) {
	ws := wsDir(t)
	code, _, stderr := runCLI(t, "run", "--timeout", "200ms", "--workspace", ws, "--", "sleep", "30")
	assert.Equal(t, 128+15, code)
	assert.Contains(t, stderr, "timed out after 200ms")
}

func TestRunReport(t *testing.T) {
	ws := wsDir(t)
	rep := filepath.Join(t.TempDir(), "report.json")
	code, _, stderr := runCLI(t, "run", "--report", rep, "--workspace", ws, "--connect-tcp", "443", "--", "sh", "-c", "exit 7")
	assert.Equal(t, 7, code, stderr)
	var got struct {
		Argv     []string `json:"argv"`
		ExitCode int      `json:"exit_code"`
		Report   struct {
			Level string `json:"level"`
			ABI   int    `json:"abi"`
		} `json:"report"`
		Seccomp []struct {
			Name   string `json:"name"`
			Reason string `json:"reason"`
		} `json:"seccomp"`
		Hygiene struct {
			Capabilities string   `json:"capabilities"`
			Environment  []string `json:"environment"`
		} `json:"hygiene"`
	}
	b, err := os.ReadFile(rep)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, 7, got.ExitCode)
	assert.Equal(t, []string{"sh", "-c", "exit 7"}, got.Argv)
	assert.NotEmpty(t, got.Report.Level)
	// Every layer is in the report: seccomp rules with their reasons,
	// capabilities, and the environment's names (never its values).
	require.NotEmpty(t, got.Seccomp)
	for _, r := range got.Seccomp {
		assert.NotEmpty(t, r.Reason, r.Name)
	}
	assert.Contains(t, got.Hygiene.Capabilities, "all dropped")
	assert.Contains(t, got.Hygiene.Environment, "PATH")
	assert.NotContains(t, string(b), os.Getenv("PATH"), "values are not reported")

	code, _, _ = runCLI(t, "run", "--report", rep, "--workspace", ws, "--", "no-such-command-xyz")
	assert.Equal(t, 127, code)
	b, err = os.ReadFile(rep)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"exit_code": 127`)
}

func TestRunPrintRules(t *testing.T) {
	ws := wsDir(t)
	ro := wsDir(t)
	code, out, stderr := runCLI(t, "run", "--print-rules", "--workspace", ws, "--ro", ro)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(lines[0], "workspace "+ws+" "), lines[0])
	assert.Contains(t, out, "ro "+ro+" {")
	assert.Contains(t, out, "system /usr ")

	code, out, _ = runCLI(t, "run", "--print-rules", "--no-system", "--workspace", ws)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "system ")
}

func TestRunStrict(t *testing.T) {
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("fine"), 0o644))
	if kerneltestABI() == 0 {
		// Without Landlock strict refuses to run at all.
		code, _, _ := runCLI(t, "run", "--strict", "--workspace", ws, "--timeout", "1m", "--", "true")
		assert.Equal(t, exitUsage, code)
		return
	}
	strict := []string{"run", "--strict"}
	layerErr := nsview.Probe()
	if layerErr != nil {
		// No namespace layer (ns=EPERM, as under Docker's default
		// profile): carving .env out would freeze the workspace root, so
		// --strict refuses, naming the way out and the reason; with
		// --no-namespaces the user accepts frozen directories.
		code, _, stderr := runCLIRaw(t, "run", "--strict", "--deny", ".env", "--workspace", ws, "--timeout", "1m", "--", "cat", "ok.txt")
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, "--no-namespaces")
		assert.Contains(t, stderr, layerErr.Error())
		strict = append(strict, "--no-namespaces")
	}
	// Deny patterns are carved out of the workspace for the child: strict
	// runs, the denied file stays unreadable, its siblings readable.
	code, stdout, stderr := runCLI(t, append(strict, "--deny", ".env", "--workspace", ws, "--timeout", "1m", "--", "cat", "ok.txt")...)
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, "fine", stdout)
	code, stdout, _ = runCLI(t, append(strict, "--deny", ".env", "--workspace", ws, "--timeout", "1m", "--", "cat", ".env")...)
	// Refused in every layer: Landlock's EACCES, or the namespace
	// layer's mask (mode 0000), never an empty read.
	assert.NotEqual(t, 0, code)
	assert.NotContains(t, stdout, "SECRET")

	// What cannot be carved is refused in strict mode, and dropped with
	// one line of warning in best effort, without the namespace layer
	// (with it, --no-carve keeps the masks: TestRunNoCarveKeepsMasks).
	code, _, stderr = runCLI(t, "run", "--strict", "--no-namespaces", "--no-carve", "--deny", ".env", "--workspace", ws, "--timeout", "1m", "--", "true")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "carve-outs")
	code, _, stderr = runCLI(t, "run", "--no-namespaces", "--no-carve", "--deny", ".env", "--workspace", ws, "--timeout", "1m", "--", "true")
	assert.Equal(t, 0, code)
	assert.Contains(t, stderr, "warning: --no-carve: deny patterns and read-only paths are NOT enforced for the command")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
}

// refusedOrHidden is how a confined child fails to read a file outside
// the policy: Landlock refuses it (EACCES), or, with the namespace layer,
// a file below the host's /tmp is not even there (private /tmp).
const refusedOrHidden = `Permission denied|No such file or directory`
