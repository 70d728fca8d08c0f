package tools_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// TestBashNotesCapped is red team round 26's R26d-5: the lines landjail
// adds to a bash result (BashResult.Network: the --allow-domain proxy's
// refusals first, the limits' and the sweep's last) were outside the
// output cap: 1,024 refused 250-byte names the command chose added
// 310 KB to a result whose output is capped at 30 KB. Now they are held
// to Limits.BashNotes: the first and last lines kept, one line counting
// the rest, each line cut at 512 bytes. Control: a few short lines are
// all shown, unchanged.
func TestBashNotesCapped(t *testing.T) {
	e := newEnv(t, []string{"f=x\n"})
	withRuleset(t, e)
	var notes []string
	e.k.Network = func(*landlock.Ruleset, *exec.Cmd) (func() error, func() []string, error) {
		return func() error { return nil }, func() []string { return notes }, nil
	}
	run := func() *tools.BashResult {
		t.Helper()
		r, err := e.k.Bash(context.Background(), tools.BashArgs{Command: "true"})
		require.NoError(t, err)
		return r
	}

	notes = []string{"proxy refused a.test:443 1 time (not listed)", "quarantined .vscode/settings.json"}
	r := run()
	assert.Equal(t, notes, r.Network, "control: a few lines are all shown")
	assert.Contains(t, r.String(), "\n[landjail: quarantined .vscode/settings.json]")

	notes = nil
	for i := range 1024 {
		notes = append(notes, fmt.Sprintf("proxy refused %s%04d.test:443 1 time (not listed)", strings.Repeat("h", 240), i))
	}
	notes = append(notes, "bash: killed by the memory limit", strings.Repeat("q", 5000))
	r = run()
	text := r.String()
	t.Logf("%d notes -> %d bytes in the result", len(notes), len(text))
	assert.LessOrEqual(t, len(text), tools.DefaultLimits.BashNotes+100, "the notes are held to Limits.BashNotes")
	assert.Contains(t, text, "proxy refused "+strings.Repeat("h", 240)+"0000.test", "the first lines are kept")
	assert.Contains(t, text, "bash: killed by the memory limit", "the last lines are kept")
	assert.Contains(t, text, "more lines (")
	assert.Contains(t, text, "bytes cut]", "a long line is cut")
	assert.NotContains(t, text, strings.Repeat("q", 513))
}
