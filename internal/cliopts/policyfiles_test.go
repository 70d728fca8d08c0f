package cliopts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// TestPolicyFileRulesReadOnly (red team R6-2): a --config file that
// names itself in rw, under its own path, through a symbolic link or a
// hard link, gets a Landlock file rule without a write right (Landlock
// grants the union of a file's rules: the read-only carve-out of the
// config file could not take the write back under --no-namespaces); so
// does the --learn FILE named by --rw. The control: another file in the
// same list keeps its write right. Red before the fix: every rule
// granted write_file.
func TestPolicyFileRulesReadOnly(t *testing.T) {
	ws := t.TempDir()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f, other, learned := filepath.Join(dir, "policy.toml"), filepath.Join(dir, "other.txt"), filepath.Join(dir, "learned.toml")
	link, hard := filepath.Join(dir, "link.toml"), filepath.Join(dir, "hard.toml")
	require.NoError(t, os.WriteFile(other, []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(learned, []byte(""), 0o644))
	require.NoError(t, os.WriteFile(f, []byte(fmt.Sprintf("rw = [%q, %q, %q, %q]\n", f, link, hard, other)), 0o644))
	require.NoError(t, os.Symlink("policy.toml", link))
	require.NoError(t, os.Link(f, hard))

	write := func(o *Options) map[string]bool {
		got := map[string]bool{}
		for _, r := range o.LandlockOptions("").Extra {
			got[r.Path] = r.Access&landlock.RightsReadWriteFile&^landlock.RightsRead != 0
		}
		return got
	}
	o := mustLoadRun(t, "--workspace", ws, "--config", f)
	assert.Equal(t, map[string]bool{f: false, link: false, hard: false, other: true}, write(o))

	o = mustLoadRun(t, "--workspace", ws, "--rw", learned, "--rw", other, "--learn", learned)
	assert.Equal(t, map[string]bool{learned: false, other: true}, write(o))
	assert.Equal(t, []string{learned}, o.PolicyFiles())
}

// TestPolicyFileUnderRootSlash: a --config file that grants rw on "/"
// is read-only for the command like one in any other writable root (the
// check compared the file with "/"+"/" and missed it; red before: Check
// allowed the write). The control: another file under "/" is writable.
func TestPolicyFileUnderRootSlash(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	f, other := filepath.Join(dir, "policy.toml"), filepath.Join(dir, "other.txt")
	require.NoError(t, os.WriteFile(f, []byte("rw = [\"/\"]\n"), 0o644))
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	o := mustLoadRun(t, "--workspace", t.TempDir(), "--config", f)
	w, err := o.Policy()
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Check(f, jail.Write)
	assert.ErrorIs(t, err, jail.ErrReadOnly)
	_, err = w.Check(other, jail.Write)
	assert.NoError(t, err, "control: the rest of / is writable")
}
