package cliopts

import (
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShellVariablePatternFlag (red team round 17, R17a-8): a --deny or
// --read-only pattern spelled with a shell variable is refused in the
// command line's words, naming the variable; control: the written path
// is taken.
func TestShellVariablePatternFlag(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, c := range [][]string{{"--deny", "$HOME/x"}, {"--read-only", "${PWD}/deploy/"}} {
		_, err := mustLoadRun(t, "--workspace", ws, c[0], c[1]).Policy()
		assert.ErrorIs(t, err, path.ErrBadPattern, c)
		assert.ErrorContains(t, err, c[0]+" \""+c[1]+"\": invalid pattern: ", c)
		assert.ErrorContains(t, err, "is shell or environment syntax, which landjail does not expand", c)
	}
	w, err := mustLoadRun(t, "--workspace", ws, "--deny", ws+"/x").Policy()
	require.NoError(t, err, "control")
	w.Close()
}
