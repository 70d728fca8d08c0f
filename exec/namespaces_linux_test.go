package exec_test

import (
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// nsCase is one check run as a confined shell script in the workspace;
// ns and carve are what it prints with the namespace layer in force and
// with Landlock carve-outs alone (the fallback). The scratch trees are
// the fixture's: nothing outside them is touched.
type nsCase struct {
	name      string
	script    string
	ns, carve string
}

// nsCases: $RO is a read-only policy root (a root-owned scratch tree
// standing in for system files), $HOSTTMP a file on the host's /tmp,
// $UDP and $TCP the test's loopback listeners.
var nsCases = []nsCase{
	{"denied .env is refused (never read as empty)", `cat .env 2>/dev/null && echo "[read]" || echo refused`, "refused", "refused"},
	{"write denied .env", `echo x > .env 2>/dev/null && echo wrote || echo refused`, "refused", "refused"},
	{"touch NEW at the root", `touch NEW 2>/dev/null && echo ok || echo frozen`, "ok", "frozen"},
	{"mkdir at the root", `mkdir D 2>/dev/null && echo ok || echo frozen`, "ok", "frozen"},
	{"sed -i at the root", `sed -i s/inside/INSIDE/ in.txt 2>/dev/null && cat in.txt || echo frozen`, "INSIDE", "frozen"},
	{"python NamedTemporaryFile(dir='.')", `/usr/bin/python3 -c 'import tempfile; tempfile.NamedTemporaryFile(dir="."); print("ok")' 2>/dev/null || echo frozen`, "ok", "frozen"},
	{"chmod outside writable roots", `chmod 4755 $RO/ro.txt 2>&1 | grep -o 'Read-only file system' || echo changed`, "Read-only file system", "changed"},
	{"utime outside writable roots", `touch -d @1 $RO/ro.txt 2>&1 | grep -o 'Read-only file system' || echo changed`, "Read-only file system", "changed"},
	{"truncate outside writable roots", `truncate -s 0 $RO/ro.txt 2>&1 | grep -o 'Read-only file system\|Permission denied'`, "Read-only file system", "Permission denied"},
	{"host /tmp invisible", `test -e $HOSTTMP && echo visible || echo private`, "private", "visible"},
	{"python multiprocessing", `/usr/bin/python3 -c '
import multiprocessing as mp
if __name__ == "__main__":
    with mp.Pool(2) as p: print(p.map(abs, [-1, -2]))' 2>/dev/null || echo failed`, "[1, 2]", "failed"},
	{"TCP connect to the test's loopback listener", `/usr/bin/python3 -c '
import socket
try:
    socket.create_connection(("127.0.0.1", $TCP), timeout=5); print("connected")
except OSError as e: print("refused")'`, "refused", "refused"},
	{"UDP to the test's loopback listener", `/usr/bin/python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"leak", ("127.0.0.1", $UDP)); print("sent")
except OSError as e: print("refused")'`, "sent", "sent"}, // sendto on a route-less loopback succeeds; the host-side check tells
}

// nsFixture is the fixture plus a .env at the workspace root, a file on
// the host's /tmp and the loopback listeners.
type nsFixture struct {
	*fixture
	hostTmp  string
	tcp, udp int
	udpGot   chan string
}

func newNSFixture(t *testing.T) *nsFixture {
	f := newFixture(t)
	require.NoError(t, os.WriteFile(filepath.Join(f.root, ".env"), []byte("SECRET=1\n"), 0o600))
	ws, err := jail.New(f.root, jail.WithAllowed(f.ro, jail.ReadOnly), jail.WithAllowed(f.rox, jail.ReadExec), jail.WithDenySecrets())
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	f.ws = ws
	host, err := os.CreateTemp("", "landjail-ns-host-")
	require.NoError(t, err)
	host.Close()
	t.Cleanup(func() { os.Remove(host.Name()) })

	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	serve(t, l)
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { u.Close() })
	nf := &nsFixture{fixture: f, hostTmp: host.Name(), tcp: l.Addr().(*net.TCPAddr).Port, udp: u.LocalAddr().(*net.UDPAddr).Port, udpGot: make(chan string, 16)}
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := u.ReadFrom(buf)
			if err != nil {
				return
			}
			nf.udpGot <- string(buf[:n])
		}
	}()
	return nf
}

