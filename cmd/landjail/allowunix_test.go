package main

import (
	"encoding/json"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
)

// unixHost is a directory outside any workspace (not below /tmp, which
// the namespace layer makes private), world-reachable, holding stream
// UNIX sockets a.sock and b.sock (answering "A" and "B") and a datagram
// socket d.sock, all writable by every user (connect needs write
// permission on the socket).
type unixHost struct {
	dir  string
	recv chan struct{} // one per datagram d.sock received
}

func newUnixHost(t *testing.T) *unixHost {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "landjail-unix-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	h := &unixHost{dir: dir, recv: make(chan struct{}, 100)}
	for _, name := range []string{"a", "b"} {
		l, err := net.Listen("unix", filepath.Join(dir, name+".sock"))
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(strings.ToUpper(name)))
				c.Close()
			}
		}()
	}
	d, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "d.sock"), Net: "unixgram"})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	go func() {
		buf := make([]byte, 16)
		for {
			if _, _, err := d.ReadFromUnix(buf); err != nil {
				return
			}
			h.recv <- struct{}{}
		}
	}()
	for _, n := range []string{"a.sock", "b.sock", "d.sock"} {
		require.NoError(t, os.Chmod(filepath.Join(dir, n), 0o777))
	}
	return h
}

func (h *unixHost) path(name string) string { return filepath.Join(h.dir, name) }

// probeLines runs argv and returns unixprobe's answer per target.
func probeLines(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(l, "landjail") {
			got[k] = v
		}
	}
	return got
}

// unixBrokered reports whether --allow-unix is enforced by the broker
// under the running emulation (Landlock present); without Landlock the
// named sockets are refused too.
func unixBrokered() bool {
	_, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock)
	return !blocked && landlock.ABI() >= 1
}

// TestAllowUnixRun: a confined command reaches a host socket outside the
// workspace only when it is named with --allow-unix, and no other socket:
// b.sock stays refused, datagram sends (to d.sock) too; a datagram socket
// cannot be named (usage error). Control: the same probe unconfined
// reaches all three. In each layer (namespace view, --no-namespaces), and
// with --report the enforcement is said.
func TestAllowUnixRun(t *testing.T) {
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/unixprobe", "CGO_ENABLED=0")
	h := newUnixHost(t)
	targets := []string{h.path("a.sock"), h.path("b.sock"), "dgram:" + h.path("d.sock")}

	code, out := runBin(t, probe, nil, targets...)
	require.Equal(t, 0, code, out)
	got := probeLines(out)
	assert.Equal(t, "ok A", got[h.path("a.sock")], "control: unconfined")
	assert.Equal(t, "ok B", got[h.path("b.sock")], "control: unconfined")
	assert.Equal(t, "ok sent", got["dgram:"+h.path("d.sock")], "control: unconfined")
	<-h.recv

	for _, layer := range [][]string{nil, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"run"}, layer...), " "), func(t *testing.T) {
			ws := wsDir(t)
			p := filepath.Join(ws, "unixprobe")
			data, err := os.ReadFile(probe)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data, 0o755))
			list := filepath.Join(ws, "targets")
			require.NoError(t, os.WriteFile(list, []byte(strings.Join(targets, "\n")), 0o644))
			run := func(flags ...string) map[string]string {
				args := append(append(append([]string{"run", "--workspace", ws}, layer...), flags...), "--", p, "@"+list)
				_, out := runBin(t, bin, nil, args...)
				return probeLines(out)
			}
			got := run()
			for _, tg := range targets {
				assert.NotContains(t, got[tg], "ok", "without --allow-unix: %s", tg)
			}
			rep := filepath.Join(t.TempDir(), "report.json")
			got = run("--allow-unix", h.path("a.sock"), "--report", rep)
			if unixBrokered() {
				assert.Equal(t, "ok A", got[h.path("a.sock")], "named")
			} else {
				assert.Equal(t, "operation not permitted", got[h.path("a.sock")], "no Landlock: refused (fail closed)")
			}
			assert.NotContains(t, got[h.path("b.sock")], "ok", "not named")
			assert.Equal(t, "operation not permitted", got["dgram:"+h.path("d.sock")], "datagram sockets stay refused")
			var r struct {
				AllowUnix struct {
					Sockets     []struct{ Path string }
					Enforcement string
				} `json:"allow_unix"`
			}
			data, err = os.ReadFile(rep)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(data, &r))
			require.Len(t, r.AllowUnix.Sockets, 1)
			assert.Equal(t, h.path("a.sock"), r.AllowUnix.Sockets[0].Path)
			if unixBrokered() {
				assert.True(t, strings.HasPrefix(r.AllowUnix.Enforcement, "seccomp broker"), r.AllowUnix.Enforcement)
			} else {
				assert.True(t, strings.HasPrefix(r.AllowUnix.Enforcement, "refused"), r.AllowUnix.Enforcement)
			}
		})
	}
	t.Run("usage", func(t *testing.T) {
		for _, path := range []string{h.path("d.sock"), h.dir, h.path("missing")} {
			code, _, stderr := runCLI(t, "run", "--allow-unix", path, "--print-rules", "--", "true")
			assert.Equal(t, 125, code, stderr)
			assert.Contains(t, stderr, "invalid --allow-unix", path)
		}
		code, _, stderr := runCLI(t, "run", "--allow-unix", h.path("a.sock"), "--user", "65534", "--print-rules", "--", "true")
		assert.Equal(t, 125, code, stderr)
		// --no-seccomp: not enforced, said; --strict refuses.
		ws := wsDir(t)
		code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--no-seccomp", "--allow-unix", h.path("a.sock"), "--", "true")
		assert.Equal(t, 0, code, out)
		assert.Contains(t, out, "landjail: warning: --allow-unix NOT enforced")
		code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--strict", "--no-seccomp", "--allow-unix", h.path("a.sock"), "--", "true")
		assert.Equal(t, 125, code, out)
	})
}

