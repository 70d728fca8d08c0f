package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/jail"
)

// TestMemoBoundsClassification: red team round 30, R30b-6. Each refusal
// built and walked a probe policy of its own, after the command, outside
// its --timeout and --cpus: 711 refused reads took 1 min 43 s. With a
// Memo a directory is probed once for all its refusals, the verdicts are
// the same (the deny pattern still by design, the control still
// learnable), and past MaxProbeDirs directories a refusal is not
// learned. Control: without a Memo, a probe per refusal.
func TestMemoBoundsClassification(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outside, ".env"), []byte("k"), 0o600))
	for i := range 20 {
		require.NoError(t, os.WriteFile(filepath.Join(outside, fmt.Sprintf("f%d", i)), nil, 0o644))
	}
	o := &cliopts.Options{Workspace: t.TempDir(), DenySecrets: true}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()
	probes := 0
	probe := func(dir string) (*jail.Workspace, error) {
		probes++
		return o.Policy(jail.WithAllowed(dir, jail.ReadOnly))
	}
	classify := func(c PolicyClassifier) {
		byDesign, _ := c.Classify(filepath.Join(outside, ".env"), Read)
		assert.Contains(t, byDesign, "deny pattern")
		for i := range 20 {
			byDesign, notLearnable := c.Classify(filepath.Join(outside, fmt.Sprintf("f%d", i)), Read)
			assert.Empty(t, byDesign+notLearnable, "f%d: learnable", i)
		}
	}
	classify(PolicyClassifier{WS: pw, Probe: probe})
	assert.Equal(t, 20, probes, "control: a probe per refusal without a Memo (.env refused by its name alone)")

	probes = 0
	memo := NewMemo()
	defer memo.Close()
	c := PolicyClassifier{WS: pw, Probe: probe, Memo: memo}
	classify(c)
	assert.Equal(t, 1, probes, "one probe for the directory")

	// The bound (MaxProbeDirs, lowered to 4 here) reached: the next
	// directory is not learned.
	memo.maxDirs = 4
	for i := range 3 {
		d := filepath.Join(outside, fmt.Sprintf("d%d", i))
		require.NoError(t, os.Mkdir(d, 0o755))
		_, notLearnable := c.Classify(filepath.Join(d, "x"), Read)
		assert.Empty(t, notLearnable, "d%d: within the bound", i)
	}
	require.Len(t, memo.dirs, 4)
	_, notLearnable := c.Classify(filepath.Join(outside, "d0", "sub", "y"), Read)
	assert.Contains(t, notLearnable, "not learned")
}

// TestClassificationThrottled: red team round 31, R31b-7. The probes a
// run's refusals cause (each a policy built and walked) and the listing
// of the policy's denied links run inside Throttle, the run's --cpus
// share, so that the work the command chose is charged to it. Control:
// the same classification without a Throttle gives the same verdicts.
func TestClassificationThrottled(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	other, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, d := range []string{outside, other} {
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"), nil, 0o644))
	}
	o := &cliopts.Options{Workspace: t.TempDir(), DenySecrets: true}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()
	probe := func(dir string) (*jail.Workspace, error) { return o.Policy(jail.WithAllowed(dir, jail.ReadOnly)) }
	verdicts := func(c PolicyClassifier) []string {
		var out []string
		for _, d := range []string{outside, other, outside} {
			byDesign, notLearnable := c.Classify(filepath.Join(d, "f"), Read)
			out = append(out, byDesign+notLearnable)
		}
		return out
	}
	memo := NewMemo()
	defer memo.Close()
	control := verdicts(PolicyClassifier{WS: pw, Probe: probe, Memo: memo})

	inside, throttled := 0, 0
	memo2 := NewMemo()
	defer memo2.Close()
	got := verdicts(PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) {
		if inside == 0 {
			t.Errorf("probe of %s outside the throttle", dir)
		}
		return probe(dir)
	}, Memo: memo2, Throttle: func(work func()) { throttled++; inside++; work(); inside-- }})
	assert.Equal(t, control, got, "the same verdicts")
	assert.Equal(t, 3, throttled, "two probes (one a directory) and the links' listing, each throttled")
}