// run runs tc's script confined by rs in a fresh fixture state and
// returns its output.
func (f *nsFixture) run(t *testing.T, rs *landlock.Ruleset, script string) string {
	t.Helper()
	r := strings.NewReplacer("$RO", f.ro, "$HOSTTMP", f.hostTmp, "$TCP", strconv.Itoa(f.tcp), "$UDP", strconv.Itoa(f.udp))
	c := exec.CommandContext(t.Context(), f.ws, rs, "/bin/sh", "-c", r.Replace(script))
	c.Timeout = time.Minute
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	require.NoError(t, err, "stdout %q, stderr %q", out, stderr.String())
	return strings.TrimSpace(string(out))
}

// checkNS runs every case against a fresh fixture compiled with opt and
// checks the layer the report names, each case's output for that layer,
// and the host afterwards (.env unchanged; the UDP listener got a
// datagram only without the layer).
func checkNS(t *testing.T, opt landlock.Options, wantLayer landlock.Layer) {
	for _, tc := range nsCases {
		t.Run(tc.name, func(t *testing.T) {
			f := newNSFixture(t)
			rs := f.compile(t, opt)
			rep := rs.Report()
			require.Equal(t, wantLayer, rep.Layer, rep.LayerReason)
			want := tc.ns
			if wantLayer != landlock.LayerNamespaces {
				want = tc.carve
				assert.NotEmpty(t, rep.LayerReason, "a fallback says why")
				assert.Contains(t, rep.FrozenDirs, f.root, "the workspace root is frozen by the .env carve-out")
			} else {
				assert.Empty(t, rep.FrozenDirs)
				assert.Equal(t, []string{filepath.Join(f.root, ".env")}, rep.Masks)
			}
			assert.Equal(t, want, f.run(t, rs, tc.script))
			b, err := os.ReadFile(filepath.Join(f.root, ".env"))
			require.NoError(t, err)
			assert.Equal(t, "SECRET=1\n", string(b), "host .env unchanged")
			if strings.HasPrefix(tc.name, "UDP") {
				select {
				case got := <-f.udpGot:
					assert.NotEqual(t, landlock.LayerNamespaces, wantLayer, "the host received %q from inside the view", got)
				case <-time.After(200 * time.Millisecond):
					assert.Equal(t, landlock.LayerNamespaces, wantLayer, "no datagram reached the host: the control should have sent one")
				}
			}
		})
	}
}

// TestNamespaceLayer: with the layer (root, where nsview.Probe succeeds)
// the .env is masked, the workspace root is not frozen, metadata outside
// the writable roots is read-only, /tmp and /dev/shm are private and the
// network namespace holds only loopback. The control, Namespaces off,
// shows the fallback: carve-outs freeze the workspace root, chmod and
// utime outside go through, the host's /tmp is visible, UDP reaches the
// host's loopback. Per mode: natively (and under openat2=ENOSYS) the
// "namespaces" row has the layer; under ns=EPERM or ns=ENOSYS (Docker's
// default profile) the same request falls back to carve-outs, naming the
// errno, and every case behaves as the control; under landlock=ENOSYS and
// all=EPERM both rows skip (no Landlock).
func TestNamespaceLayer(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	t.Run("namespaces", func(t *testing.T) {
		want := landlock.LayerNamespaces
		if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
			want = landlock.LayerLandlockOnly
			errno, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			rs := newNSFixture(t).compile(t, landlock.Options{Namespaces: true})
			assert.Contains(t, rs.Report().LayerReason, errno.Error(), "the fallback names the errno")
		}
		checkNS(t, landlock.Options{Namespaces: true}, want)
	})
	t.Run("landlock-only control", func(t *testing.T) {
		checkNS(t, landlock.Options{}, landlock.LayerLandlockOnly)
	})
}

