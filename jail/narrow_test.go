package jail_test

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
)

// TestEntryNarrowingAgrees: for every entry a walk reaches (no denied
// parent), EntryNarrowing gives Narrowing's deny and private-key bits,
// and its read-only bit or'ed with the parent's is Narrowing's: the carve
// walk's shortcut never changes an answer. Patterns: the secrets preset,
// anchored, "**", negations and absolute ones.
func TestEntryNarrowingAgrees(t *testing.T) {
	ws, err := jail.New(mustDir(t), jail.WithDenySecrets(),
		jail.WithDeny("/abs/**/deny-me", "a/**/b", "build/", "!build/keep", "x*/y?z", "**/deep/**"),
		jail.WithReadOnly("docs/", "*.lock", "!docs/free", "vendor/**/gen/"))
	require.NoError(t, err)
	defer ws.Close()
	root := ws.Root()
	names := []string{"a", "b", "build", "keep", "docs", "free", "x1", "yaz", "deep", "gen", "vendor",
		".env", ".env.example", "id_rsa_work", "id_x.pub", ".kube", "config", ".ssh", "k.pem", "yarn.lock", "src", "deny-me", "abs"}
	var walk func(dir string, depth int, parentRO bool)
	checked := 0
	walk = func(dir string, depth int, parentRO bool) {
		if depth == 4 {
			return
		}
		for _, n := range names {
			p := dir + "/" + n
			full := ws.Narrowing(p)
			entry := ws.EntryNarrowing(p)
			if dir == root {
				entry = full
			}
			checked++
			require.Equal(t, full&(jail.NarrowDenied|jail.NarrowPrivateKey), entry&(jail.NarrowDenied|jail.NarrowPrivateKey), "%s", p)
			ro := entry&jail.NarrowReadOnly != 0 || parentRO
			require.Equal(t, full&jail.NarrowReadOnly != 0, ro, "%s", p)
			if full&jail.NarrowDenied == 0 {
				walk(p, depth+1, ro)
			}
		}
	}
	walk(root, 0, false)
	require.Greater(t, checked, 10_000)
}

func mustDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// TestHoldsPrivateKey: the content rule, on an fd, failing closed.
func TestHoldsPrivateKey(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		content string
		want    bool
	}{
		{"pkcs8", "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n", true},
		{"encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nx\n", true},
		{"rsa legacy", "junk\n-----BEGIN RSA PRIVATE KEY-----\nx\n", true},
		{"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n", true},
		{"cert then key", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n-----BEGIN EC PRIVATE KEY-----\n", true},
		{"certificate only", "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n", false},
		{"public key", "-----BEGIN PUBLIC KEY-----\nx\n", false},
		{"pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ\n", true},
		{"pgp public key block", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQ\n", false},
		{"label split by a newline", "-----BEGIN X\nPRIVATE KEY-----\n", false},
		{"empty", "", false},
		{"oversized", strings.Repeat("a", jail.MaxKeyScan+1), true},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o600))
		f, err := os.Open(p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, jail.HoldsPrivateKey(int(f.Fd())), tc.name)
		off, err := f.Seek(0, 1)
		require.NoError(t, err)
		assert.Zero(t, off, "pread: the offset does not move")
		f.Close()
	}
	// Fail closed: a write-only fd cannot be read; a FIFO is no regular
	// file; a directory holds no key.
	p := filepath.Join(dir, "certificate only")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	require.NoError(t, err)
	assert.True(t, jail.HoldsPrivateKey(int(f.Fd())), "write-only fd")
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	require.NoError(t, err)
	assert.True(t, jail.HoldsPrivateKey(fd), "fifo")
	unix.Close(fd)
	d, err := os.Open(dir)
	require.NoError(t, err)
	assert.False(t, jail.HoldsPrivateKey(int(d.Fd())), "directory")
	d.Close()
}