// TestAllowUnixTCPUnderLandlock: with --allow-unix every connect goes
// through landjail; a TCP connect is made on the broker thread, under the
// command's Landlock rules: the --connect-tcp port connects, another port
// is refused (EACCES) as without --allow-unix. Shown red with the broker
// connecting on an unconfined thread (the other port then connected).
func TestAllowUnixTCPUnderLandlock(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/unixprobe", "CGO_ENABLED=0")
	h := newUnixHost(t)
	var ports []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("T"))
				c.Close()
			}
		}()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	ws := wsDir(t)
	p := filepath.Join(ws, "unixprobe")
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, data, 0o755))
	_, out := runBin(t, bin, nil, "run", "--workspace", ws, "--no-namespaces", "--connect-tcp", ports[0],
		"--allow-unix", h.path("a.sock"), "--", p, "tcp:"+ports[0], "tcp:"+ports[1], h.path("a.sock"))
	got := probeLines(out)
	assert.Equal(t, "ok T", got["tcp:"+ports[0]], out)
	assert.Equal(t, "permission denied", got["tcp:"+ports[1]], out)
	assert.Equal(t, "ok A", got[h.path("a.sock")], out)
}

// TestAllowUnixUnprivileged: landjail run as uid 65534. With the
// namespace layer the command is started by the user-namespace stage,
// where no broker runs: the named socket is refused too (EPERM), and
// --print-rules says so. With --no-namespaces and --timeout the run is
// brokered: the named socket connects, the other does not. Control: the
// same probe as uid 65534 unconfined reaches both.
func TestAllowUnixUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature
	}
	if _, err := osexec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/unixprobe", "CGO_ENABLED=0")
	h := newUnixHost(t)
	ws, err := os.MkdirTemp("/var/tmp", "landjail-unix-ws-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(ws) })
	require.NoError(t, os.Chown(ws, 65534, 65534))
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	p := filepath.Join(ws, "unixprobe")
	require.NoError(t, os.WriteFile(p, data, 0o755))
	as := func(args ...string) map[string]string {
		cmd := osexec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, args...)...)
		cmd.Env = []string{"HOME=" + ws, "PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		return probeLines(string(out))
	}
	a, b := h.path("a.sock"), h.path("b.sock")
	got := as(p, a, b)
	require.Equal(t, "ok A", got[a], "control")
	require.Equal(t, "ok B", got[b], "control")

	list := filepath.Join(ws, "targets")
	require.NoError(t, os.WriteFile(list, []byte(a+"\n"+b), 0o644))
	run := func(flags ...string) []string {
		return append(append([]string{bin, "run", "--workspace", ws, "--allow-unix", a}, underEmulation(append([]string{"run"}, flags...))[1:]...), "--", p, "@"+list)
	}
	got = as(run("--no-namespaces", "--timeout", "1m")...)
	if unixBrokered() {
		assert.Equal(t, "ok A", got[a], "--no-namespaces: brokered")
	} else {
		assert.Equal(t, "operation not permitted", got[a])
	}
	assert.NotContains(t, got[b], "ok")
	// Whether the default layer is the user-namespace stage for this
	// user, as landjail says (not under ns=EPERM, nor where the kernel
	// refuses unprivileged user namespaces).
	cmd := osexec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, append(run("--print-rules"), "true")...)...)
	cmd.Env = []string{"HOME=" + ws, "PATH=/usr/bin:/bin"}
	rules, _ := cmd.CombinedOutput()
	userNS := strings.Contains(string(rules), "# user namespace: yes")
	got = as(run()...)
	if userNS || !unixBrokered() {
		assert.NotContains(t, got[a], "ok", "user-namespace stage (or no Landlock): refused")
	} else {
		assert.Equal(t, "ok A", got[a], "landlock-only: brokered")
	}
	assert.NotContains(t, got[b], "ok")
	if userNS {
		assert.Contains(t, string(rules), "# allow-unix: refused: the command is started by the user-namespace stage")
		cmd = osexec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--"}, run()...)...)
		cmd.Env = []string{"HOME=" + ws, "PATH=/usr/bin:/bin"}
		out, _ := cmd.CombinedOutput()
		assert.Contains(t, string(out), "landjail: warning: --allow-unix refused: ", "said on stderr")
	}
}

