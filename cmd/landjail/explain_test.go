package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/refusal"
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
		{"outside read", denials.Denial{Blockers: []string{"fs.read_file"}, Path: out + "/secret", Count: 2}, "read_file", "outside every allowed root", "--ro " + out + "/secret"},
		{"outside write", denials.Denial{Blockers: []string{"fs.make_reg"}, Path: out + "/new"}, "make_reg", "outside every allowed root", "--rw " + out},
		{"deny pattern", denials.Denial{Blockers: []string{"fs.read_file"}, Path: ws + "/.env"}, "read_file", "deny pattern", "drop the pattern"},
		{"read-only path", denials.Denial{Blockers: []string{"fs.write_file"}, Path: ws + "/docs/a.md"}, "write_file", "read-only", "--rw " + ws + "/docs/a.md"},
		{"no execute in a ro root", denials.Denial{Blockers: []string{"fs.execute"}, Path: ro + "/tool"}, "execute", "without execute", "--rox " + ro + "/tool"},
		{"device ioctl", denials.Denial{Blockers: []string{"fs.ioctl_dev"}, Path: "/dev/null"}, "ioctl_dev", "device", "--rw /dev/null"},
		{"frozen directory", denials.Denial{Blockers: []string{"fs.make_reg"}, Path: ws + "/NEW"}, "make_reg", "frozen by carve-outs", "--no-carve"},
		{"tcp connect", denials.Denial{Blockers: []string{"net.connect_tcp"}, Addr: "127.0.0.1", Port: 443}, "connect_tcp", "port not allowed", "--connect-tcp 443"},
		{"tcp bind", denials.Denial{Blockers: []string{"net.bind_tcp"}, Port: 8080}, "bind_tcp", "port not allowed", "--bind-tcp 8080"},
		{"signal", denials.Denial{Blockers: []string{"scope.signal"}, OPID: 1}, "signal", "scope", "--no-scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := explain(w, tc.d)
			assert.Equal(t, tc.right, x.Right)
			assert.Contains(t, x.Rule, tc.why)
			assert.Contains(t, x.Remedy(), tc.allow)
		})
	}
}

// TestGroupProc: denials of numbered /proc entries fold into one line per
// right (counts summed, paths counted); /proc/self, /proc/1x (not a
// number) and other paths stay one line each, in order.
func TestGroupProc(t *testing.T) {
	in := []refusal.Refusal{
		{Right: "read_file", Path: "/etc/shadow", Count: 1, Rule: "outside"},
		{Right: "read_file", Path: "/proc/1/environ", Count: 2, Comm: "ps"},
		{Right: "read_dir", Path: "/proc/42/fd", Count: 1, Comm: "ps"},
		{Right: "read_file", Path: "/proc/self/status", Count: 1},
		{Right: "read_file", Path: "/proc/77/cmdline", Count: 3, Comm: "ps"},
		{Right: "read_file", Path: "/proc/1x/stat", Count: 1},
		{Right: "read_file", Path: "/proc/9", Count: 1, Comm: "top"},
	}
	got := groupProc(in)
	var lines []string
	for _, x := range got {
		lines = append(lines, fmt.Sprintf("%s %s %d %s", x.Right, x.Path, x.Count, x.Comm))
	}
	assert.Equal(t, []string{
		"read_file /etc/shadow 1 ",
		"read_file /proc/PID/* 6 ",
		"read_dir /proc/PID/* 1 ps",
		"read_file /proc/self/status 1 ",
		"read_file /proc/1x/stat 1 ",
	}, lines)
	assert.True(t, strings.HasPrefix(got[1].Rule, "3 paths, other processes' /proc entries"), got[1].Rule)
	assert.True(t, strings.HasPrefix(got[2].Rule, "1 path, "), got[2].Rule)
}

// TestRunExplain: the built landjail, --explain: a read outside the
// policy and a TCP connect to a port not granted are each printed with
// the right, the path or port, why, and the flag that would allow it,
// and listed in the --report file. Without --explain, a failing command
// gets one line pointing to it. Needs root and Landlock ABI 7 (audit);
// the audit state is left as found (internal/denials restores it).
func TestRunExplain(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	// The outside directory is not below /tmp: the namespace layer (on
	// by default) gives the command a private /tmp, where it would not
	// exist at all instead of being denied.
	ws := wsDir(t)
	outside, err := os.MkdirTemp("/var/tmp", "landjail-explain-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	rep := filepath.Join(wsDir(t), "rep.json")

	script := fmt.Sprintf("cat %s; exec 3<>/dev/tcp/127.0.0.1/%d", secret, port)
	// audit is one per machine: a test binary of another package that
	// sets its state meanwhile (sandbox, landjail-mcp: not serialized by
	// SerializeAudit) can leave a run without Landlock's records (CI's
	// loaded native pass: only the seccomp event came). Up to three runs;
	// a real regression fails all three.
	var code int
	var out string
	for try := 0; try < 3; try++ {
		code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--explain", "--report", rep, "--", "bash", "-c", script)
		if strings.Contains(out, "read_file "+secret) {
			break
		}
		t.Logf("run %d without Landlock's records: %s", try+1, out)
	}
	assert.NotEqual(t, 0, code, out)
	assert.NotContains(t, out, "s3cret")
	assert.Contains(t, out, "read_file "+secret)
	assert.Contains(t, out, "outside every allowed root; to allow: --ro "+secret)
	assert.Contains(t, out, fmt.Sprintf("connect_tcp TCP port %d", port))
	assert.Contains(t, out, fmt.Sprintf("to allow: --connect-tcp %d", port))

	b, err := os.ReadFile(rep)
	require.NoError(t, err)
	var r runReport
	require.NoError(t, json.Unmarshal(b, &r))
	var rights []string
	for _, d := range r.Denials {
		rights = append(rights, d.Right)
	}
	assert.Contains(t, rights, "read_file")
	assert.Contains(t, rights, "connect_tcp")

	// Without --explain: one line pointing to it only when the status
	// looks like a refusal (126: a shell's "cannot execute"), never for a
	// plain failure (exit 7, or cat's 1: landjail has no evidence of a
	// refusal without --explain; issue 23).
	code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", "exit 126")
	assert.Equal(t, 126, code)
	assert.Contains(t, out, "--explain lists what")
	code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--timeout", "1m", "--", "sh", "-c", "exit 7")
	assert.Equal(t, 7, code)
	assert.NotContains(t, out, "--explain")
}
