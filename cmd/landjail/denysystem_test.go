package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestDenyInSystemPreset: --deny of a literal absolute path that the
// system preset grants is denied to the command, in the namespace layer
// and with --no-namespaces, as resolve and the file tools deny it (red
// team round 23, R23a-2: the carve walk read the policy's roots only, so
// `--deny /usr/local/share/x/creds.txt` and `--deny /etc/pip.conf` were
// dropped for the command). A file below a preset directory is carved
// out of it; a preset rule on the path itself (/etc/pip.conf, when this
// host has one) is dropped. Control: the same runs without --deny read
// both. Red without literalDenied in landlock's plan.
func TestDenyInSystemPreset(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("writes below /usr/local/share")
	}
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	dir, err := os.MkdirTemp("/usr/local/share", "landjail-r23a2-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	creds := filepath.Join(dir, "creds.txt")
	require.NoError(t, os.WriteFile(creds, []byte("USR_SECRET\n"), 0o644))
	// R23c-6: names only an escaped pattern spells, and a brace, which
	// gitignore does not expand.
	bracket, brace := filepath.Join(dir, "creds[prod].txt"), filepath.Join(dir, "{prod}.json")
	require.NoError(t, os.WriteFile(bracket, []byte("BRACKET_SECRET\n"), 0o644))
	require.NoError(t, os.WriteFile(brace, []byte("BRACE_SECRET\n"), 0o644))
	files := [][2]string{{creds, creds}, {bracket, filepath.Join(dir, `creds\[prod\].txt`)}, {brace, brace}}
	if b, err := os.ReadFile("/etc/pip.conf"); err == nil && len(b) > 0 {
		files = append(files, [2]string{"/etc/pip.conf", "/etc/pip.conf"})
	}
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		for _, fp := range files {
			f, pattern := fp[0], fp[1]
			want, err := os.ReadFile(f)
			require.NoError(t, err)
			args := append([]string{"run", "--workspace", ws}, mode...)
			code, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "cat", f)...)
			assert.Equal(t, 0, code, "control: %s %v read: %s", f, mode, out)
			assert.Contains(t, out, string(want), "control: %s %v", f, mode)
			args = append([]string{"run", "--workspace", ws, "--deny", pattern}, mode...)
			code, out = runBinCtx(t, 60*time.Second, bin, append(args, "--", "cat", f)...)
			assert.NotEqual(t, 0, code, "%s %v: %s", f, mode, out)
			assert.NotContains(t, out, string(want), "%s %v: read", f, mode)
			assert.Contains(t, out, "Permission denied", "%s %v", f, mode)
		}
	}
	// Red team round 23, R23c-2: on a merged /usr the preset's /lib rule
	// is the link /lib -> usr/lib, which Landlock follows: a file denied
	// below /usr/lib was read through it under Landlock alone.
	if t2, err := os.Readlink("/lib"); err == nil && t2 == "usr/lib" {
		dir, err := os.MkdirTemp("/usr/lib", "landjail-r23c2-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		f := filepath.Join(dir, "creds.txt")
		require.NoError(t, os.WriteFile(f, []byte("LIB_SECRET\n"), 0o644))
		viaLib := filepath.Join("/lib", filepath.Base(dir), "creds.txt")
		for _, mode := range [][]string{nil, {"--no-namespaces"}} {
			args := append([]string{"run", "--workspace", ws}, mode...)
			_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "cat", viaLib)...)
			assert.Contains(t, out, "LIB_SECRET", "control: %v", mode)
			args = append([]string{"run", "--workspace", ws, "--deny", f}, mode...)
			_, out = runBinCtx(t, 60*time.Second, bin, append(args, "--", "sh", "-c", "cat "+f+"; cat "+viaLib)...)
			assert.NotContains(t, out, "LIB_SECRET", "%v: read through /lib", mode)
		}
	}
	// R23c-3: a preset file that is a link (here /etc/lsb-release, made
	// for the test where this host has none) to a file out of every
	// rule: its rule granted the target under --deny.
	if _, err := os.Lstat("/etc/lsb-release"); os.IsNotExist(err) {
		dir, err := os.MkdirTemp("/opt", "landjail-r23c3-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })
		target := filepath.Join(dir, "pip.conf")
		require.NoError(t, os.WriteFile(target, []byte("OPT_SECRET\n"), 0o644))
		require.NoError(t, os.Symlink(target, "/etc/lsb-release"))
		t.Cleanup(func() { os.Remove("/etc/lsb-release") })
		for _, mode := range [][]string{nil, {"--no-namespaces"}} {
			args := append([]string{"run", "--workspace", ws}, mode...)
			_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "cat", "/etc/lsb-release")...)
			assert.Contains(t, out, "OPT_SECRET", "control: %v", mode)
			args = append([]string{"run", "--workspace", ws, "--deny", "/etc/lsb-release"}, mode...)
			_, out = runBinCtx(t, 60*time.Second, bin, append(args, "--", "cat", "/etc/lsb-release")...)
			assert.NotContains(t, out, "OPT_SECRET", "%v: read through the preset's link", mode)
		}
	}
	code, out := runBinCtx(t, 30*time.Second, bin, "resolve", "--workspace", ws, "--deny", creds, creds)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "denied")
}

// TestWorkspaceInSystemPreset: a workspace below a directory the system
// preset grants (/usr/src/app, the working directory of many container
// images) keeps its denied files from the command in every layer: its
// .env, a key found by content, a literal --deny. Landlock grants the
// union of the rules on a file's ancestors, so the preset's /usr rule
// gave back what the workspace's carving took out under Landlock alone
// (red team round 25, R25b-4), while resolve refused them. Control: an
// ordinary file of the workspace is read and written. Red without
// carveBelowOutside in --no-namespaces.
func TestWorkspaceInSystemPreset(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("writes below /usr/local")
	}
	t.Parallel()
	bin := landjailBin(t)
	base, err := os.MkdirTemp("/usr/local", "landjail-r25b4-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "app")
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "config"), 0o755))
	for name, text := range map[string]string{
		".env":              "DATABASE_URL=ENV_SECRET\n",
		"config/deploy_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nKEY_SECRET\n-----END OPENSSH PRIVATE KEY-----\n",
		"config/prod.key":   "LITERAL_SECRET\n",
		"notes.txt":         "fine\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644))
	}
	script := "cat .env config/deploy_key config/prod.key; cat notes.txt; echo more >> notes.txt && echo WROTE"
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		// A relative --deny: an absolute one is literalDenied's, which
		// carved the /usr rule already (R23a-2).
		args := append([]string{"run", "--workspace", ws, "--deny-secrets", "--deny", "config/prod.key"}, mode...)
		_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "sh", "-c", script)...)
		assert.NotContains(t, out, "SECRET", "%v: a denied file of the workspace read", mode)
		assert.Contains(t, out, "fine", "control %v: %s", mode, out)
		assert.Contains(t, out, "WROTE", "control %v: %s", mode, out)
	}
	code, out := runBinCtx(t, 30*time.Second, bin, "resolve", "--workspace", ws, "--deny-secrets", ".env")
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "denied")
}
