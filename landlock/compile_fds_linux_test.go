package landlock_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(ents) - 1 // the directory's own
}

// TestCompileClosesRuleFDs: Compile with the system preset (35-odd rules,
// each added through an O_PATH descriptor, closed together afterwards)
// holds one descriptor, the ruleset's, and Close releases it: none of the
// rules' descriptors is left open, with or without a deny pattern (carved
// rules). The first Compile with a carve opens the process's one root
// descriptor for no-follow opens (fsRoot, kept): a warm-up does that.
// Shown able to fail: without the closeKept after the rule loop, 30 more
// after Compile and after Close.
func TestCompileClosesRuleFDs(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	root := t.TempDir()
	require.NoError(t, os.WriteFile(root+"/.env", []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(root+"/a", []byte("x"), 0o600))
	warm, err := jail.New(root, jail.WithDeny(".env"))
	require.NoError(t, err)
	rs, err := landlock.Compile(warm, landlock.Options{System: true})
	require.NoError(t, err)
	require.NoError(t, rs.Close())
	warm.Close()
	for _, deny := range []bool{false, true} {
		var opts []jail.Option
		if deny {
			opts = append(opts, jail.WithDeny(".env"))
		}
		ws, err := jail.New(root, opts...)
		require.NoError(t, err)
		before := openFDs(t)
		rs, err := landlock.Compile(ws, landlock.Options{System: true})
		require.NoError(t, err)
		require.Greater(t, len(rs.Report().Rules), 20, "the system preset's rules")
		assert.Equal(t, before+1, openFDs(t), "deny=%v: only the ruleset's descriptor is open after Compile", deny)
		require.NoError(t, rs.Close())
		assert.Equal(t, before, openFDs(t), "deny=%v: nothing left after Close", deny)
		ws.Close()
	}
}
