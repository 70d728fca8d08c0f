package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileToolsMeetModeBits: landjail-mcp as root, its file tools meet
// a file's mode bits as its bash does (no CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH or CAP_FOWNER): another user's 0700 directory and
// 0600 file in the workspace, and root's own chmod 000 file, are refused
// to read_file, list_directory, grep and write_file (red team round 27,
// R27c-1: read and written before). Controls: the same calls on a
// readable file and a writable directory of that user work, and a
// write there keeps the file's owner and exact mode.
func TestFileToolsMeetModeBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: capabilities to drop")
	}
	t.Parallel()
	e := newEnv(t, []string{"pgdata/pw.txt=OTHERUSER_SECRET\n", "locked=ROOT_LOCKED\n", "shared/notes=NOTES\n", "open.txt=OPEN\n",
		"theirs.txt=THEIRS\n", "theirs-ro.txt=THEIRS\n"})
	chown := func(name string, mode os.FileMode) {
		p := filepath.Join(e.root, name)
		require.NoError(t, os.Chown(p, 65534, 65534))
		require.NoError(t, os.Chmod(p, mode))
	}
	chown("pgdata/pw.txt", 0o600)
	chown("pgdata", 0o700)
	require.NoError(t, os.Chmod(filepath.Join(e.root, "locked"), 0))
	chown("shared/notes", 0o666)
	chown("shared", 0o777)
	chown("theirs.txt", 0o644)
	chown("theirs-ro.txt", 0o444)

	ctx := context.Background()
	call := func(tool, args string) (string, error) {
		r, err := e.k.Call(ctx, tool, json.RawMessage(args))
		if err != nil {
			return "", err
		}
		return r.String(), nil
	}
	for _, c := range [][2]string{
		{"read_file", `{"path":"pgdata/pw.txt"}`},
		{"read_file", `{"path":"locked"}`},
		{"list_directory", `{"path":"pgdata"}`},
		{"write_file", `{"path":"pgdata/planted","content":"x"}`},
	} {
		out, err := call(c[0], c[1])
		assert.ErrorIs(t, err, os.ErrPermission, "%s %s: %s", c[0], c[1], out)
	}
	_, err := os.Lstat(filepath.Join(e.root, "pgdata", "planted"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	// Another user's file that root may read but not write in place,
	// in root's own directory: write_file does not replace it (red
	// team round 28, R28a-1: replaced by rename, the agent's content
	// kept their owner), as edit_file and bash do not write it.
	for _, n := range []string{"theirs.txt", "theirs-ro.txt"} {
		_, err = call("read_file", `{"path":"`+n+`"}`)
		require.NoError(t, err, n)
		for _, c := range [][2]string{
			{"write_file", `{"path":"` + n + `","content":"PLANTED\n"}`},
			{"edit_file", `{"path":"` + n + `","old_string":"THEIRS","new_string":"PLANTED"}`},
		} {
			out, err := call(c[0], c[1])
			assert.ErrorIs(t, err, os.ErrPermission, "%s %s: %s", c[0], n, out)
		}
		assert.Equal(t, "THEIRS\n", e.read(t, n), n)
	}
	out, _ := call("grep", `{"pattern":"SECRET|LOCKED"}`)
	assert.NotContains(t, out, "OTHERUSER_SECRET")
	assert.NotContains(t, out, "ROOT_LOCKED")

	// Controls.
	out, err = call("read_file", `{"path":"open.txt"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "OPEN")
	out, err = call("grep", `{"pattern":"OPEN|NOTES"}`)
	require.NoError(t, err)
	assert.Contains(t, out, "open.txt")
	assert.Contains(t, out, "shared/notes")
	_, err = call("read_file", `{"path":"shared/notes"}`)
	require.NoError(t, err)
	_, err = call("write_file", `{"path":"shared/notes","content":"NEW\n"}`)
	require.NoError(t, err)
	fi, err := os.Stat(filepath.Join(e.root, "shared", "notes"))
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	assert.Equal(t, [2]uint32{65534, 65534}, [2]uint32{st.Uid, st.Gid}, "owner kept")
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm(), "exact mode kept")
	assert.Equal(t, "NEW\n", e.read(t, "shared/notes"))
}
