package main

import (
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunSeccomp: run adds the seccomp layer by default and its flags
// open exactly what they name.
func TestRunSeccomp(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	bin := sockprobe(t)
	ws := filepath.Dir(bin)
	const (
		eperm   = "operation not permitted"
		eacces  = "permission denied"
		refused = "connection refused"
	)
	lines := func(kv ...string) string {
		var b strings.Builder
		for i := 0; i < len(kv); i += 2 {
			b.WriteString(kv[i] + " " + kv[i+1] + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, lines("unix", eperm, "udp", eperm, "tcp", "ok", "sockdiag", eperm, "dgrampair", eperm, "listen", eperm, "fastopen", eperm)},
		// UNIX sockets allowed: listen goes through the supervisor,
		// which refuses a TCP socket never bound.
		{[]string{"--allow-unix-sockets"}, lines("unix", "ok", "udp", eperm, "tcp", "ok", "sockdiag", eperm, "dgrampair", "ok", "listen", eacces, "fastopen", eperm)},
		{[]string{"--allow-dns"}, lines("unix", eperm, "udp", "ok", "tcp", "ok", "sockdiag", eperm, "dgrampair", eperm, "listen", eperm, "fastopen", eperm)},
		{[]string{"--net", "host"}, lines("unix", eperm, "udp", "ok", "tcp", "ok", "sockdiag", "ok", "dgrampair", eperm, "listen", "ok", "fastopen", refused)},
		{[]string{"--no-seccomp"}, lines("unix", "ok", "udp", "ok", "tcp", "ok", "sockdiag", "ok", "dgrampair", "ok", "listen", "ok", "fastopen", refused)},
	} {
		args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
		code, stdout, stderr := runCLI(t, append(args, "--", bin)...)
		assert.Equal(t, 0, code, "%v: %s", tc.flags, stderr)
		assert.Equal(t, tc.want, stdout, "%v", tc.flags)
	}
}

func sockprobe(t *testing.T) string {
	t.Helper()
	probe := buildCLI(t, "./testdata/sockprobe", "CGO_ENABLED=0")
	bin := filepath.Join(wsDir(t), "sockprobe")
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin
}

// TestRunBindTCPSupervised: with --bind-tcp and no --timeout, run keeps
// supervising instead of execve'ing (the listen rule needs it), so the
// granted port listens while a socket never bound is refused; with
// --no-seccomp the autobind bypass is back (the control).
func TestRunBindTCPSupervised(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	landjail := landjailBin(t)
	bin := sockprobe(t)
	ws := filepath.Dir(bin)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	require.NoError(t, l.Close())

	code, out := runBin(t, landjail, nil, "run", "--workspace", ws, "--bind-tcp", port, "--", bin, port)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "listen permission denied\n", "never bound: refused by the supervisor")
	assert.Contains(t, out, "bound ok\n", "the granted port listens")

	code, out = runBin(t, landjail, nil, "run", "--workspace", ws, "--bind-tcp", port, "--no-seccomp", "--", bin, port)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "listen ok\n", "control: Landlock alone lets listen autobind")
}

// TestRunRefusesSetID: a confined command cannot leave a set-user-ID or
// set-group-ID file in the workspace (the bit outlives the sandbox: any
// local user would then run the file as landjail's caller, root here):
// chmod, install -m, python's os.open(O_CREAT, 0o4755) and mkdir -m all
// fail, and no file ends with the bit. Control: the same script
// unconfined sets it. With --no-seccomp the bit is set (the rule is the
// seccomp layer's).
func TestRunRefusesSetID(t *testing.T) {
	requireProgram(t, "python3")
	const script = `cp /bin/true s1; chmod 4755 s1; chmod g+s s1
install -m 4755 /bin/true s2
python3 -c 'import os; os.close(os.open("s3", os.O_CREAT|os.O_WRONLY, 0o6755))'
mkdir -m 2755 d1
true`
	setID := func(ws string) []string {
		var got []string
		for _, n := range []string{"s1", "s2", "s3", "d1"} {
			if fi, err := os.Stat(filepath.Join(ws, n)); err == nil && fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
				got = append(got, n+" "+fi.Mode().String())
			}
		}
		return got
	}
	ctl := wsDir(t)
	cmd := osexec.Command("/bin/sh", "-c", script)
	cmd.Dir = ctl
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Len(t, setID(ctl), 4, "control: unconfined, every file got its bit")

	for _, tc := range []struct {
		flags []string
		want  int
	}{{nil, 0}, {[]string{"--no-seccomp"}, 4}} {
		ws := wsDir(t)
		args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
		code, _, stderr := runCLI(t, append(args, "--", "/bin/sh", "-c", script)...)
		require.Equal(t, 0, code, stderr)
		assert.Len(t, setID(ws), tc.want, "%v: %v", tc.flags, setID(ws))
	}
}
