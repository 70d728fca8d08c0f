package explain

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/jail"
)

// TestRelate: with a seccomp UDP refusal, the resolver's configuration
// reads point to the UDP fix; without one (the control: --net host, where
// --ro is the fix) they keep --ro.
func TestRelate(t *testing.T) {
	resolv := refusal.Refusal{Layer: refusal.Landlock, Path: "/etc/resolv.conf", Right: "read_file", Rule: "outside every allowed root", Flag: "--ro /etc/resolv.conf"}
	other := refusal.Refusal{Layer: refusal.Landlock, Path: "/etc/shadow", Right: "read_file", Flag: "--ro /etc/shadow"}
	udp := refusal.Refusal{Layer: refusal.Seccomp, Right: refusal.RightSocket, Rule: "seccomp inet-non-tcp: socket(AF_INET, SOCK_DGRAM, 0) (EPERM)", Flag: "--allow-domain HOST"}

	got := Relate([]refusal.Refusal{resolv, other})
	assert.Equal(t, "--ro /etc/resolv.conf", got[0].Flag, "control: no UDP refusal")

	got = Relate([]refusal.Refusal{resolv, other, udp})
	assert.Equal(t, "--allow-domain HOST (or --allow-dns and --ro /etc/resolv.conf)", got[0].Flag)
	assert.Equal(t, "--ro /etc/shadow", got[1].Flag)
}

// TestPathCheck: the fallback's refusal (a start error wrapping a jail
// sentinel) becomes a pathcheck record with its flag; another start error
// (the control: the program does not exist) is none.
func TestPathCheck(t *testing.T) {
	err := fmt.Errorf("exec: %w", &fs.PathError{Op: "check", Path: "/srv/data", Err: jail.ErrOutsideWorkspace})
	got := PathCheck(err)
	if assert.Len(t, got, 1) {
		assert.Equal(t, refusal.PathCheck, got[0].Layer)
		assert.Equal(t, "/srv/data", got[0].Path)
		assert.Contains(t, got[0].Flag, "--ro /srv/data")
	}
	got = PathCheck(&fs.PathError{Op: "check", Path: "/opt/go/bin/go", Err: jail.ErrNotExecutable})
	if assert.Len(t, got, 1) {
		assert.Equal(t, "--rox /opt/go", got[0].Flag)
	}
	assert.Nil(t, PathCheck(&fs.PathError{Op: "fork/exec", Path: "/nope", Err: fs.ErrNotExist}))
	assert.Nil(t, PathCheck(errors.New("other")))
}

// TestPrivateDirNotGrantable is red team round 26's R26e-8: a refusal in
// landjail's own private directories (another workspace's private HOME,
// the cache that holds every one) suggested "to allow: --rw" of it,
// which --learn refuses by design (R26c-5). Now the hint says it is not
// grantable. Control: the same refusals elsewhere keep their flag.
func TestPrivateDirNotGrantable(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	other := filepath.Join(cache, "landjail", "home", "002d8e84c9f6340f")
	require.NoError(t, os.MkdirAll(other, 0o700))
	plain := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.MkdirAll(plain, 0o755))
	ws, err := jail.New(t.TempDir())
	require.NoError(t, err)
	defer ws.Close()

	for _, c := range []struct {
		dir     string
		private bool
	}{{plain, false}, {other, true}, {filepath.Join(cache, "landjail"), true}} {
		xs := []refusal.Refusal{
			Landlock(ws, denials.Denial{Blockers: []string{"fs.make_reg"}, Path: filepath.Join(c.dir, "new"), Count: 1}),
			Landlock(ws, denials.Denial{Blockers: []string{"fs.read_file"}, Path: c.dir, Count: 1}),
		}
		xs = append(xs, PathCheck(&fs.PathError{Op: "check", Path: c.dir, Err: jail.ErrOutsideWorkspace})...)
		require.Len(t, xs, 3)
		for _, x := range xs {
			line := Line(x)
			if c.private {
				assert.Empty(t, x.Flag, line)
				assert.True(t, x.ByDesign, line)
				assert.NotContains(t, line, "to allow", line)
				assert.Contains(t, line, "private directories", line)
			} else {
				assert.Contains(t, x.Flag, " "+c.dir, "control: %s", line)
				assert.Contains(t, line, "to allow: --r", "control: %s", line)
			}
		}
	}
}

// TestSetIDProgramExplained: a refused write to a set-ID program under
// --protect-agent-config (red team round 31, R31a-5) is explained as
// such, with what lifts it (strip the bits), not "--rw" of the file,
// which does not. Control: a plain sibling refused by a --read-only
// path keeps the read-only rule and its --rw flag.
func TestSetIDProgramExplained(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	helper, plain := filepath.Join(root, "helper"), filepath.Join(root, "plain")
	require.NoError(t, os.WriteFile(helper, []byte("x"), 0o755))
	require.NoError(t, os.Chmod(helper, 0o755|os.ModeSetuid))
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o755))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig(), jail.WithReadOnly(plain))
	require.NoError(t, err)
	defer ws.Close()

	x := Landlock(ws, denials.Denial{Blockers: []string{"fs.write_file"}, Path: helper, Count: 1})
	assert.Contains(t, x.Rule, "set-user-ID", Line(x))
	assert.Contains(t, x.Flag, "chmod u-s,g-s", Line(x))
	assert.NotContains(t, x.Flag, "--rw", Line(x))

	x = Landlock(ws, denials.Denial{Blockers: []string{"fs.write_file"}, Path: plain, Count: 1})
	assert.Contains(t, x.Rule, "read-only: a --read-only path", "control: %s", Line(x))
	assert.Contains(t, x.Flag, "--rw "+plain, "control: %s", Line(x))
}
