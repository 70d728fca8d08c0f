package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRepositoryBelowBound: a directory with more entries below it than
// maxRepoScan is refused without being searched to the end (here the
// repository lies past the bound, so only the bound finds it refused);
// the control: with the bound above the tree's size the repository is
// found and named, and a tree without one is learnable.
func TestRepositoryBelowBound(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("a%d", i)), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(root, "z/repo/.git"), 0o755))
	clean := filepath.Join(t.TempDir(), "clean")
	require.NoError(t, os.MkdirAll(filepath.Join(clean, "d"), 0o755))

	old := maxRepoScan
	t.Cleanup(func() { maxRepoScan = old })
	maxRepoScan = 3
	assert.Contains(t, repositoryBelow(root), "more than 3 entries below it")
	maxRepoScan = 100
	assert.Equal(t, "the git repository "+filepath.Join(root, "z/repo")+" lies below it (its .git, hooks and agent configuration)", repositoryBelow(root))
	assert.Equal(t, "", repositoryBelow(clean))
}

// TestSystemLocations: an rw grant in, below or above each class of the
// system's code locations is refused (each of systemRoots, named or not
// present here, a /bin that is a link, the root directory, an absolute
// PATH and LD_LIBRARY_PATH entry, a directory of /etc/ld.so.conf); the
// controls: ordinary output locations (/var/tmp, /tmp, /srv)
// and a relative PATH entry are learnable. Red with the check in why
// taken out (execbearing-system.txt too).
func TestSystemLocations(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", "/usr/bin:"+filepath.Join(dir, "pbin")+":relbin:")
	t.Setenv("LD_LIBRARY_PATH", filepath.Join(dir, "ld"))
	t.Setenv("HOME", t.TempDir()) // not /root: its own rule would answer first
	e := newExecRules()
	defer e.close()
	refused := []string{"/", "/var", "/run", "/usr/local/lib/zz.so", "/usr/local/bin", "/etc/cron.d", "/etc/systemd/system",
		"/run/systemd/system", "/run/user/0/systemd/transient", "/var/spool/cron/crontabs", "/var/lib/systemd", "/root/.bashrc",
		filepath.Join(dir, "pbin"), filepath.Join(dir, "pbin/git"), dir, filepath.Join(dir, "ld/libc.so.6"),
		"/dev/shm", "/dev/pts/0", "/dev/tty0", "/proc/sys/kernel", "/sys/fs/cgroup", // R11a-11
		"/var/cache/debconf", "/var/cache/apt/archives", "/var/log", "/var/log/wtmp", "/var/mail/root", // R27f-4
		"/var/backups/x", "/var/local/x", "/mnt", "/mnt/disk", "/media/usb",
		// R30d-5: state that root's daemons run or load, other ESP and
		// store locations, lost+found.
		"/var/yp/Makefile", "/var/kerberos/krb5kdc", "/var/named", "/var/qmail/alias", "/var/db/sudo",
		"/var/guix/profiles", "/var/www/html", "/efi/EFI", "/nix/store", "/gnu/store", "/snap/bin", "/lost+found"}
	for _, r := range systemRoots {
		refused = append(refused, r, r+"/zz")
	}
	if _, err := os.Stat("/lib/x86_64-linux-gnu"); err == nil {
		refused = append(refused, "/usr/lib/x86_64-linux-gnu") // ld.so.conf.d's, below /usr anyway
	}
	for _, p := range refused {
		assert.NotEmpty(t, e.system(p), p)
		assert.Contains(t, e.why(p, true), execPrefix, p)
	}
	// /srv is refused since red team round 32 (R32c-11: web roots,
	// served repositories), through systemRoots above.
	for _, p := range []string{"/var/tmp/out", "/tmp/x", "/work/ws", filepath.Join(dir, "other"),
		filepath.Join(dir, "relbin")} {
		assert.Equal(t, "", e.system(p), p)
	}
}

