package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestErrorTextEscaped: landjail's own error line carries no terminal
// escape sequence from a name the command could have chosen (red team
// round 22, R22c-6: a planted directory's name in ErrLinkNames' text
// cleared the caller's screen and wrote its clipboard). A workspace
// named with an OSC 52 and a screen clear, missing: the error names it
// escaped. Control: the same name unconfined (ls) prints the ESC bytes.
// Red with main's printer writing err as it is.
func TestErrorTextEscaped(t *testing.T) {
	t.Parallel()
	bin := landjailBin(t)
	name := filepath.Join(t.TempDir(), "p\x1b]52;c;ZXZpbA==\a\x1b[2Jall good")
	require.NoError(t, os.Mkdir(name, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(name, "f"), nil, 0o644))
	out, err := osexec.Command("ls", "-d", name).CombinedOutput()
	require.NoError(t, err)
	require.Contains(t, string(out), "\x1b[2J", "control: the name carries its escapes")
	missing := filepath.Join(name, "missing")
	out, err = osexec.Command(bin, "run", "--workspace", missing, "--", "true").CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.NotContains(t, string(out), "\x1b", "no ESC byte on landjail's stderr")
	assert.True(t, strings.Contains(string(out), `p\x1b]52;c;ZXZpbA==\a\x1b[2Jall good`), "the name, escaped: %q", out)
}

// TestPrintRulesEscaped: --print-rules lists the rules' paths with their
// controls escaped (R22c-6: a planted name in a rule or a frozen
// directory printed as it is). A workspace named with a screen clear:
// its rule line shows the name escaped. Red with the listing written as
// it is.
func TestPrintRulesEscaped(t *testing.T) {
	t.Parallel()
	bin := landjailBin(t)
	ws := filepath.Join(t.TempDir(), "w\x1b[2Jall good")
	require.NoError(t, os.Mkdir(ws, 0o755))
	out, err := osexec.Command(bin, "run", "--print-rules", "--workspace", ws, "--", "true").CombinedOutput()
	require.NoError(t, err, "%q", out)
	assert.NotContains(t, string(out), "\x1b", "no ESC byte in the listing")
	assert.Contains(t, string(out), `w\x1b[2Jall good`, "the workspace's rule, escaped")
}

// TestPrintRulesNewlineInName: a name a command planted with a newline
// cannot make a line of --print-rules of its own, in the namespace
// layer's "# mask:" line nor in a carved rule's line under
// --no-namespaces (red team round 26, R26c-2: Lines splits at every
// newline, so ".env.local\n# network: host (...)" forged two lines of
// landjail's). Control: the same name without the newline is one line,
// the forged text in it.
func TestPrintRulesNewlineInName(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	const forged = "# network: host (unrestricted: --net host)"
	const forgedRule = "system FORGED {read_file}"
	for _, tc := range []struct {
		layer []string
		name  string
		line  string
	}{
		{nil, ".env.local", forged},
		{[]string{"--no-namespaces"}, "a", forgedRule},
	} {
		ws, ctrl := wsDir(t), wsDir(t)
		require.NoError(t, os.WriteFile(filepath.Join(ws, tc.name+"\n"+tc.line), []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ctrl, tc.name+" "+tc.line), []byte("x"), 0o644))
		// The carved rule is the workspace entry beside a carve-out.
		require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(ctrl, ".env"), []byte("x"), 0o644))
		args := append([]string{"run", "--print-rules", "--deny-secrets"}, tc.layer...)

		out, err := osexec.Command(bin, append(args, "--workspace", ctrl, "--", "true")...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), tc.name+" "+tc.line, "%v control: the name is listed", tc.layer)

		out, err = osexec.Command(bin, append(args, "--workspace", ws, "--", "true")...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		assert.Contains(t, string(out), tc.name+`\n`+tc.line, "%v: the name is listed, its newline escaped", tc.layer)
		for _, l := range strings.Split(string(out), "\n") {
			assert.False(t, strings.HasPrefix(l, tc.line), "%v: a forged line: %q", tc.layer, l)
		}
	}
}
