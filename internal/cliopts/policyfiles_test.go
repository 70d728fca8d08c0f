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

// TestPolicyFileThroughLink: a --config or --learn FILE whose path goes
// through a symbolic link in a root the command can write is refused:
// the file is read-only for the command, but the link is not, and the
// command pointed it at a policy of its own for the next run (red team
// round 25, R25b-2: deny_secrets = false and a --rw outside). A link to a
// directory on the way counts the same, and ".." after a link is taken
// from its target. Controls: the file's own path, and a link outside the
// writable roots (a HOME that is a link), are accepted.
func TestPolicyFileThroughLink(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf := filepath.Join(ws, "conf")
	require.NoError(t, os.MkdirAll(filepath.Join(conf, "sub"), 0o755))
	team := filepath.Join(conf, "team.toml")
	require.NoError(t, os.WriteFile(team, []byte("deny_secrets = true\n"), 0o644))
	require.NoError(t, os.Symlink("conf/team.toml", filepath.Join(ws, ".landjail.toml")))
	require.NoError(t, os.Symlink("conf", filepath.Join(ws, "cfg")))
	require.NoError(t, os.Symlink("conf/sub", filepath.Join(ws, "deep")))
	require.NoError(t, os.Symlink(ws, filepath.Join(outside, "wslink")))

	for _, c := range []struct {
		name, flag, path string
		refused          bool
	}{
		{"a link to the file", "--config", filepath.Join(ws, ".landjail.toml"), true},
		{"a link to its directory", "--config", filepath.Join(ws, "cfg", "team.toml"), true},
		{"a link, then ..", "--config", filepath.Join(ws, "deep") + "/../team.toml", true},
		{"--learn through a link", "--learn", filepath.Join(ws, "cfg", "learned.toml"), true},
		{"control: the file itself", "--config", team, false},
		{"control: a link outside the writable roots", "--config", filepath.Join(outside, "wslink", "conf", "team.toml"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := mustLoadRun(t, "--workspace", ws, c.flag, c.path)
			w, err := o.Policy()
			if !c.refused {
				require.NoError(t, err)
				w.Close()
				return
			}
			assert.ErrorContains(t, err, "goes through the symbolic link")
		})
	}
}

// TestPolicyFileHardLinked: a --config FILE with a second hard link in
// a root the command can write is refused (red team round 26, R26a-2:
// an earlier run planted cache/x, a hard link of the config, and the
// command rewrote the next run's policy through it; the file was
// read-only by its own name only). Controls: the same file with one
// link, and a hard-linked config outside the writable roots.
func TestPolicyFileHardLinked(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	conf := filepath.Join(ws, "lj.toml")
	require.NoError(t, os.WriteFile(conf, []byte("deny_secrets = true\n"), 0o644))
	o := mustLoadRun(t, "--workspace", ws, "--config", conf)
	w, err := o.Policy()
	require.NoError(t, err, "control: one link")
	w.Close()

	require.NoError(t, os.Link(conf, filepath.Join(ws, "x")))
	o = mustLoadRun(t, "--workspace", ws, "--config", conf)
	_, err = o.Policy()
	assert.ErrorContains(t, err, "has 2 hard links")

	out := filepath.Join(outside, "lj.toml")
	require.NoError(t, os.WriteFile(out, []byte("deny_secrets = true\n"), 0o644))
	require.NoError(t, os.Link(out, filepath.Join(outside, "y")))
	o = mustLoadRun(t, "--workspace", ws, "--config", out)
	w, err = o.Policy()
	require.NoError(t, err, "control: outside the writable roots")
	w.Close()
}
