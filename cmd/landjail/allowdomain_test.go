package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/landlock"
)

// wantProxyMode is the --allow-domain mode landjail run must choose in
// this test process, per matrix mode:
//
//	native, openat2=ENOSYS (root)  airtight: the namespace layer gives the
//	                               command a network namespace with only
//	                               loopback, where the proxy listens
//	ns=EPERM, or --no-namespaces   advisory: no namespace; Landlock (ABI 4)
//	                               allows TCP connect to the proxy's port only
//	landlock=ENOSYS, all=EPERM     unreachable: no Landlock (so no namespace
//	                               layer either), and the seccomp layer then
//	                               refuses every IP socket: fail closed
func wantProxyMode(t *testing.T, noNamespaces bool) cliopts.Network {
	t.Helper()
	if _, ok := kerneltest.Blocked(kerneltest.FeatureLandlock); ok || landlock.ABI() < 4 {
		return cliopts.NetworkUnreachable
	}
	_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
	if !noNamespaces && !nsBlocked {
		kerneltest.RequireFeature(t, "mount and network namespaces", nsview.Probe())
		return cliopts.NetworkAirtight
	}
	return cliopts.NetworkAdvisory
}

// useNetproxy builds cmd/landjail-netproxy, the proxy's own binary, and
// makes run use it for the rest of the test.
func useNetproxy(t *testing.T) {
	t.Helper()
	old := cliopts.NetproxyPath
	cliopts.NetproxyPath = buildCLI(t, "../landjail-netproxy")
	t.Cleanup(func() { cliopts.NetproxyPath = old })
}

// requireProgram fails (kerneltest.Missing) when a client program the
// test drives is missing: CI installs curl, git and bash.
func requireProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := osexec.LookPath(name); err != nil {
		kerneltest.Missing(t, "%s is not installed (.ci/run installs it): this test drives a real %s through the proxy", name, name)
	}
}

// hitServer is an HTTP(S) server on the host's 127.0.0.1 that counts the
// requests per path and answers "hello PATH".
type hitServer struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newHitServer(t *testing.T, tls bool) *hitServer {
	s := &hitServer{hits: map[string]int{}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})
	s.Server = listentest.HTTPServer(t, tls, h)
	return s
}

func (s *hitServer) port() string {
	return strconv.Itoa(listentest.Port(s.Listener))
}

func (s *hitServer) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// udpSink counts datagrams received on the host's 127.0.0.1.
type udpSink struct {
	conn net.PacketConn
	n    atomic.Int32
}

func newUDPSink(t *testing.T) *udpSink {
	c, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	u := &udpSink{conn: c}
	go func() {
		buf := make([]byte, 512)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			u.n.Add(1)
		}
	}()
	t.Cleanup(func() { c.Close() })
	return u
}

func (u *udpSink) port() string { return strconv.Itoa(u.conn.LocalAddr().(*net.UDPAddr).Port) }

// received waits briefly for a datagram (a datagram sent is delivered on
// loopback at once; the wait only covers scheduling).
func (u *udpSink) received() int {
	deadline := time.Now().Add(300 * time.Millisecond)
	for u.n.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return int(u.n.Load())
}

// hostIP is a non-loopback IPv4 address of this host ("" if none): a
// connect to it from a network namespace with only loopback finds no
// route (ENETUNREACH), from the host it reaches the host (ECONNREFUSED
// on a closed port).
func hostIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// proxyScript runs one client per line and prints NAME=RESULT. $P is the
// proxy's port, taken from HTTP_PROXY as landjail sets it.
const proxyScript = `P=${HTTP_PROXY##*:}
code() { curl -sS -m 10 -o /dev/null -w '%{http_code}' "$@" 2>/dev/null; }
echo "allowed=$(curl -sS -m 10 http://localhost:$HP/allowed 2>&1)"
echo "connect=$(curl -sSk -m 10 https://localhost:$TP/connect 2>&1)"
echo "notlisted=$(code http://notlisted.test:$HP/notlisted)"
echo "iplit=$(code http://127.0.0.1:$HP/iplit)"
echo "connect-notlisted=$(curl -sSk -m 10 -o /dev/null -w '%{http_connect}' https://notlisted.test:$TP/cn 2>/dev/null)"
echo "direct=$(curl -sS -m 5 --noproxy '*' http://127.0.0.1:$HP/direct 2>/dev/null || echo failed)"
echo "udp=$( (echo x >/dev/udp/127.0.0.1/$UP) 2>/dev/null && echo sent || echo refused)"
if [ -n "$HOSTIP" ]; then echo "hostip=$( (exec 3<>/dev/tcp/$HOSTIP/$P) 2>&1 | sed -n '1s/.*: //p')"; fi
`

