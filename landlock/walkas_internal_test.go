package landlock

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
)

// TestWalkAsCommand: as root, the pattern walk lists and reads as the
// command would (no capability; --user's uid when given). Another
// user's 0700 directory is carved whole and nothing below it is named;
// another user's 0600 files are all carved, key or not, unread; the
// files the command can read are told apart by content (the control).
// A root walk had listed the 0700 directory and read the files' heads:
// the masks named the keys there and the verdicts differed (red team
// round 30, R30d-6). With Credential 65534 the same tree turns round:
// its own directory is walked and root's 0600 files are unreadable.
func TestWalkAsCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (files of another user)")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	root := filepath.Join(base, "ws")
	key := "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
	mk := func(dir string, mode os.FileMode, uid int) {
		d := filepath.Join(root, dir)
		require.NoError(t, os.MkdirAll(d, 0o755))
		for name, content := range map[string]string{"notes.txt": key, "plain.txt": "hello\n"} {
			p := filepath.Join(d, name)
			require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
			require.NoError(t, os.Chown(p, uid, uid))
		}
		require.NoError(t, os.Chown(d, uid, uid))
		require.NoError(t, os.Chmod(d, mode))
	}
	mk("private", 0o700, 65534) // another user's closed directory
	mk("open", 0o755, 65534)    // another user's 0600 files, listable
	mk("own", 0o755, 0)         // root's own 0600 files
	// The command's own directory and files it made unreadable (chmod
	// 000): it may chmod them back, so they are examined as its other
	// files, and only a key is masked (red team round 31, R31d-3: masked
	// unread, a 0000 build product could no longer be removed).
	mk("ownclosed", 0o000, 0)
	mk("own0", 0o755, 0)
	for _, n := range []string{"notes.txt", "plain.txt"} {
		require.NoError(t, os.Chmod(filepath.Join(root, "own0", n), 0))
	}
	require.NoError(t, os.Chmod(root, 0o755))
	ws, err := jail.New(root, jail.WithDenyPrivateKeyHeaders())
	require.NoError(t, err)
	defer ws.Close()

	carved := func(cred *syscall.Credential) map[string]string {
		carves, err := collectCarves(ws, Options{Credential: cred}, []Rule{{Path: root}})
		require.NoError(t, err)
		out := map[string]string{}
		for _, c := range carves {
			out[strings.TrimPrefix(c.path, root+"/")] = c.source
		}
		return out
	}
	asRoot := carved(nil)
	assert.Equal(t, map[string]string{
		"private":             SourceUnlistable, // whole, unlisted
		"open/notes.txt":      SourcePrivateKey, // unreadable: both, unread
		"open/plain.txt":      SourcePrivateKey,
		"own/notes.txt":       SourcePrivateKey, // control: read, a key
		"ownclosed/notes.txt": SourcePrivateKey, // its own: listed and read
		"own0/notes.txt":      SourcePrivateKey,
	}, asRoot)

	// Links the command planted toward another user's closed
	// directory in a granted rule the walk does not walk (a preset's
	// GOROOT; red team round 31, R31d-1): by their names a denied target
	// and a private key would be carved, by existence and by content;
	// the command cannot follow them, so nothing there is named.
	goroot := filepath.Join(base, "goroot")
	alice := filepath.Join(goroot, "alice")
	require.NoError(t, os.MkdirAll(alice, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(alice, "keyfile"), []byte(key), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(alice, "plain"), []byte("x"), 0o644))
	require.NoError(t, os.Chown(alice, 65534, 65534))
	require.NoError(t, os.Chmod(alice, 0o700))
	links := map[string]string{".env.1": alice + "/plain", ".env.2": alice + "/guess", "id_k1": alice + "/keyfile"}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	sws, err := jail.New(root, jail.WithDenySecrets())
	require.NoError(t, err)
	defer sws.Close()
	viaLinks := func(cred *syscall.Credential) []string {
		carves, err := collectCarves(sws, Options{Credential: cred}, []Rule{{Path: root}}, Rule{Path: goroot, Access: RightsReadExec})
		require.NoError(t, err)
		var out []string
		for _, c := range carves {
			if strings.HasPrefix(c.path, goroot) {
				out = append(out, c.path)
			}
		}
		return out
	}
	assert.Empty(t, viaLinks(nil), "nothing in the closed directory is named")
	for name := range links {
		require.NoError(t, os.Remove(filepath.Join(root, name)))
	}

	as65534 := carved(&syscall.Credential{Uid: 65534, Gid: 65534})
	assert.Equal(t, map[string]string{
		"private/notes.txt": SourcePrivateKey, // its own: read
		"open/notes.txt":    SourcePrivateKey,
		"own/notes.txt":     SourcePrivateKey, // root's: unreadable
		"own/plain.txt":     SourcePrivateKey,
		"ownclosed":         SourceUnlistable, // root's, not its own
		"own0/notes.txt":    SourcePrivateKey,
		"own0/plain.txt":    SourcePrivateKey,
	}, as65534)
}