// TestPrivateKeyOps: a .pem holding a key cannot be read, truncated,
// renamed to another name, removed, or removed with its directory; a CA
// bundle is an ordinary file. Unconfined control: without the policy,
// renaming the key away and reading it works. Old code: *.pem denied
// the CA bundle and every .pem alike, by name.
func TestPrivateKeyOps(t *testing.T) {
	const key = "-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n"
	const cert = "-----BEGIN CERTIFICATE-----\nC\n-----END CERTIFICATE-----\n"
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		root := mustDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "tls"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "tls/server.pem"), []byte(key), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(root, "tls/ca.pem"), []byte(cert), 0o644))
		require.NoError(t, unix.Mkfifo(filepath.Join(root, "tls/pipe.pem"), 0o600))
		ws, err := jail.New(root, jail.WithDenySecrets())
		require.NoError(t, err)
		defer ws.Close()
		for _, tc := range []struct {
			name string
			op   func() error
		}{
			{"read", func() error { _, err := ws.ReadFile("tls/server.pem"); return err }},
			{"read through an absolute path", func() error { _, err := ws.ReadFile(root + "/tls/server.pem"); return err }},
			{"open O_RDWR", func() error { f, err := ws.OpenFile("tls/server.pem", os.O_RDWR, 0); closeIf(f); return err }},
			{"open O_WRONLY|O_TRUNC", func() error {
				f, err := ws.OpenFile("tls/server.pem", os.O_WRONLY|os.O_TRUNC, 0)
				closeIf(f)
				return err
			}},
			{"rename away", func() error { return ws.Rename("tls/server.pem", "tls/server.txt") }},
			{"rename a file over it", func() error { return ws.Rename("tls/ca.pem", "tls/server.pem") }},
			{"rename its directory", func() error { return ws.Rename("tls", "tls2") }},
			{"remove", func() error { return ws.Remove("tls/server.pem") }},
			{"remove its directory", func() error { return ws.RemoveAll("tls") }},
			{"write over it", func() error { return ws.WriteFile("tls/server.pem", []byte("x"), 0o600) }},
			{"resolve", func() error { _, err := ws.Resolve("tls/server.pem"); return err }},
			{"check", func() error { _, err := ws.Check("tls/server.pem", jail.Read); return err }},
			{"a fifo named .pem (fail closed)", func() error {
				f, err := ws.OpenFile("tls/pipe.pem", os.O_RDONLY|syscall.O_NONBLOCK, 0)
				closeIf(f)
				return err
			}},
		} {
			assert.ErrorIs(t, tc.op(), jail.ErrDenied, tc.name)
		}
		b, err := os.ReadFile(filepath.Join(root, "tls/server.pem"))
		require.NoError(t, err)
		assert.Equal(t, key, string(b), "the key is intact")
		b, err = ws.ReadFile("tls/ca.pem")
		require.NoError(t, err, "a CA bundle is readable")
		assert.Equal(t, cert, string(b))
		require.NoError(t, ws.WriteFile("tls/new.pem", []byte(cert), 0o644), "a new certificate can be written")
		f, err := ws.OpenFile("tls/new2.pem", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		require.NoError(t, err, "a new .pem can be created write-only")
		f.Close()

		// Unconfined control: the attack works without the policy.
		open, err := jail.New(root)
		require.NoError(t, err)
		defer open.Close()
		require.NoError(t, open.Rename("tls/server.pem", "tls/server.txt"))
		b, err = open.ReadFile("tls/server.txt")
		require.NoError(t, err)
		assert.Equal(t, key, string(b))
	})
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// TestReadOnlyOps: every write operation of the Workspace refuses a
// read-only path (WithReadOnly) and the protected agent configuration,
// with ErrReadOnly, and moving or removing a directory above one is
// refused too; reads and other writes work. Unconfined control: the same
// operations succeed without the options. Old code: the Workspace had no
// such option, every operation below succeeded (only Landlock children
// were refused).
func TestReadOnlyOps(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		mk := func(t *testing.T) string {
			root := mustDir(t)
			for _, f := range []string{".git/hooks/pre-commit.sample", ".git/config", ".git/objects/ab", "docs/spec.md", "src/main.go", "src/go.sum", "cfg/mcp.json", ".vscode/settings.json"} {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(f), 0o644))
			}
			require.NoError(t, os.Symlink("cfg/mcp.json", filepath.Join(root, ".mcp.json")))
			return root
		}
		ops := []struct {
			name string
			op   func(ws *jail.Workspace) error
		}{
			{"WriteFile hook", func(ws *jail.Workspace) error { return ws.WriteFile(".git/hooks/pre-commit", []byte("evil"), 0o755) }},
			{"Create hook", func(ws *jail.Workspace) error {
				f, err := ws.Create(".git/hooks/post-checkout")
				closeIf(f)
				return err
			}},
			{"append .git/config", func(ws *jail.Workspace) error {
				f, err := ws.OpenFile(".git/config", os.O_WRONLY|os.O_APPEND, 0)
				closeIf(f)
				return err
			}},
			{"WriteFile .bashrc", func(ws *jail.Workspace) error { return ws.WriteFile(".bashrc", []byte("evil"), 0o644) }},
			{"WriteFile .mcp.json (symlink)", func(ws *jail.Workspace) error { return ws.WriteFile(".mcp.json", []byte("{}"), 0o644) }},
			{"WriteFile its target", func(ws *jail.Workspace) error { return ws.WriteFile("cfg/mcp.json", []byte("{}"), 0o644) }},
			{"Remove .mcp.json", func(ws *jail.Workspace) error { return ws.Remove(".mcp.json") }},
			{"Mkdir .idea", func(ws *jail.Workspace) error { return ws.Mkdir(".idea", 0o755) }},
			{"MkdirAll .claude/x", func(ws *jail.Workspace) error { return ws.MkdirAll(".claude/x", 0o755) }},
			{"Chmod hook sample", func(ws *jail.Workspace) error { return ws.Chmod(".git/hooks/pre-commit.sample", 0o755) }},
			{"Rename over .git/config", func(ws *jail.Workspace) error { return ws.Rename("src/main.go", ".git/config") }},
			{"Rename .vscode away", func(ws *jail.Workspace) error { return ws.Rename(".vscode", "vs") }},
			{"Rename .git away", func(ws *jail.Workspace) error { return ws.Rename(".git", "g") }},
			{"RemoveAll .git", func(ws *jail.Workspace) error { return ws.RemoveAll(".git") }},
			{"WriteFile docs/spec.md", func(ws *jail.Workspace) error { return ws.WriteFile("docs/spec.md", []byte("x"), 0o644) }},
			{"Create docs/new.md", func(ws *jail.Workspace) error { f, err := ws.Create("docs/new.md"); closeIf(f); return err }},
			{"Rename docs away", func(ws *jail.Workspace) error { return ws.Rename("docs", "d") }},
			{"Rename into docs", func(ws *jail.Workspace) error { return ws.Rename("src/main.go", "docs/main.go") }},
			{"RemoveAll src (holds go.sum)", func(ws *jail.Workspace) error { return ws.RemoveAll("src") }},
			{"Rename src (holds go.sum)", func(ws *jail.Workspace) error { return ws.Rename("src", "s") }},
			{"WriteFile src/go.sum", func(ws *jail.Workspace) error { return ws.WriteFile("src/go.sum", []byte("x"), 0o644) }},
		}
		for _, o := range ops {
			root := mk(t)
			ws, err := jail.New(root, jail.WithProtectedAgentConfig(), jail.WithReadOnly("docs/", "go.sum"))
			require.NoError(t, err)
			err = o.op(ws)
			assert.ErrorIs(t, err, jail.ErrReadOnly, o.name)
			var pe *os.PathError
			assert.ErrorAs(t, err, &pe, o.name)
			ws.Close()
			// Unconfined control.
			root = mk(t)
			ctl, err := jail.New(root)
			require.NoError(t, err)
			assert.NoError(t, o.op(ctl), "control: %s", o.name)
			ctl.Close()
		}
		// Reads and other writes stay allowed.
		root := mk(t)
		ws, err := jail.New(root, jail.WithProtectedAgentConfig(), jail.WithReadOnly("docs/", "go.sum"))
		require.NoError(t, err)
		defer ws.Close()
		for _, p := range []string{".git/config", ".mcp.json", "docs/spec.md", "src/go.sum"} {
			_, err := ws.ReadFile(p)
			assert.NoError(t, err, p)
		}
		assert.NoError(t, ws.WriteFile(".git/objects/ab", []byte("obj"), 0o644))
		assert.NoError(t, ws.WriteFile("src/main.go", []byte("package main"), 0o644))
		assert.NoError(t, ws.Rename("src/main.go", "src/m.go"))
		_, err = ws.Check(".git/HEAD", jail.Write)
		assert.NoError(t, err, "not protected")
		for _, p := range []string{".git", ".git/hooks/x", ".bashrc", "docs/a", "cfg/mcp.json"} {
			_, err := ws.Check(p, jail.Write)
			assert.ErrorIs(t, err, jail.ErrReadOnly, p)
			_, err = ws.Check(p, jail.Read)
			assert.NotErrorIs(t, err, jail.ErrReadOnly, p)
		}
		_, err = jail.New(root, jail.WithReadOnly(root+"/missing"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
}

// TestHeadHoldsPrivateKey: the header rule for files no key pattern
// names: key headers in the first KeyHeadScan bytes, whatever the size;
// not examined when not a regular file; fail closed on an unreadable fd.
// The "after the head" row is the documented limit (a key deep inside a
// large file is not caught); the size rows are what keeps a large
// ordinary file readable (HoldsPrivateKey would deny it).
func TestHeadHoldsPrivateKey(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat("x", jail.KeyHeadScan)
	for _, tc := range []struct {
		name    string
		content string
		want    bool
	}{
		{"openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n", true},
		{"pkcs8 after a few certificates", strings.Repeat("-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n", 100) +
			"-----BEGIN PRIVATE KEY-----\nMII\n", true},
		{"pgp private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQ\n", true},
		{"service-account json", `{"private_key": "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n"}`, true},
		{"putty v2", "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\n", true},
		{"putty v3", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: aes256-cbc\n", true},
		{"putty after a line", "\r\nPuTTY-User-Key-File-3: ssh-ed25519\n", true},
		{"putty after a byte order mark", "\xef\xbb\xbfPuTTY-User-Key-File-2: ssh-rsa\n", true},
		{"putty after other bytes", "\xef\xbbPuTTY-User-Key-File-2: ssh-rsa\n", false},
		{"putty named in prose", "convert your PuTTY-User-Key-File-2: header with puttygen\n", false},
		{"putty without a version", "PuTTY-User-Key-File-: x\n", false},
		{"putty without a colon", "PuTTY-User-Key-File-3 x\n", false},
		{"ssh.com", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: x\n", true},
		{"prose", "Keep the PRIVATE KEY out of git; BEGIN with a fresh key.\n", false},
		{"public key", "-----BEGIN PUBLIC KEY-----\nx\n", false},
		{"openssh public key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI user@host\n", false},
		{"header at the end of the head", pad[:jail.KeyHeadScan-40] + "\n-----BEGIN RSA PRIVATE KEY-----\n", true},
		{"header after the head (not caught)", pad + "\n-----BEGIN RSA PRIVATE KEY-----\n", false},
		{"larger than MaxKeyScan", strings.Repeat("a", jail.MaxKeyScan+1), false},
		{"larger than MaxKeyScan, key first", "-----BEGIN EC PRIVATE KEY-----\n" + strings.Repeat("a", jail.MaxKeyScan), true},
		{"empty", "", false},
	} {
		p := filepath.Join(dir, tc.name)
		require.NoError(t, os.WriteFile(p, []byte(tc.content), 0o600))
		f, err := os.Open(p)
		require.NoError(t, err)
		assert.Equal(t, tc.want, jail.HeadHoldsPrivateKey(int(f.Fd())), tc.name)
		off, err := f.Seek(0, 1)
		require.NoError(t, err)
		assert.Zero(t, off, "pread: the offset does not move")
		f.Close()
		assert.Equal(t, tc.want, jail.PathHeadHoldsPrivateKey(p), "by path: %s", tc.name)
	}
	p := filepath.Join(dir, "prose")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	require.NoError(t, err)
	assert.True(t, jail.HeadHoldsPrivateKey(int(f.Fd())), "write-only fd: fail closed")
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	require.NoError(t, err)
	assert.False(t, jail.HeadHoldsPrivateKey(fd), "a fifo is not examined")
	unix.Close(fd)
	assert.False(t, jail.PathHeadHoldsPrivateKey(fifo), "by path, without waiting for a writer")
	assert.False(t, jail.PathHeadHoldsPrivateKey(filepath.Join(dir, "missing")), "missing")
	require.NoError(t, os.Symlink(filepath.Join(dir, "openssh"), filepath.Join(dir, "link")))
	assert.True(t, jail.PathHeadHoldsPrivateKey(filepath.Join(dir, "link")), "a symlink is not followed: fail closed")
}

// TestKeyHeaderOps: with WithDenySecrets, a private key in a file no key
// pattern names (config/deploy_key) is refused by every Workspace
// operation that would hand out, destroy or move it, like a .pem key
// (TestPrivateKeyOps); a FIFO with that name hangs nothing and is an
// ordinary entry; write-only opens of ordinary files still work.
// Unconfined control: without the policy the key reads and renames. Red
// before: the operations on deploy_key succeeded.
func TestKeyHeaderOps(t *testing.T) {
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nSECRET\n-----END OPENSSH PRIVATE KEY-----\n"
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		root := mustDir(t)
		require.NoError(t, os.MkdirAll(filepath.Join(root, "config/pipe"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "config/deploy_key"), []byte(key), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(root, "config/app.toml"), []byte("a = 1\n"), 0o644))
		require.NoError(t, unix.Mkfifo(filepath.Join(root, "config/pipe/deploy_key"), 0o600))
		require.NoError(t, os.Symlink("config/deploy_key", filepath.Join(root, "link-to-key")))
		require.NoError(t, os.Link(filepath.Join(root, "config/deploy_key"), filepath.Join(root, "notes.txt")))
		bin := make([]byte, 5<<20) // a 5 MiB binary: above MaxKeyScan, no header
		_, _ = rand.NewChaCha8([32]byte{1}).Read(bin)
		require.NoError(t, os.WriteFile(filepath.Join(root, "config/model.bin"), bin, 0o644))
		ws, err := jail.New(root, jail.WithDenySecrets())
		require.NoError(t, err)
		defer ws.Close()
		for _, tc := range []struct {
			name string
			op   func() error
		}{
			{"read", func() error { _, err := ws.ReadFile("config/deploy_key"); return err }},
			{"open O_RDONLY (fast path)", func() error { f, err := ws.Open("config/deploy_key"); closeIf(f); return err }},
			{"fs.ReadFile(ws.FS())", func() error { _, err := fs.ReadFile(ws.FS(), "config/deploy_key"); return err }},
			{"through a symlink", func() error { _, err := ws.ReadFile("link-to-key"); return err }},
			{"through a hard link with another name", func() error { _, err := ws.ReadFile("notes.txt"); return err }},
			{"open O_RDWR", func() error { f, err := ws.OpenFile("config/deploy_key", os.O_RDWR, 0); closeIf(f); return err }},
			{"open O_WRONLY|O_TRUNC", func() error {
				f, err := ws.OpenFile("config/deploy_key", os.O_WRONLY|os.O_TRUNC, 0)
				closeIf(f)
				return err
			}},
			{"rename away", func() error { return ws.Rename("config/deploy_key", "config/k.txt") }},
			{"rename a file over it", func() error { return ws.Rename("config/app.toml", "config/deploy_key") }},
			{"rename its directory", func() error { return ws.Rename("config", "config2") }},
			{"remove", func() error { return ws.Remove("config/deploy_key") }},
			{"remove its directory", func() error { return ws.RemoveAll("config") }},
			{"write over it", func() error { return ws.WriteFile("config/deploy_key", []byte("x"), 0o600) }},
			{"resolve", func() error { _, err := ws.Resolve("config/deploy_key"); return err }},
			{"check", func() error { _, err := ws.Check("config/deploy_key", jail.Read); return err }},
		} {
			assert.ErrorIs(t, tc.op(), jail.ErrDenied, tc.name)
		}
		b, err := os.ReadFile(filepath.Join(root, "config/deploy_key"))
		require.NoError(t, err)
		assert.Equal(t, key, string(b), "the key is intact")

		// Ordinary files and a FIFO named deploy_key: nothing hangs,
		// nothing is refused.
		_, err = ws.Resolve("config/pipe/deploy_key")
		require.NoError(t, err)
		f, err := ws.OpenFile("config/pipe/deploy_key", os.O_RDONLY|syscall.O_NONBLOCK, 0)
		require.NoError(t, err, "a fifo is not examined")
		f.Close()
		f, err = ws.OpenFile("config/app.toml", os.O_WRONLY|os.O_APPEND, 0)
		require.NoError(t, err, "a write-only open of an ordinary file")
		f.Close()
		require.NoError(t, ws.RemoveAll("config/pipe"), "a fifo does not hang the subtree walk")
		b, err = ws.ReadFile("config/app.toml")
		require.NoError(t, err)
		assert.Equal(t, "a = 1\n", string(b))
		b, err = ws.ReadFile("config/model.bin")
		require.NoError(t, err, "a 5 MiB binary is read by its head only")
		assert.Equal(t, bin, b)

		// Unconfined control: the attack works without the policy.
		open, err := jail.New(root)
		require.NoError(t, err)
		defer open.Close()
		require.NoError(t, open.Rename("config/deploy_key", "config/k.txt"))
		b, err = open.ReadFile("config/k.txt")
		require.NoError(t, err)
		assert.Equal(t, key, string(b))
	})
}