// proxyLayers are the two ways --allow-domain runs: the default (airtight
// where the namespace layer exists) and --no-namespaces (advisory);
// wantProxyMode says which mode each row expects in the current
// emulation mode.
var proxyLayers = []struct {
	name  string
	flags []string
	noNS  bool
}{
	{name: "default"},
	{name: "--no-namespaces", flags: []string{"--no-namespaces"}, noNS: true},
}

// TestAllowDomainRun: landjail run --allow-domain localhost:PORT with real
// curl against local HTTP and HTTPS servers on the host's loopback. In
// every mode the allowed name works over HTTP and through CONNECT, a
// name not listed and the IP literal of the listed name are refused with
// 403 (the server sees nothing), the refusals are in the report and on
// stderr, and a proxy the caller passes with --env is replaced. What
// differs by mode (wantProxyMode): airtight and advisory stop a direct
// connection around the proxy and UDP, and only airtight has no route to
// the host (ENETUNREACH instead of ECONNREFUSED); not enforced lets the
// direct connection through and says so on stderr. The unconfined
// control shows the direct connection and the datagram do arrive
// without landjail.
func TestAllowDomainRun(t *testing.T) {
	requireProgram(t, "curl")
	requireProgram(t, "bash")
	useNetproxy(t)
	for _, tc := range proxyLayers {
		t.Run(tc.name, func(t *testing.T) {
			mode := wantProxyMode(t, tc.noNS)
			plain, tlsSrv, udp := newHitServer(t, false), newHitServer(t, true), newUDPSink(t)
			hip := hostIP()
			ws := wsDir(t)
			rep := filepath.Join(t.TempDir(), "report.json")
			args := append([]string{"run", "--workspace", ws, "--timeout", "2m", "--report", rep,
				"--allow-domain", "localhost:" + plain.port(), "--allow-domain", "localhost:" + tlsSrv.port(),
				// A proxy and NO_PROXY of the caller's must not send
				// the command around landjail's proxy.
				"--env", "http_proxy=http://127.0.0.1:9", "--env", "NO_PROXY=*",
				"--env", "HP=" + plain.port(), "--env", "TP=" + tlsSrv.port(), "--env", "UP=" + udp.port(), "--env", "HOSTIP=" + hip,
			}, tc.flags...)
			// A script file, not bash -c: without Landlock the
			// path-check fallback would take the URLs in a -c script
			// for paths outside the policy and refuse it.
			require.NoError(t, os.WriteFile(filepath.Join(ws, "clients.sh"), []byte(proxyScript), 0o644))
			code, stdout, stderr := runCLI(t, append(args, "--", "bash", "clients.sh")...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)

			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				k, v, _ := strings.Cut(l, "=")
				got[k] = v
			}
			want := map[string]string{
				"allowed": "hello /allowed", "connect": "hello /connect",
				"notlisted": "403", "iplit": "403", "connect-notlisted": "403",
				"direct": "failed", "udp": "refused",
			}
			if hip != "" {
				want["hostip"] = "Connection refused" // the host's address, on the proxy's port: nothing there
			}
			switch mode {
			case cliopts.NetworkAirtight:
				if hip != "" {
					want["hostip"] = "Network is unreachable" // only loopback in the namespace
				}
				// Transparent egress lets UDP sockets be made (the
				// resolver's, to the in-namespace responder): the
				// datagram goes out of the socket but stays in the
				// namespace (udp.received below is still zero).
				want["udp"] = "sent"
				assert.NotContains(t, stderr, "allowlist is")
			case cliopts.NetworkAdvisory:
				assert.Contains(t, stderr, "landjail: warning: allowlist is advisory: ")
			case cliopts.NetworkUnreachable:
				// Not even the proxy: every IP socket is refused.
				for _, k := range []string{"allowed", "connect"} {
					assert.Contains(t, got[k], "Couldn't connect to server")
					got[k] = want[k]
				}
				for _, k := range []string{"notlisted", "iplit", "connect-notlisted"} {
					want[k] = "000"
				}
				if hip != "" {
					want["hostip"] = "Operation not permitted"
				}
				assert.Contains(t, stderr, "landjail: warning: allowlist unusable, no network at all: ")
			}
			assert.Equal(t, want, got, "mode %s; stderr: %s", mode, stderr)
			reached := 1
			if mode == cliopts.NetworkUnreachable {
				reached = 0
			}
			assert.Equal(t, reached, plain.count("/allowed"))
			assert.Equal(t, reached, tlsSrv.count("/connect"))
			for _, p := range []string{"/notlisted", "/iplit"} {
				assert.Zero(t, plain.count(p), "the server saw %s", p)
			}
			assert.Zero(t, tlsSrv.count("/cn"))
			assert.Zero(t, plain.count("/direct"), "a direct connection around the proxy reached the server")
			assert.Zero(t, udp.received(), "a datagram left the sandbox")

			// Refusals: on stderr, one line each, and in the report.
			wantRefused := []string{
				"landjail: proxy refused notlisted.test:" + plain.port() + " 1 time (" + "not on the allowlist)",
				"landjail: proxy refused 127.0.0.1:" + plain.port() + " 1 time (not on the allowlist)",
				"landjail: proxy refused notlisted.test:" + tlsSrv.port() + " 1 time (not on the allowlist)",
			}
			if mode == cliopts.NetworkUnreachable {
				wantRefused = nil // nothing reached the proxy
			}
			for _, l := range wantRefused {
				assert.Contains(t, stderr, l+"\n")
			}
			var r runReport
			b, err := os.ReadFile(rep)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &r), "%s", b)
			assert.Equal(t, mode, r.Network)
			assert.Equal(t, mode != cliopts.NetworkAirtight, r.NetworkReason != "", r.NetworkReason)
			hp, _ := strconv.Atoi(plain.port())
			tp, _ := strconv.Atoi(tlsSrv.port())
			wantReport := []cliopts.Refusal{
				{Host: "127.0.0.1", Port: uint16(hp), Count: 1, Reason: "not on the allowlist"},
				{Host: "notlisted.test", Port: uint16(hp), Count: 1, Reason: "not on the allowlist"},
				{Host: "notlisted.test", Port: uint16(tp), Count: 1, Reason: "not on the allowlist"},
			}
			switch mode {
			case cliopts.NetworkUnreachable:
				wantReport = nil
			case cliopts.NetworkAirtight:
				// The direct connection met the transparent listener
				// of the listed port inside the namespace.
				wantReport = append(wantReport, cliopts.Refusal{Host: "127.0.0.1", Port: uint16(hp), Count: 1,
					Reason: "direct connection to an address the DNS responder did not hand out"})
			}
			assert.ElementsMatch(t, wantReport, r.ProxyRefused)
			assert.Equal(t, mode == cliopts.NetworkAirtight, r.TransparentEgress)

			// Unconfined control: the same direct connection and
			// datagram arrive without landjail; the host has a route
			// to its own address.
			ctl := "curl -sS -m 5 --noproxy '*' http://127.0.0.1:$HP/direct-control; echo x >/dev/udp/127.0.0.1/$UP"
			if hip != "" {
				ctl += "; (exec 3<>/dev/tcp/$HOSTIP/1) 2>&1 | sed 's/.*: //'"
			}
			c := osexec.Command("bash", "-c", ctl)
			c.Env = []string{"PATH=" + os.Getenv("PATH"), "HP=" + plain.port(), "UP=" + udp.port(), "HOSTIP=" + hip}
			out, _ := c.CombinedOutput()
			assert.Equal(t, 1, plain.count("/direct-control"), "control: %s", out)
			assert.NotZero(t, udp.received(), "control: the datagram did not arrive")
			if hip != "" {
				assert.Contains(t, string(out), "Connection refused")
			}
		})
	}
}