// TestWalkAsCommandRace (red team round 31, R31d-5): while the walk
// runs, an attacker goroutine exchanges (RENAME_EXCHANGE) a directory of
// the workspace with a link to another user's closed directory: the
// names in that directory never reach the carves. A check by path then
// fastwalk's open by path listed it when the exchange fell between
// them. Control: the walk of the workspace with the link's target
// readable names them (through the link no walk follows, so only by a
// race: the control is that the secret names exist and the attacker
// runs).
func TestWalkAsCommandRace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a directory of another user)")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	closed := filepath.Join(base, "closed")
	require.NoError(t, os.Mkdir(closed, 0o700))
	for _, n := range []string{"diary.txt", "passwords.kdbx"} {
		require.NoError(t, os.WriteFile(filepath.Join(closed, n), []byte("x"), 0o600))
	}
	require.NoError(t, os.Chown(closed, 65534, 65534))
	root := filepath.Join(base, "ws")
	race := filepath.Join(root, "race")
	require.NoError(t, os.MkdirAll(filepath.Join(race, "D0"), 0o755))
	require.NoError(t, os.Symlink(closed, filepath.Join(race, "S0")))
	ws, err := jail.New(root, jail.WithDenyPrivateKeyHeaders())
	require.NoError(t, err)
	defer ws.Close()

	stop := make(chan struct{})
	var swaps atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, filepath.Join(race, "D0"), unix.AT_FDCWD, filepath.Join(race, "S0"), unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	leaked := map[string]int{}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		carves, err := collectCarves(ws, Options{}, []Rule{{Path: root}})
		if err != nil {
			continue
		}
		for _, c := range carves {
			if b := filepath.Base(c.path); b == "diary.txt" || b == "passwords.kdbx" {
				leaked[c.path]++
			}
		}
	}
	close(stop)
	require.NotZero(t, swaps.Load(), "control: the attacker ran")
	assert.Empty(t, leaked, "names of the closed directory in the carves")
}

// TestWalkNoCredentialRace: red team round 27, R27e-5's walk half. A
// walk with no credentials to decide for (a non-root landjail: keyScan.as
// nil) listed by path with fastwalk: a command that exchanged a
// workspace directory with a link to a directory outside the policy (its
// own ~/.ssh, say) between the listing of the parent and the open of the
// directory made the planning list what the link led to, and carve (mask,
// and so name) what matched there. The walk now opens each directory
// O_NOFOLLOW from its parent's descriptor. An attacker goroutine
// exchanges the directory and the link all the while; no carve may name
// the outside directory's entries. Control: the same directory given as
// a real directory of the workspace is carved (the pattern matches).
func TestWalkNoCredentialRace(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(outside, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "passwords.kdbx"), []byte("x"), 0o600))
	root := filepath.Join(base, "ws")
	race := filepath.Join(root, "race")
	require.NoError(t, os.MkdirAll(filepath.Join(race, "D0"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(race, "S0")))
	ws, err := jail.New(root, jail.WithDeny("*.kdbx"))
	require.NoError(t, err)
	defer ws.Close()

	ctl := filepath.Join(root, "ctl")
	require.NoError(t, os.Mkdir(ctl, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ctl, "passwords.kdbx"), []byte("x"), 0o600))
	carves, err := walkCarvesGranted(ws, []string{root}, nil, DefaultWalkLimit, &keyScan{})
	require.NoError(t, err)
	require.Contains(t, carvePaths(carves), filepath.Join(ctl, "passwords.kdbx"), "control: the pattern is carved in a real directory")
	require.NoError(t, os.RemoveAll(ctl))

	stop := make(chan struct{})
	var swaps atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, filepath.Join(race, "D0"), unix.AT_FDCWD, filepath.Join(race, "S0"), unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	leaked := 0
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		carves, err := walkCarvesGranted(ws, []string{root}, nil, DefaultWalkLimit, &keyScan{})
		if err != nil {
			continue
		}
		for _, c := range carves {
			if filepath.Base(c.path) == "passwords.kdbx" {
				leaked++
			}
		}
	}
	close(stop)
	<-done
	require.NotZero(t, swaps.Load(), "control: the attacker ran")
	assert.Zero(t, leaked, "an entry of the directory outside the policy was listed and carved")
}

