package jail

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSubmoduleGitfiles: the "path = SUB" lines of .gitmodules, quoted or
// not, become anchored patterns for SUB/.git; paths that are absolute,
// unclean, outside the root or hold pattern characters are skipped.
func TestSubmoduleGitfiles(t *testing.T) {
	got := submoduleGitfiles([]byte(`[submodule "a"]
	path = libs/a
	url = https://example.com/a
[submodule "b"]
	path = "b"
[submodule "bad"]
	path = ../escape
	path = /abs
	path = x/../y
	path = st*r
	path =
	pathx = nope
`))
	assert.Equal(t, []string{"libs/a/.git", "b/.git"}, got)
}

// TestProtectedSubmoduleGitfile: with WithProtectedAgentConfig a
// submodule's gitfile cannot be rewritten to point at a git directory the
// command made (red-team: its core.fsmonitor then ran on the user's next
// `git status` in the superproject). Control: without the option it can.
func TestProtectedSubmoduleGitfile(t *testing.T) {
	for _, protect := range []bool{true, false} {
		root := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(root, ".gitmodules"), []byte("[submodule \"sub\"]\n\tpath = sub\n"), 0o644))
		require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, "sub", ".git"), []byte("gitdir: ../.git/modules/sub\n"), 0o644))
		var opts []Option
		if protect {
			opts = append(opts, WithProtectedAgentConfig())
		}
		w, err := New(root, opts...)
		require.NoError(t, err)
		err = w.WriteFile("sub/.git", []byte("gitdir: evilgit\n"), 0o644)
		if protect {
			assert.ErrorIs(t, err, ErrReadOnly)
		} else {
			assert.NoError(t, err, "control")
		}
		w.Close()
	}
}

// TestGitmodulesFIFO: a .gitmodules that is a FIFO (planted by an
// earlier run) does not block New with WithProtectedAgentConfig (red
// team round 26, R26a-10: landjail's start hung for ever, landjail-mcp's
// past SIGTERM); it names no submodule. Control: a regular one is read
// (TestProtectedSubmoduleGitfile).
func TestGitmodulesFIFO(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, unix.Mkfifo(filepath.Join(root, ".gitmodules"), 0o644))
	done := make(chan error, 1)
	go func() {
		w, err := New(root, WithProtectedAgentConfig())
		if err == nil {
			w.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("New blocked on a .gitmodules FIFO") // the goroutine stays blocked: the test binary is killed at exit
	}
}