// TestAllowDomainStrict: --strict runs the command only when the list is
// airtight; advisory and not enforced are refused with exit 125 before
// anything runs (the marker file is not created).
func TestAllowDomainStrict(t *testing.T) {
	useNetproxy(t)
	for _, tc := range proxyLayers {
		t.Run(tc.name, func(t *testing.T) {
			mode := wantProxyMode(t, tc.noNS)
			ws := wsDir(t)
			args := append([]string{"run", "--strict", "--workspace", ws, "--timeout", "1m", "--allow-domain", "example.com"}, tc.flags...)
			code, _, stderr := runCLI(t, append(args, "--", "touch", "ran")...)
			_, err := os.Stat(filepath.Join(ws, "ran"))
			switch mode {
			case cliopts.NetworkAirtight:
				require.Equal(t, 0, code, stderr)
				assert.NoError(t, err)
			case cliopts.NetworkAdvisory:
				require.Equal(t, exitUsage, code, stderr)
				assert.Contains(t, stderr, "the allowlist would be advisory")
				assert.ErrorIs(t, err, os.ErrNotExist)
			case cliopts.NetworkUnreachable:
				// No Landlock: --strict refuses already for that.
				require.Equal(t, exitUsage, code, stderr)
				assert.ErrorIs(t, err, os.ErrNotExist)
			}
		})
	}
}