// TestAllowUnixMeetsModeBits: a named socket is reached with the
// command's permission checks, not landjail's: root's command holds no
// capability, so another user's 0600 socket refuses its connect
// (EACCES), as the kernel refuses a root process without
// CAP_DAC_OVERRIDE (control: the probe under setpriv with every
// capability dropped), while root with its capabilities connects
// (control). Red with the brokered connect made on a supervisor thread
// that kept root's capabilities.
func TestAllowUnixMeetsModeBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: another user's socket, and capabilities to drop") // not a kernel feature
	}
	if _, err := osexec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/unixprobe", "CGO_ENABLED=0")
	h := newUnixHost(t)
	theirs := h.path("theirs.sock")
	l, err := net.Listen("unix", theirs)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("T"))
			c.Close()
		}
	}()
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	require.NoError(t, os.Chmod(theirs, 0o600))

	code, out := runBin(t, probe, nil, theirs)
	require.Equal(t, 0, code, out)
	assert.Equal(t, "ok T", probeLines(out)[theirs], "control: root with its capabilities")
	capless, _ := osexec.Command("setpriv", "--inh-caps=-all", "--bounding-set=-all", "--", probe, theirs).CombinedOutput()
	assert.Equal(t, "permission denied", probeLines(string(capless))[theirs], "control: root without capabilities")

	for _, layer := range [][]string{nil, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"run"}, layer...), " "), func(t *testing.T) {
			if !unixBrokered() {
				t.Skip("no Landlock: --allow-unix refuses every socket (TestAllowUnixRun)")
			}
			ws := wsDir(t)
			p := filepath.Join(ws, "unixprobe")
			data, err := os.ReadFile(probe)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data, 0o755))
			args := append(append([]string{"run", "--workspace", ws, "--allow-unix", theirs}, layer...), "--", p, theirs)
			_, out := runBin(t, bin, nil, args...)
			assert.Equal(t, "permission denied", probeLines(out)[theirs], out)
		})
	}
}

