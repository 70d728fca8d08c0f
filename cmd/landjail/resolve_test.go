package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resolveTree makes a workspace with a file, a secret, a symlink out and
// a read-only root beside it; it returns the canonical paths.
func resolveTree(t *testing.T) (ws, ro, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, ro, outside = filepath.Join(base, "ws"), filepath.Join(base, "ro"), filepath.Join(base, "outside")
	for _, d := range []string{ws, ro, outside, filepath.Join(ws, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{filepath.Join(ws, "sub", "a.go"), filepath.Join(ws, ".env"), filepath.Join(ro, "lib.txt"), filepath.Join(outside, "secret")} {
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	}
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "escape")))
	require.NoError(t, os.Symlink("sub/a.go", filepath.Join(ws, "inlink")))
	return ws, ro, outside
}

func TestResolveLines(t *testing.T) {
	ws, ro, outside := resolveTree(t)
	code, out, stderr := runCLI(t, "resolve", "--workspace", ws, "--ro", ro, "--deny-secrets",
		"sub/a.go", "inlink", "new/file", filepath.Join(ro, "lib.txt"),
		filepath.Join(outside, "secret"), "escape", "../outside/secret", ".env", "tab\tname/..", "missing/..")
	assert.Equal(t, exitRefused, code, stderr)
	assert.Equal(t, []string{
		"ok\t" + filepath.Join(ws, "sub/a.go"),
		"ok\t" + filepath.Join(ws, "sub/a.go"),
		"ok\t" + filepath.Join(ws, "new/file"),
		"ok\t" + filepath.Join(ro, "lib.txt"),
		"error\t" + filepath.Join(outside, "secret") + "\toutside\tpath is outside the workspace",
		"error\tescape\toutside\tpath is outside the workspace",
		"error\t../outside/secret\toutside\tpath is outside the workspace",
		"error\t.env\tdenied\tpath is denied by policy",
		"error\t\"tab\\tname/..\"\tnot-found\tno such file or directory",
		"error\tmissing/..\tnot-found\tno such file or directory",
	}, strings.Split(strings.TrimSuffix(out, "\n"), "\n"))

	code, out, _ = runCLI(t, "resolve", "--workspace", ws, "sub", "sub/a.go")
	assert.Equal(t, 0, code, "all ok exits 0")
	assert.Equal(t, "ok\t"+filepath.Join(ws, "sub")+"\nok\t"+filepath.Join(ws, "sub/a.go")+"\n", out)
}

func TestResolveAccess(t *testing.T) {
	ws, ro, _ := resolveTree(t)
	code, out, _ := runCLI(t, "resolve", "--workspace", ws, "--ro", ro, "--access", "write", filepath.Join(ro, "lib.txt"), "sub/a.go")
	assert.Equal(t, exitRefused, code)
	assert.Equal(t, "error\t"+filepath.Join(ro, "lib.txt")+"\tread-only\tpath is in a read-only root\nok\t"+filepath.Join(ws, "sub/a.go")+"\n", out)

	code, out, _ = runCLI(t, "resolve", "--workspace", ws, "--ro", ro, "--access", "execute", filepath.Join(ro, "lib.txt"))
	assert.Equal(t, exitRefused, code)
	assert.Contains(t, out, "\tnot-executable\t")

	code, _, stderr := runCLI(t, "resolve", "--workspace", ws, "--access", "delete", "x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "invalid --access")
	code, _, _ = runCLI(t, "resolve", "--workspace", ws)
	assert.Equal(t, exitUsage, code, "no PATH")
}

func TestResolveJSON(t *testing.T) {
	ws, _, outside := resolveTree(t)
	code, out, _ := runCLI(t, "resolve", "--json", "--workspace", ws, "--deny", ".env", "sub/a.go", filepath.Join(outside, "secret"), ".env")
	assert.Equal(t, exitRefused, code)
	var got []resolveResult
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r resolveResult
		require.NoError(t, dec.Decode(&r))
		got = append(got, r)
	}
	assert.Equal(t, []resolveResult{
		{Path: "sub/a.go", OK: true, Canonical: filepath.Join(ws, "sub/a.go")},
		{Path: filepath.Join(outside, "secret"), Reason: "outside", Error: "path is outside the workspace"},
		{Path: ".env", Reason: "denied", Error: "path is denied by policy"},
	}, got)
	assert.Equal(t, 3, strings.Count(out, "\n"), "one object per line")
}