// TestAllowDomainUsage: a bad entry is a usage error naming it, and
// --allow-domain with a flag that opens the network around the proxy is
// refused rather than silently not enforced. Nothing runs.
func TestAllowDomainUsage(t *testing.T) {
	ws := wsDir(t)
	cfg := filepath.Join(t.TempDir(), "c.toml")
	require.NoError(t, os.WriteFile(cfg, []byte("allow_domain = [\"*.com\"]\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"bad entry", []string{"--allow-domain", "bad name"}, `"bad name"`},
		{"wildcard TLD", []string{"--allow-domain", "ok.test", "--allow-domain", "*.com"}, `"*.com"`},
		{"bad entry in TOML", []string{"--config", cfg}, `"*.com"`},
		{"--net host", []string{"--allow-domain", "ok.test", "--net", "host"}, "--allow-domain with --net host"},
		{"--connect-tcp", []string{"--allow-domain", "ok.test", "--connect-tcp", "443"}, "--allow-domain with --connect-tcp 443"},
		{"--allow-dns", []string{"--allow-domain", "ok.test", "--allow-dns"}, "--allow-domain with --allow-dns"},
		{"--bind-tcp", []string{"--allow-domain", "ok.test", "--bind-tcp", "8080"}, "--allow-domain with --bind-tcp 8080"},
		{"--allow-unix-sockets", []string{"--allow-domain", "ok.test", "--allow-unix-sockets"}, "--allow-domain with --allow-unix-sockets"},
		{"no landjail-netproxy", []string{"--allow-domain", "ok.test"}, "--allow-domain needs the landjail-netproxy binary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := cliopts.NetproxyPath
			cliopts.NetproxyPath = filepath.Join(t.TempDir(), "missing", "landjail-netproxy")
			defer func() { cliopts.NetproxyPath = old }()
			args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.args...)
			code, _, stderr := runCLI(t, append(args, "--", "touch", "ran")...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.msg)
			assert.NoFileExists(t, filepath.Join(ws, "ran"))
		})
	}
}

