package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestAgentConfigGitReferences (red team F9): the files the repository's
// own .git/config points git at (include.path, core.hooksPath, a filter
// driver's script) are protected like .git/config, existing or not, in
// the workspace's repository and in the one above a workspace that is a
// subdirectory of it; a reference to the workspace root itself, or above
// it, never freezes the root. Control: the same writes succeed without
// the references.
func TestAgentConfigGitReferences(t *testing.T) {
	const localConfig = `[core]
	hooksPath = .hooks
[include]
	path = ../tools/gitconfig
[filter "x"]
	clean = ./scripts/clean.sh %f
[diff "y"]
	textconv = .
[core]
	editor = ../../outside.sh
`
	writes := []string{".hooks/pre-commit", "tools/gitconfig", "scripts/clean.sh"}
	for _, tc := range []struct {
		name string
		sub  string // the workspace, relative to the repository's top
	}{
		{"workspace is the repository", ""},
		{"workspace is a subdirectory", "proj"},
	} {
		for _, refs := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "", false: "/control"}[refs], func(t *testing.T) {
				top := t.TempDir()
				root := filepath.Join(top, tc.sub)
				for _, d := range []string{".git", filepath.Join(tc.sub, "tools"), filepath.Join(tc.sub, "scripts")} {
					require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
				}
				cfg := "[core]\n\tbare = false\n"
				if refs {
					cfg = localConfig
					if tc.sub != "" { // the same files, named from the top
						cfg = "[core]\n\thooksPath = proj/.hooks\n[include]\n\tpath = ../proj/tools/gitconfig\n[filter \"x\"]\n\tclean = ./proj/scripts/clean.sh\n[core]\n\tfsmonitor = ./proj\n"
					}
				}
				require.NoError(t, os.WriteFile(filepath.Join(top, ".git/config"), []byte(cfg), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(root, "tools/gitconfig"), []byte("[alias]\n"), 0o644))
				ws, err := jail.New(root, jail.WithProtectedAgentConfig())
				require.NoError(t, err)
				defer ws.Close()
				prot := ws.AgentConfigProtected()
				assert.NotContains(t, prot, ws.Root(), "the root is never protected by a reference")
				assert.NotContains(t, prot, filepath.Dir(ws.Root()))
				for _, w := range writes {
					err := ws.MkdirAll(filepath.Dir(w), 0o755) // .hooks itself cannot be made
					if err == nil {
						err = ws.WriteFile(w, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
					}
					if refs {
						assert.ErrorIs(t, err, jail.ErrReadOnly, w)
						assert.NotZero(t, ws.Narrowing(filepath.Join(ws.Root(), w))&jail.NarrowAgentConfig, w)
					} else {
						assert.NoError(t, err, "control: %s", w)
					}
				}
				assert.NoError(t, ws.WriteFile("free.txt", []byte("x"), 0o644), "the root stays writable")
			})
		}
	}
}
