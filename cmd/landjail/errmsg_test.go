package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goErrors are fragments of Go's own error texts that reached users in
// the first-hour trial: landjail says the same in a shell's words.
var goErrors = []string{"exec: \"", "executable file not found in $PATH", "fork/exec", "flag provided but not defined", "cmdcheck:", "execve "}

func assertNoGoErrors(t *testing.T, out string) {
	t.Helper()
	for _, s := range goErrors {
		assert.NotContains(t, out, s, "Go's wording reaches the user")
	}
}

// TestUnknownOption: an option landjail does not know is named as the
// user wrote it, with the help to read, exit 125 (checked red: "run:
// flag provided but not defined: -bogus"). It also pins urfave/cli's
// wording that unknownOption recognises.
func TestUnknownOption(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--bogus", "--", "true"}, "landjail: unknown option --bogus (see landjail run --help)\n"},
		{[]string{"run", "-x", "--", "true"}, "landjail: unknown option -x (see landjail run --help)\n"},
		{[]string{"--bogus"}, "landjail: unknown option --bogus (see landjail --help)\n"},
		{[]string{"doctor", "--bogus=1"}, "landjail: unknown option --bogus (see landjail doctor --help)\n"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Empty(t, stdout)
		assert.Equal(t, tc.want, stderr, "%q", tc.args)
	}
	// A value its flag's type refuses, in the same terms (checked red:
	// `run: invalid value "x" for flag -connect-tcp: strconv.ParseInt:
	// parsing "x": invalid syntax`).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--connect-tcp", "x", "--", "true"}, `landjail: invalid value "x" for --connect-tcp: not a number (see landjail run --help)` + "\n"},
		{[]string{"run", "--connect-tcp", "99999999999999999999", "--", "true"}, `landjail: invalid value "99999999999999999999" for --connect-tcp: out of range (see landjail run --help)` + "\n"},
		{[]string{"run", "--timeout", "soon", "--", "true"}, `landjail: invalid value "soon" for --timeout: not a duration (examples: 90s, 10m, 1h30m) (see landjail run --help)` + "\n"},
		{[]string{"gc", "--older-than", "x"}, `landjail: invalid value "x" for --older-than: not a duration (examples: 90s, 10m, 1h30m) (see landjail gc --help)` + "\n"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		assert.Equal(t, exitUsage, code, "%q", tc.args)
		assert.Equal(t, tc.want, stderr, "%q", tc.args)
	}
	// A flag that needs a value keeps the library's message.
	code, _, stderr := runCLI(t, "run", "--timeout")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--timeout")
}

// TestPathCheckRefusalWording: without Landlock (an outer seccomp filter
// takes it away, as a container profile would) the path check's refusal
// says which argument and why, with no package name (checked red:
// "cmdcheck: refusing command: argument 1 ...").
func TestPathCheckRefusalWording(t *testing.T) {
	bin := landjailBin(t)
	outer := buildCLI(t, "../../internal/kerneltest/outer")
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "f"), nil, 0o644))
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"cat", "/etc/hostname"}, `landjail: refusing the command: argument 1 "/etc/hostname" is outside the workspace and every --ro/--rox/--rw root. Without a usable Landlock`},
		{[]string{"sh", "-c", "cat $X"}, `landjail: refusing the command: argument 2 "$X" cannot be checked before the command runs (`},
	} {
		code, out := runBin(t, outer, nil, append([]string{"-spec", "landlock=ENOSYS", "--", bin, "run", "--no-namespaces", "--workspace", ws, "--"}, tc.argv...)...)
		assert.Equal(t, exitCannotExec, code, out)
		assert.Contains(t, out, tc.want)
		assertNoGoErrors(t, out)
	}
	// Control: a path inside the workspace runs.
	code, out := runBin(t, outer, nil, "-spec", "landlock=ENOSYS", "--", bin, "run", "--no-namespaces", "--workspace", ws, "--", "cat", filepath.Join(ws, "f"))
	assert.Equal(t, 0, code, out)
	assert.False(t, strings.Contains(out, "refusing"), out)
}