// TestAllowDomainGitClone: git (libcurl, a client not written here)
// clones a repository served over dumb HTTP by Go's file server on the
// host's loopback, through the proxy; the same clone from a name not on
// the list fails and the server sees no request from it. Where the proxy
// is unreachable (no Landlock: every IP socket refused) the clone fails
// and the server sees nothing.
func TestAllowDomainGitClone(t *testing.T) {
	requireProgram(t, "git")
	useNetproxy(t)
	mode := wantProxyMode(t, false)
	root := t.TempDir()
	src := filepath.Join(t.TempDir(), "src")
	gitEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	for _, argv := range [][]string{
		{"git", "init", "-q", src},
		{"sh", "-c", "echo cloned-through-proxy > " + src + "/README"},
		{"git", "-C", src, "add", "README"},
		{"git", "-C", src, "commit", "-qm", "one"},
		{"git", "clone", "-q", "--bare", src, filepath.Join(root, "repo.git")},
		{"git", "-C", filepath.Join(root, "repo.git"), "update-server-info"},
	} {
		c := osexec.Command(argv[0], argv[1:]...)
		c.Env = gitEnv
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%v: %s", argv, out)
	}
	var hits atomic.Int32
	fsrv := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fsrv.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)

	ws := wsDir(t)
	code, stdout, stderr := runCLI(t, "run", "--workspace", ws, "--timeout", "2m", "--allow-domain", "localhost:"+port,
		"--env", "GIT_TERMINAL_PROMPT=0", "--", "git", "clone", "-q", "http://localhost:"+port+"/repo.git", "out")
	if mode == cliopts.NetworkUnreachable {
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "landjail: warning: allowlist unusable, no network at all: ", "code %d stdout %s", code, stdout)
		assert.Zero(t, hits.Load())
		return
	}
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
	b, err := os.ReadFile(filepath.Join(ws, "out", "README"))
	require.NoError(t, err)
	assert.Equal(t, "cloned-through-proxy\n", string(b))
	before := hits.Load()
	assert.NotZero(t, before)

	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--timeout", "2m", "--allow-domain", "localhost:"+port,
		"--env", "GIT_TERMINAL_PROMPT=0", "--", "git", "clone", "-q", "http://notlisted.test:"+port+"/repo.git", "out2")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "landjail: proxy refused notlisted.test:"+port)
	assert.Equal(t, before, hits.Load(), "the server saw the refused clone")
	assert.NoDirExists(t, filepath.Join(ws, "out2"))
}

// TestAllowDomainPrintRules: --print-rules names the mode the run would
// have (wantProxyMode) and the list, without starting a proxy.
func TestAllowDomainPrintRules(t *testing.T) {
	for _, noNS := range []bool{false, true} {
		t.Run(fmt.Sprintf("no-namespaces=%v", noNS), func(t *testing.T) {
			mode := wantProxyMode(t, noNS)
			args := []string{"run", "--print-rules", "--workspace", wsDir(t), "--allow-domain", "registry.test"}
			if noNS {
				args = append(args, "--no-namespaces")
			}
			code, stdout, stderr := runCLI(t, args...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "# network: "+mode.String()+", TCP connect only to its port (chosen at run time); allowed: [registry.test]\n")
			// Transparent egress only where the run would be airtight.
			transparent := "# transparent egress: DNS on 127.0.0.1:53 for the listed names, TCP connect to ports [80 443] in the command's network namespace\n"
			if mode == cliopts.NetworkAirtight {
				assert.Contains(t, stdout, transparent)
			} else {
				assert.NotContains(t, stdout, "# transparent egress")
			}
		})
	}
}