// TestDeniedLinkBelowClosedHome: red team round 32, R32d-3. With the
// workspace below a directory the command cannot search (a user's 0700
// HOME, for a root landjail whose command holds no capability), the
// target of a denied link (.env -> settings/production) was not carved:
// the command could not follow the link from "/", but it reaches the
// workspace (the view rebuilds its path; relative names) and read the
// secret by both names. The target is carved, as the command reaches
// it. Control: a link toward a directory below the workspace that the
// command cannot search (another user's 0700 priv/) is still not
// carved (R31d-1: nothing of it may be named).
func TestDeniedLinkBelowClosedHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's directory)")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(base, "alice")
	root := filepath.Join(home, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "settings"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "settings", "production"), []byte("DB_PASSWORD=x\n"), 0o644))
	require.NoError(t, os.Symlink("settings/production", filepath.Join(root, ".env")))
	priv := filepath.Join(root, "priv")
	require.NoError(t, os.MkdirAll(priv, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(priv, "secret"), []byte("x"), 0o600))
	require.NoError(t, os.Symlink("priv/secret", filepath.Join(root, ".env.local")))
	require.NoError(t, os.Chown(priv, 65534, 65534))
	require.NoError(t, os.Chmod(priv, 0o700))
	for _, d := range []string{home, root} {
		require.NoError(t, os.Chown(d, 1000, 1000))
	}
	require.NoError(t, os.Chmod(home, 0o700))
	ws, err := jail.New(root, jail.WithDeny(".env*"))
	require.NoError(t, err)
	defer ws.Close()
	carves, err := collectCarves(ws, Options{}, []Rule{{Path: root, Access: RightsAll}})
	require.NoError(t, err)
	got := carvePaths(carves)
	assert.Contains(t, got, filepath.Join(root, "settings", "production"), "the target the command reaches by its own name")
	assert.NotContains(t, got, filepath.Join(priv, "secret"), "control: below a directory the command cannot search")
}

// TestDeniedLinkOwnDirectoryMode: red team round 32, R32d-6 and R32d-7.
// The command (root without capabilities here) owns its workspace's
// directories and may chmod them: with cfg/ at 000 the look at whether
// it reaches cfg/production said no, and the target of .env ->
// cfg/production was not carved (a command toggling the mode during the
// plan read it); with sub/ at 000 holding sub/.env -> ../cfg2/production
// the walk masked sub unlisted and never met the link. Both targets are
// carved whatever the modes of the command's own directories. Control:
// the same targets are carved with the modes at 755.
func TestDeniedLinkOwnDirectoryMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (the command as root without capabilities)")
	}
	for _, mode := range []os.FileMode{0o755, 0} {
		root, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		for _, d := range []string{"cfg", "cfg2", "sub"} {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, "cfg", "production"), []byte("x"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(root, "cfg2", "production"), []byte("x"), 0o644))
		require.NoError(t, os.Symlink("cfg/production", filepath.Join(root, ".env")))
		require.NoError(t, os.Symlink("../cfg2/production", filepath.Join(root, "sub", ".env")))
		require.NoError(t, os.Chmod(filepath.Join(root, "cfg"), mode))
		require.NoError(t, os.Chmod(filepath.Join(root, "sub"), mode))
		ws, err := jail.New(root, jail.WithDeny(".env"))
		require.NoError(t, err)
		carves, err := collectCarves(ws, Options{}, []Rule{{Path: root, Access: RightsAll}})
		ws.Close()
		require.NoError(t, err)
		got := carvePaths(carves)
		assert.Contains(t, got, filepath.Join(root, "cfg", "production"), "mode %o: below its own directory", mode)
		assert.Contains(t, got, filepath.Join(root, "cfg2", "production"), "mode %o: the link in its own directory", mode)
		for _, d := range []string{"cfg", "sub"} {
			os.Chmod(filepath.Join(root, d), 0o755)
		}
	}
}

// TestPatternLinkIntoClosedDirectory: red team round 32, R32d-1. A link
// a pattern leads through (.config -> priv/sub, under --deny-secrets'
// **/.config/gcloud/) into another user's 0700 directory was walked as
// root: the names below it and which files held a key were carved, so
// --print-rules and the report named them. Nothing below priv is named
// now, only priv itself (unlistable). Control: with priv searchable
// (0755) the walk through the link carves gcloud.
func TestPatternLinkIntoClosedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's directory)")
	}
	for _, mode := range []os.FileMode{0o755, 0o700} {
		root, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		require.NoError(t, os.Chmod(root, 0o755))
		sub := filepath.Join(root, "priv", "sub")
		require.NoError(t, os.MkdirAll(filepath.Join(sub, "gcloud"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "gcloud", "credentials.db"), []byte("x"), 0o644))
		require.NoError(t, os.Symlink("priv/sub", filepath.Join(root, ".config")))
		require.NoError(t, os.Chown(filepath.Join(root, "priv"), 65534, 65534))
		require.NoError(t, os.Chmod(filepath.Join(root, "priv"), mode))
		ws, err := jail.New(root, jail.WithDenySecrets())
		require.NoError(t, err)
		carves, err := collectCarves(ws, Options{}, []Rule{{Path: root, Access: RightsAll}})
		ws.Close()
		require.NoError(t, err)
		var below []string
		for _, p := range carvePaths(carves) {
			if strings.HasPrefix(p, sub) {
				below = append(below, p)
			}
		}
		if mode == 0o700 {
			assert.Empty(t, below, "names below another user's closed directory")
		} else {
			assert.Contains(t, below, filepath.Join(sub, "gcloud"), "control: reachable, walked through the link")
		}
	}
}