// TestAllowUnixSSHAgent: ssh-add lists the keys of an ssh-agent whose
// socket is named with --allow-unix, and cannot reach it otherwise
// (exit 2, "Error connecting to agent"). Control: unconfined it lists the
// key.
func TestAllowUnixSSHAgent(t *testing.T) {
	for _, prog := range []string{"ssh-agent", "ssh-add", "ssh-keygen"} {
		if _, err := osexec.LookPath(prog); err != nil {
			t.Skipf("no %s", prog)
		}
	}
	if !unixBrokered() {
		t.Skip("no Landlock: --allow-unix refuses every socket (TestAllowUnixRun)")
	}
	bin := landjailBin(t)
	dir, err := os.MkdirTemp("/var/tmp", "landjail-agent-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "agent.sock")
	agent := osexec.Command("ssh-agent", "-D", "-a", sock)
	require.NoError(t, agent.Start())
	t.Cleanup(func() { agent.Process.Kill(); agent.Wait() })
	key := filepath.Join(dir, "key")
	out, err := osexec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "landjail-agent-test", "-f", key).CombinedOutput()
	require.NoError(t, err, "%s", out)
	env := append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	for i := 0; ; i++ { // the agent creates its socket after starting
		add := osexec.Command("ssh-add", "-q", key)
		add.Env = env
		if out, err = add.CombinedOutput(); err == nil || i > 50 {
			break
		}
		osexec.Command("sleep", "0.1").Run()
	}
	require.NoError(t, err, "%s", out)
	list := osexec.Command("ssh-add", "-l")
	list.Env = env
	out, err = list.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "landjail-agent-test", "control: unconfined")

	ws := wsDir(t)
	code, got := runBin(t, bin, nil, "run", "--workspace", ws, "--env", "SSH_AUTH_SOCK="+sock, "--allow-unix", sock, "--", "ssh-add", "-l")
	assert.Equal(t, 0, code, got)
	assert.Contains(t, got, "landjail-agent-test")
	code, got = runBin(t, bin, nil, "run", "--workspace", ws, "--env", "SSH_AUTH_SOCK="+sock, "--", "ssh-add", "-l")
	assert.Equal(t, 2, code, got)
	assert.Contains(t, got, "Error connecting to agent")
}

// TestAllowUnixWithAllowDomain: --allow-unix is accepted with
// --allow-domain (unlike --allow-unix-sockets): a named socket is the
// caller's explicit grant, and every other socket stays refused, so no
// daemon socket the caller did not name opens a way around the proxy.
// The command reaches the named socket and, through the brokered TCP
// connect, the proxy (a listed host answers 200, another 403); the other
// socket stays refused. Control: TestAllowUnixRun's unconfined probe.
func TestAllowUnixWithAllowDomain(t *testing.T) {
	useNetproxy(t)
	probe := buildCLI(t, "./testdata/unixprobe", "CGO_ENABLED=0")
	h := newUnixHost(t)
	srv := newHitServer(t, false)
	for _, tc := range proxyLayers {
		t.Run(tc.name, func(t *testing.T) {
			mode := wantProxyMode(t, tc.noNS)
			ws := wsDir(t)
			p := filepath.Join(ws, "unixprobe")
			data, err := os.ReadFile(probe)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, data, 0o755))
			list := filepath.Join(ws, "targets")
			require.NoError(t, os.WriteFile(list, []byte(strings.Join([]string{h.path("a.sock"), h.path("b.sock"), "proxy:localhost:" + srv.port(), "proxy:evil.test"}, "\n")), 0o644))
			args := append(append([]string{"run", "--workspace", ws, "--timeout", "1m",
				"--allow-domain", "localhost:" + srv.port(), "--allow-unix", h.path("a.sock")}, tc.flags...),
				"--", p, "@"+list)
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got := probeLines(stdout)
			if unixBrokered() {
				assert.Equal(t, "ok A", got[h.path("a.sock")], stdout)
			}
			assert.NotContains(t, got[h.path("b.sock")], "ok", stdout)
			if mode == cliopts.NetworkUnreachable {
				return
			}
			assert.True(t, strings.HasPrefix(got["proxy:localhost:"+srv.port()], "ok HTTP/1.1 200"), stdout)
			assert.True(t, strings.HasPrefix(got["proxy:evil.test"], "ok HTTP/1.1 403"), stdout)
		})
	}
}