// TestLdSoConf: the directories of an ld.so.conf, its comments left out,
// its includes (relative and absolute globs) followed, and a loop of
// includes ended by maxLdConf.
func TestLdSoConf(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	write("ld.so.conf", "# comment\n/opt/a/lib # trailing\ninclude d/*.conf\n\ninclude\t"+filepath.Join(dir, "loop.conf")+"\n")
	write("d/one.conf", "/usr/local/one\n")
	write("d/two.conf", "  /srv/two\n#/no\n")
	write("loop.conf", "/loop\ninclude loop.conf\n")
	n := 0
	got := ldSoConf(filepath.Join(dir, "ld.so.conf"), &n)
	assert.Equal(t, maxLdConf+1, n)
	assert.Equal(t, []string{"/opt/a/lib", "/usr/local/one", "/srv/two"}, got[:3])
	assert.Len(t, got, 3+maxLdConf-3)
	for _, g := range got[3:] {
		assert.Equal(t, "/loop", g)
	}
}

// TestExecBearingBareRepository (red team round 13, R13-4): an rw grant
// inside a bare repository (a bare dotfiles ~/.cfg, a served proj.git:
// HEAD, objects/, refs/) is refused by design, at its hooks and at the
// git directory itself. Control: a directory with a HEAD file alone is
// not a git directory.
func TestExecBearingBareRepository(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base := t.TempDir()
	bare := filepath.Join(base, "proj.git")
	for _, d := range []string{"hooks", "objects", "refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(bare, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(bare, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	plain := filepath.Join(base, "plain")
	require.NoError(t, os.MkdirAll(filepath.Join(plain, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(plain, "HEAD"), []byte("x"), 0o644))
	e := newExecRules()
	defer e.close()
	assert.Contains(t, e.why(filepath.Join(bare, "hooks"), true), "git directory")
	assert.Contains(t, e.why(bare, true), "git directory")
	assert.Contains(t, e.why(filepath.Join(bare, "config"), false), "git directory")
	assert.Equal(t, "", e.why(filepath.Join(plain, "sub"), true), "control")
}

// TestExecBearingAgentConfigBelow (red team round 15): an rw grant of a
// directory that is no repository is refused when agent configuration
// lies below it (R15a-9: notes/.claude/settings.json, .mcp.json,
// .vscode/tasks.json, mise.toml), or what one of HOME's start-up files
// links to (R15a-14: ~/.bashrc -> dotfiles/bash/.bashrc, dotfiles with no
// .git). Controls: the same directories without those files are
// learnable. Red before: all four were learned.
func TestExecBearingAgentConfigBelow(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	notes, dot := filepath.Join(base, "notes"), filepath.Join(home, "dotfiles")
	for _, f := range []string{"notes/x.md", "dotfiles/README"} {
		p := filepath.Join(base, f)
		if f == "dotfiles/README" {
			p = filepath.Join(home, f)
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	e := newExecRules()
	assert.Equal(t, "", e.why(notes, true), "control: no agent configuration")
	assert.Equal(t, "", e.why(dot, true), "control: no HOME link into it")
	e.close()
	for _, f := range []string{".claude/settings.json", ".mcp.json", ".vscode/tasks.json", "mise.toml"} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(notes, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(notes, f), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dot, "bash"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dot, "bash/.bashrc"), nil, 0o644))
	require.NoError(t, os.Symlink("dotfiles/bash/.bashrc", filepath.Join(home, ".bashrc")))
	e = newExecRules()
	defer e.close()
	assert.Contains(t, e.why(notes, true), "agent configuration")
	assert.Contains(t, e.why(dot, true), filepath.Join(dot, "bash/.bashrc"))
}

// TestSystemLocationsPathChain (red team round 20, R20b-3): a grant
// that holds a link on a PATH entry's way (Nix's
// ~/.nix-profile -> per-user/profile -> profile-1-link -> the store) is
// refused: its
// directory, the link itself, a directory above; controls: a sibling
// directory, and the same tree with the entry not on PATH. Red before:
// rw per-user/ was learned and the next run re-pointed profile.
func TestSystemLocationsPathChain(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", t.TempDir())
	prof := filepath.Join(dir, "var/profiles/per-user")
	require.NoError(t, os.MkdirAll(prof, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "store/env/bin"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "other"), 0o755))
	require.NoError(t, os.Symlink(filepath.Join(dir, "store/env"), filepath.Join(prof, "profile-1-link")))
	require.NoError(t, os.Symlink("profile-1-link", filepath.Join(prof, "profile")))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.Symlink(filepath.Join(prof, "profile"), filepath.Join(home, ".nix-profile")))
	for _, onPath := range []bool{false, true} {
		path := "/usr/bin"
		if onPath {
			path = filepath.Join(home, ".nix-profile/bin") + ":" + path
		}
		t.Setenv("PATH", path)
		e := newExecRules()
		for _, p := range []string{prof, filepath.Join(prof, "profile"), filepath.Join(dir, "var")} {
			if onPath {
				assert.NotEmpty(t, e.system(p), p)
			} else {
				assert.Empty(t, e.system(p), "control: not on PATH, %s", p)
			}
		}
		assert.Empty(t, e.system(filepath.Join(dir, "other")), "control: a sibling")
		e.close()
	}
}