// TestAllowDomainNetproxyNotFromPath: landjail-netproxy runs unconfined,
// so it is taken only from next to landjail, never from PATH, where a
// confined command may have planted one (a workspace bin directory on
// PATH); one in a directory other users can write is refused too. Nothing
// runs in either case. Control: the planted binary is what PATH finds.
func TestAllowDomainNetproxyNotFromPath(t *testing.T) {
	ws := wsDir(t)
	planted := t.TempDir()
	require.NoError(t, os.Chmod(planted, 0o755))
	marker := filepath.Join(t.TempDir(), "planted-ran")
	script := "#!/bin/sh\ntouch " + marker + "\nexec sleep 1\n"
	require.NoError(t, os.WriteFile(filepath.Join(planted, cliopts.NetproxyBinary), []byte(script), 0o755))
	t.Setenv("PATH", planted+string(os.PathListSeparator)+os.Getenv("PATH"))

	found, err := osexec.LookPath(cliopts.NetproxyBinary)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(planted, cliopts.NetproxyBinary), found, "control: PATH finds the planted binary")
	require.NoError(t, osexec.Command(found).Run())
	require.FileExists(t, marker, "control: the planted binary runs")
	require.NoError(t, os.Remove(marker))

	old := cliopts.NetproxyPath
	defer func() { cliopts.NetproxyPath = old }()

	cliopts.NetproxyPath = "" // next to the test binary: none there
	code, _, stderr := runCLI(t, "run", "--workspace", ws, "--allow-domain", "ok.test", "--", "touch", "ran")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--allow-domain needs the landjail-netproxy binary next to")
	assert.NoFileExists(t, marker, "the planted landjail-netproxy ran")
	assert.NoFileExists(t, filepath.Join(ws, "ran"))

	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	cliopts.NetproxyPath = filepath.Join(open, cliopts.NetproxyBinary)
	require.NoError(t, os.WriteFile(cliopts.NetproxyPath, []byte(script), 0o755))
	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--allow-domain", "ok.test", "--", "touch", "ran")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "writable by another user")
	assert.NoFileExists(t, marker, "a landjail-netproxy others can replace ran")
	assert.NoFileExists(t, filepath.Join(ws, "ran"))
}