// TestNamespaceLayerUnavailable emulates a container profile that
// refuses namespaces and mounts (LANDJAIL_EMULATE=ns=EPERM, Docker's
// default without CAP_SYS_ADMIN; ns=ENOSYS), in a subprocess whose every
// thread gets the filter before anything probes, whatever mode the run is
// in: Compile falls back to carve-outs, says why (the errno), and every
// case behaves as the landlock-only control; with Strict it refuses
// because the fallback freezes directories.
func TestNamespaceLayerUnavailable(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	for _, tc := range []struct {
		name  string
		errno unix.Errno
	}{{"ns=EPERM", unix.EPERM}, {"ns=ENOSYS", unix.ENOSYS}} {
		t.Run(tc.name, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"="+tc.name) {
				return
			}
			err := nsview.Probe()
			require.ErrorIs(t, err, nsview.ErrUnavailable)
			require.ErrorIs(t, err, tc.errno)
			require.False(t, kerneltest.ExpectNamespaces(t, err))
			f := newNSFixture(t)
			_, err = landlock.Compile(f.ws, landlock.Options{Namespaces: true, Strict: true, System: true, TmpDir: f.tmp})
			assert.ErrorIs(t, err, landlock.ErrNotEnforceable)
			assert.ErrorContains(t, err, "--no-namespaces")
			checkNS(t, landlock.Options{Namespaces: true}, landlock.LayerLandlockOnly)
			rs := f.compile(t, landlock.Options{Namespaces: true})
			assert.Contains(t, rs.Report().LayerReason, tc.errno.Error())
		})
	}
}

// unprivLayer is the layer landlock.Compile with Namespaces gives an
// unprivileged caller (uid 65534, no capabilities) on a machine that
// allows user namespaces, as this one does: the namespace layer, built by
// the user-namespace stage (this test binary registers it: exec.Init in
// pidns_hook_linux_test.go). Every case of TestNamespaceLayerUnprivileged
// follows this value (cmd/landjail has the same one for the CLI). Under
// LANDJAIL_EMULATE=ns=... the caller gets landlock-only whatever this
// says.
const unprivLayer = landlock.LayerNamespaces

// envUnpriv marks the re-executed, unprivileged test binary.
const envUnpriv = "LANDJAIL_NS_UNPRIV"

// TestNamespaceLayerUnprivileged re-executes the test binary as uid 65534
// and runs every namespace case there (its fixture is its own, so the
// cases mean what they mean for root): the layer is unprivLayer, and a
// fallback says why ("not root" today).
func TestNamespaceLayerUnprivileged(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	if os.Getenv(envUnpriv) == "1" {
		require.NotZero(t, os.Geteuid(), "the parent must be unprivileged here")
		want, why := unprivLayer, "not root (no CAP_SYS_ADMIN)"
		if errno, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
			if want == landlock.LayerNamespaces {
				why = errno.Error()
			}
			want = landlock.LayerLandlockOnly
		}
		checkNS(t, landlock.Options{Namespaces: true}, want)
		if want != landlock.LayerNamespaces {
			rs := newNSFixture(t).compile(t, landlock.Options{Namespaces: true})
			assert.Contains(t, rs.Report().LayerReason, why)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature: no kerneltest skip
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Chmod(base, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	bin := filepath.Join(base, "exec.test")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	c := osexec.CommandContext(t.Context(), bin, "-test.run=^TestNamespaceLayerUnprivileged$", "-test.v", "-test.count=1")
	c.Dir = base
	c.Env = append(os.Environ(), envUnpriv+"=1", "GOCOVERDIR=", "HOME="+base)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, tc := range nsCases {
		assert.Contains(t, string(out), "--- PASS: TestNamespaceLayerUnprivileged/"+strings.ReplaceAll(tc.name, " ", "_")+" ", "every case ran as uid 65534")
	}
	assert.NotContains(t, string(out), "--- SKIP")
}
