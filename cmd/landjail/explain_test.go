package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/jail"
)

// TestExplain: each denial Landlock reports is explained in the policy's
// words (why, and the flag that would allow it), by asking the Workspace
// the same question.
func TestExplain(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, out, ro := filepath.Join(base, "ws"), filepath.Join(base, "out"), filepath.Join(base, "ro")
	for _, d := range []string{ws + "/docs", out, ro} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	for _, f := range []string{ws + "/.env", ws + "/docs/a.md", out + "/secret", ro + "/tool"} {
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	}
	w, err := jail.New(ws, jail.WithDeny(".env"), jail.WithReadOnly("docs/"), jail.WithAllowed(ro, jail.ReadOnly))
	require.NoError(t, err)
	defer w.Close()
	for _, tc := range []struct {
		name       string
		d          denials.Denial
		right, why string
		allow      string
	}{
		{"outside read", denials.Denial{Blockers: []string{"fs.read_file"}, Path: out + "/secret", Count: 2}, "read_file", "outside every allowed root", "--ro " + out},
		{"outside write", denials.Denial{Blockers: []string{"fs.make_reg"}, Path: out + "/new"}, "make_reg", "outside every allowed root", "--rw " + out},
		{"deny pattern", denials.Denial{Blockers: []string{"fs.read_file"}, Path: ws + "/.env"}, "read_file", "deny pattern", "drop the pattern"},
		{"read-only path", denials.Denial{Blockers: []string{"fs.write_file"}, Path: ws + "/docs/a.md"}, "write_file", "read-only", "--rw " + ws + "/docs"},
		{"no execute in a ro root", denials.Denial{Blockers: []string{"fs.execute"}, Path: ro + "/tool"}, "execute", "without execute", "--rox " + ro},
		{"frozen directory", denials.Denial{Blockers: []string{"fs.make_reg"}, Path: ws + "/NEW"}, "make_reg", "frozen by carve-outs", "--no-carve"},
		{"tcp connect", denials.Denial{Blockers: []string{"net.connect_tcp"}, Addr: "127.0.0.1", Port: 443}, "connect_tcp", "port not allowed", "--connect-tcp 443"},
		{"tcp bind", denials.Denial{Blockers: []string{"net.bind_tcp"}, Port: 8080}, "bind_tcp", "port not allowed", "--bind-tcp 8080"},
		{"signal", denials.Denial{Blockers: []string{"scope.signal"}, OPID: 1}, "signal", "scope", "--no-scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := explain(w, tc.d)
			assert.Equal(t, tc.right, x.Right)
			assert.Contains(t, x.Why, tc.why)
			assert.Contains(t, x.Allow, tc.allow)
		})
	}
}