// TestAllowDomainProxyDied: a landjail-netproxy that dies is never
// silent. Killed while the command runs: the report's proxy_error and a
// stderr line say its refusals are lost, and the command's own exit
// status is kept. Dead before it said it was ready (false(1) in its
// place): the command never starts and the run fails. Control: with the
// real proxy left alone proxy_error is empty.
func TestAllowDomainProxyDied(t *testing.T) {
	useNetproxy(t)
	ws := wsDir(t)
	rep := filepath.Join(t.TempDir(), "r.json")
	read := func() runReport {
		var r runReport
		b, err := os.ReadFile(rep)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &r), "%s", b)
		return r
	}
	code, _, stderr := runCLI(t, "run", "--workspace", ws, "--report", rep, "--allow-domain", "ok.test", "--", "true")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, read().ProxyError, "control")

	// Killed mid-run, found by its command line.
	killed := make(chan int, 1)
	go func() {
		defer close(killed)
		for range 500 {
			if _, err := os.Stat(filepath.Join(ws, "started")); err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			if pid := proctest.Find("landjail-netproxy\x00proxydied.test\x00"); pid > 0 {
				unix.Kill(pid, unix.SIGKILL)
				killed <- pid
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--report", rep, "--allow-domain", "proxydied.test", "--", "sh", "-c", "touch started; sleep 2")
	require.NotZero(t, <-killed, "landjail-netproxy not found")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "the refusals it counted are lost")
	r := read()
	assert.Contains(t, r.ProxyError, "landjail-netproxy")
	assert.Equal(t, 0, r.ExitCode)

	// Dead before serving.
	falseBin, err := osexec.LookPath("false")
	require.NoError(t, err)
	b, err := os.ReadFile(falseBin)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	old := cliopts.NetproxyPath
	defer func() { cliopts.NetproxyPath = old }()
	cliopts.NetproxyPath = filepath.Join(dir, cliopts.NetproxyBinary)
	require.NoError(t, os.WriteFile(cliopts.NetproxyPath, b, 0o755))
	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--allow-domain", "ok.test", "--", "touch", "ran")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "landjail-netproxy did not start")
	assert.NoFileExists(t, filepath.Join(ws, "ran"), "the command started without its proxy")
}

// TestAllowDomainNoSeccomp: without a network namespace, Landlock's TCP
// rules hook connect(2) and bind(2) only; TCP Fast Open (sendto with
// MSG_FASTOPEN), MPTCP and UDP are refused by the seccomp layer
// (TestRunSocketFamilies shows fastopen passing Landlock with
// --no-seccomp). So --no-namespaces --no-seccomp makes the list "not
// enforced", said at start and in the report, and --strict refuses; with
// the seccomp layer the same run is advisory (the control). --print-rules
// says the same.
func TestAllowDomainNoSeccomp(t *testing.T) {
	useNetproxy(t)
	ws := wsDir(t)
	rep := filepath.Join(t.TempDir(), "r.json")
	base := []string{"run", "--workspace", ws, "--timeout", "1m", "--report", rep, "--allow-domain", "ok.test"}
	withLayer := wantProxyMode(t, false)
	if landlock.ABI() < 9 {
		// The host's pathname UNIX sockets are refused by the seccomp
		// layer alone: without it the network namespace does not help.
		withLayer = cliopts.NetworkNotEnforced
	}
	for _, tc := range []struct {
		name  string
		flags []string
		want  cliopts.Network
	}{
		{"seccomp", []string{"--no-namespaces"}, wantProxyMode(t, true)},
		{"--no-seccomp", []string{"--no-namespaces", "--no-seccomp"}, cliopts.NetworkNotEnforced},
		{"namespaces --no-seccomp", []string{"--no-seccomp"}, withLayer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, append(append(append([]string{}, base...), tc.flags...), "--print-rules", "--", "true")...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "# network: "+tc.want.String()+",")

			code, _, stderr = runCLI(t, append(append(append([]string{}, base...), tc.flags...), "--", "true")...)
			require.Equal(t, 0, code, stderr)
			var r runReport
			b, err := os.ReadFile(rep)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &r), "%s", b)
			assert.Equal(t, tc.want, r.Network)
			if tc.want == cliopts.NetworkNotEnforced {
				assert.Contains(t, stderr, "allowlist is not enforced at all")
				if _, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock); landlock.ABI() >= 4 && !blocked {
					if slices.Contains(tc.flags, "--no-namespaces") {
						assert.Contains(t, r.NetworkReason, "TCP Fast Open")
					}
					if landlock.ABI() < 9 {
						assert.Contains(t, r.NetworkReason, "UNIX sockets")
					}
				}
				code, _, stderr = runCLI(t, append(append(append([]string{"run", "--strict"}, base[1:]...), tc.flags...), "--", "true")...)
				assert.Equal(t, exitUsage, code, stderr)
			}
		})
	}
}

// TestAllowDomainPublicSuffix: a wildcard over a public suffix is refused
// by landjail-netproxy (which links the Public Suffix List) before the
// command starts: a usage error naming the entry, nothing run, and the
// proxy's refusal said once.
func TestAllowDomainPublicSuffix(t *testing.T) {
	useNetproxy(t)
	ws := wsDir(t)
	code, _, stderr := runCLI(t, "run", "--workspace", ws, "--allow-domain", "ok.test", "--allow-domain", "*.github.io", "--", "touch", "ran")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, `"*.github.io": wildcard over the public suffix github.io`)
	assert.NoFileExists(t, filepath.Join(ws, "ran"))
	assert.NotContains(t, stderr, "exit status", "the proxy's own exit reported as a second error")
	assert.Equal(t, 1, strings.Count(stderr, "wildcard over the public suffix"), "the refusal printed by the proxy and by landjail: %s", stderr)
	// Control: one label below the suffix runs.
	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--allow-domain", "*.me.github.io", "--", "touch", "ran")
	assert.Equal(t, 0, code, stderr)
	assert.FileExists(t, filepath.Join(ws, "ran"))
}