// TestExecBearingAppProfiles (red team round 31, R31b-2): an rw grant in
// or above a desktop application's profile (a Firefox profile, where
// the next run wrote user.js; Chrome's; a Flatpak application's data)
// is refused by design. Control: another directory of HOME's is
// learnable.
func TestExecBearingAppProfiles(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	dirs := []string{".mozilla/firefox/abc.default", ".config/google-chrome/Default", ".var/app/org.telegram.desktop/data", "notes/sub"}
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	e := newExecRules()
	defer e.close()
	for _, d := range []string{".mozilla/firefox/abc.default", ".config/google-chrome/Default", ".var/app/org.telegram.desktop/data", ".var"} {
		assert.Contains(t, e.why(filepath.Join(home, d), true), "application's profile", d)
	}
	assert.NotEmpty(t, e.why(filepath.Join(home, ".mozilla"), true), "above a profile (and native-messaging-hosts/)")
	assert.Contains(t, e.why(filepath.Join(home, ".mozilla/firefox/abc.default/user.js"), false), "application's profile")
	assert.Equal(t, "", e.why(filepath.Join(home, "notes/sub"), true), "control")
}

// TestLearnRound32Directories: red team round 32. A create refused in a
// project's directory without git (R32c-11: Cargo.toml there, and the
// next run planted .cargo/config.toml), in a directory holding a bare
// repository (R32c-15: proj.git's hooks run on the next push), or in a
// snap application's profile (R32c-14) was learned as rw of the
// directory. Each is refused by design. Control: a plain output
// directory is learnable.
func TestLearnRound32Directories(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	base := t.TempDir()
	mk := func(files ...string) {
		for _, f := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(base, f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(base, f), []byte("x"), 0o644))
		}
	}
	mk("crate/Cargo.toml", "crate/src/main.rs", "srv/proj.git/HEAD", "out/old.o")
	for _, d := range []string{"srv/proj.git/objects", "srv/proj.git/refs"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o755))
	}
	profile := filepath.Join(home, "snap/firefox/common/.mozilla/firefox/abc.default")
	require.NoError(t, os.MkdirAll(profile, 0o755))
	e := newExecRules()
	defer e.close()
	for _, d := range []string{filepath.Join(base, "crate"), filepath.Join(base, "srv"), profile} {
		assert.Contains(t, e.why(d, true), execPrefix, d)
	}
	assert.Equal(t, "", e.why(filepath.Join(base, "out"), true), "control: an output directory")
}

// TestLearnTrustDatabases: red team round 32, R32c-6. A create refused
// in GNOME's settings database, direnv's allow list, Neovim's trust
// database, SQLite's or ptpython's configuration or a zsh framework was
// learned rw of the directory, which runs or pre-approves code. Each is
// refused by design. Control: another ~/.config directory is learnable.
func TestLearnTrustDatabases(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	e := newExecRules()
	defer e.close()
	for _, d := range []string{".config/dconf", ".local/share/direnv/allow", ".local/state/nvim", ".config/sqlite3", ".config/ptpython", ".zim", ".config/other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, d), 0o755))
	}
	for _, d := range []string{".config/dconf", ".local/share/direnv/allow", ".local/state/nvim", ".config/sqlite3", ".config/ptpython", ".zim"} {
		assert.Contains(t, e.why(filepath.Join(home, d), true), execPrefix, d)
	}
	assert.Equal(t, "", e.why(filepath.Join(home, ".config/other"), true), "control")
}
