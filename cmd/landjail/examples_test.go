package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpExamples: landjail --help and landjail run --help end with an
// EXAMPLES section (checked red: there was none), and every example
// works: a run's flags parse and its policy compiles (--print-rules added,
// so nothing runs), doctor and gc --dry-run exit 0. No flag line of any
// command's help states two defaults.
func TestHelpExamples(t *testing.T) {
	t.Chdir(wsDir(t))
	t.Setenv("TMPDIR", wsDir(t)) // gc --dry-run: not the machine's /tmp
	var examples []string
	for _, args := range [][]string{{"--help"}, {"run", "--help"}} {
		code, out, _ := runCLI(t, args...)
		require.Equal(t, 0, code)
		_, ex, ok := strings.Cut(out, "EXAMPLES:\n")
		require.True(t, ok, "%q has no EXAMPLES section", args)
		ex, _, _ = strings.Cut(ex, "\n\n")
		n := 0
		for _, line := range strings.Split(ex, "\n") {
			cmdline, _, _ := strings.Cut(line, "#")
			if f := strings.Fields(cmdline); len(f) > 0 {
				require.Equal(t, "landjail", f[0], line)
				examples = append(examples, strings.Join(f[1:], " "))
				n++
			}
		}
		assert.GreaterOrEqual(t, n, 5, "%q", args)
	}
	for _, ex := range examples {
		args := strings.Fields(ex)
		if args[0] == "run" {
			args = append([]string{"run", "--print-rules"}, args[1:]...)
		}
		code, _, stderr := runCLI(t, args...)
		assert.Equal(t, 0, code, "%s: %s", ex, stderr)
	}
	for _, c := range []string{"run", "resolve", "doctor", "gc"} {
		_, out, _ := runCLI(t, c, "--help")
		for _, line := range strings.Split(out, "\n") {
			assert.LessOrEqual(t, strings.Count(line, "(default"), 1, "%s: two defaults in %q", c, line)
		}
	}
}

// TestNoInstallFromProxy: the module is not published on the Go module
// proxy, so no help text tells users to "go install ...@latest" (it
// fails: 403 from proxy.golang.org); they install from a checkout.
// Checked red: landjail mcp --help said it.
func TestNoInstallFromProxy(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"mcp", "--help"}, {"gc", "--help"}} {
		_, out, stderr := runCLI(t, args...)
		assert.NotContains(t, out+stderr, "@latest", "%q", args)
	}
}
