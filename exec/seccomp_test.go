package exec_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// TestSeccompLayer shows what Landlock alone leaves open on this kernel
// (a pathname UNIX socket outside the workspace, UDP, MPTCP) and that the
// seccomp filter installed with the child's domain closes it, on both
// spawn paths.
func TestSeccompLayer(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	f := newFixture(t)
	f.withHelper(t)
	rs := f.compile(t, landlock.Options{System: true})
	defer exec.Release(rs)

	sock := filepath.Join(f.outside, "docker.sock")
	listentest.Listen(t, "unix", sock)
	uc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer uc.Close()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tl.Close()

	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true})
	require.NoError(t, err)

	run := func(filter *seccomp.Filter, fresh bool, args ...string) ([]byte, error) {
		c := exec.CommandContext(context.Background(), f.ws, rs, f.helper, args...)
		c.Seccomp = filter
		c.FreshThread = fresh
		return c.CombinedOutput()
	}
	cases := []struct {
		name string
		args []string
		// landlockBlocks: Landlock alone refuses it on this kernel.
		landlockBlocks bool
		// want: the refusal under the filter. socket(2) fails with
		// EPERM; an MPTCP socket refused, Go's dialer falls back to
		// plain TCP, whose connect Landlock refuses (EACCES).
		want string
	}{
		{"pathname unix socket outside", []string{"unix", sock}, landlock.ABI() >= 9, "socket: operation not permitted"},
		{"udp", []string{"udp", uc.LocalAddr().String()}, landlock.ABI() >= 10, "socket: operation not permitted"},
		{"mptcp connect to a denied port", []string{"mptcp", tl.Addr().String()}, false, "connect: permission denied"},
	}
	for _, fresh := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				out, err := run(nil, fresh, tc.args...)
				if !tc.landlockBlocks {
					assert.NoError(t, err, "Landlock alone lets this through (the gap the filter closes): %s", out)
				}
				out, err = run(filter, fresh, tc.args...)
				assertRefused(t, out, err, tc.want, fmt.Sprintf("%s under the seccomp filter (fresh thread: %v)", tc.name, fresh))
			})
		}
	}
	// Ordinary work still runs under the filter.
	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", "echo hi > f && cat f")
	c.Seccomp = filter
	out, err := c.Output()
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(out))
}

var (
	netAttackOnce sync.Once
	netAttackBin  string
	netAttackErr  error
)

// withNetAttack builds testdata/netattack once per test binary and copies
// it into the fixture's read-exec root.
func (f *fixture) withNetAttack(t *testing.T) string {
	t.Helper()
	netAttackOnce.Do(func() {
		dir, err := os.MkdirTemp("", "landjail-exec-netattack-")
		if err != nil {
			netAttackErr = err
			return
		}
		netAttackBin = filepath.Join(dir, "netattack")
		out, err := osexec.Command("go", "build", "-o", netAttackBin, "./testdata/netattack").CombinedOutput()
		if err != nil {
			netAttackErr = fmt.Errorf("go build netattack: %v\n%s", err, out)
		}
	})
	require.NoError(t, netAttackErr)
	data, err := os.ReadFile(netAttackBin)
	require.NoError(t, err)
	bin := filepath.Join(f.rox, "netattack")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin
}

// starter is what both os/exec and exec commands offer.
type starter interface {
	Start() error
	Wait() error
}

// spawnMode is one way to run the attack: unconfined (the control),
// Landlock alone, or Landlock and the seccomp filter on either spawn path.
type spawnMode struct {
	name   string
	filter bool
	fresh  bool
}

var (
	modeUnconfined = spawnMode{name: "unconfined"}
	modeLandlock   = spawnMode{name: "landlock only"}
	modePooled     = spawnMode{name: "seccomp pooled", filter: true}
	modeFresh      = spawnMode{name: "seccomp fresh thread", filter: true, fresh: true}
)

// netTarget is an attack's target in the test process: setup makes it
// and returns the attack's arguments and a function telling, after the
// child exited (or, for listen, from its output), whether the attack
// reached the target.
type netAttack struct {
	name string
	// setup returns the netattack arguments and reached, called after
	// the child has exited with everything it printed.
	setup func(t *testing.T) (args []string, reached func(out string) bool)
	// interactive: the test must connect to the port the child prints.
	interactive bool
	// landlockReaches: Landlock alone lets it through on this kernel.
	landlockReaches bool
}

// tcpTarget listens on loopback (family "4" or "6") on a port Landlock
// does not grant and reports whether a connection arrived.
func tcpTarget(t *testing.T, family string) (net.Listener, func() bool) {
	addr := "127.0.0.1:0"
	if family == "6" {
		addr = "[::1]:0"
	}
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	accepted := listentest.Serve(t, l)
	return l, func() bool {
		select {
		case <-accepted:
			return true
		case <-time.After(500 * time.Millisecond):
			return false
		}
	}
}

func netAttacks(f *fixture) []netAttack {
	var as []netAttack
	for _, fam := range []string{"4", "6"} {
		for _, how := range []string{"tfo-sendto", "tfo-sendmsg", "tfo-sendmmsg", "tfo-connect"} {
			as = append(as, netAttack{
				name: how + " IPv" + fam,
				setup: func(t *testing.T) ([]string, func(string) bool) {
					l, reached := tcpTarget(t, fam)
					return []string{how, l.Addr().String()}, func(string) bool { return reached() }
				},
				// TCP_FASTOPEN_CONNECT goes through connect(2),
				// which Landlock checks.
				landlockReaches: how != "tfo-connect",
			})
		}
		as = append(as, netAttack{
			name: "listen without bind IPv" + fam,
			setup: func(t *testing.T) ([]string, func(string) bool) {
				return []string{"listen", fam}, func(out string) bool { return strings.Contains(out, "accepted") }
			},
			interactive:     true,
			landlockReaches: true,
		})
	}
	for _, typ := range []string{"dgram", "raw"} {
		for _, how := range []string{"dgrampair", "dgrampair-connect"} {
			as = append(as, netAttack{
				name: how + " " + typ + " to a datagram socket outside",
				setup: func(t *testing.T) ([]string, func(string) bool) {
					dir, err := os.MkdirTemp(f.outside, "journal")
					require.NoError(t, err)
					path := filepath.Join(dir, how+"-"+typ+".sock")
					c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
					require.NoError(t, err)
					t.Cleanup(func() { c.Close() })
					return []string{how, path, typ}, func(string) bool {
						c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
						buf := make([]byte, 16)
						n, _, err := c.ReadFrom(buf)
						return err == nil && string(buf[:n]) == "pair"
					}
				},
				landlockReaches: landlock.ABI() < 9,
			})
		}
	}
	as = append(as, netAttack{
		name: "NETLINK_SOCK_DIAG lists the host's sockets",
		setup: func(t *testing.T) ([]string, func(string) bool) {
			l, _ := tcpTarget(t, "4")
			return []string{"sockdiag", port(l)}, func(out string) bool { return strings.Contains(out, "found port") }
		},
		landlockReaches: true,
	})
	return as
}

// runNetAttack runs bin with args in mode and returns what it printed and
// whether the attack reached its target.
func runNetAttack(t *testing.T, f *fixture, rs *landlock.Ruleset, filter *seccomp.Filter, bin string, a netAttack, m spawnMode) (string, bool) {
	args, reached := a.setup(t)
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	var stderr bytes.Buffer
	var cmd starter
	if m == modeUnconfined {
		c := osexec.Command(bin, args...)
		c.Stdout, c.Stderr = pw, &stderr
		cmd = c
	} else {
		c := exec.CommandContext(context.Background(), f.ws, rs, bin, args...)
		c.Stdout, c.Stderr = pw, &stderr
		c.FreshThread = m.fresh
		if m.filter {
			c.Seccomp = filter
		}
		cmd = c
	}
	require.NoError(t, cmd.Start())
	pw.Close()
	sc := bufio.NewScanner(pr)
	var out strings.Builder
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		var p int
		if _, err := fmt.Sscanf(line, "port %d", &p); err == nil && a.interactive {
			host := "127.0.0.1"
			if args[1] == "6" {
				host = "::1"
			}
			if c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(p)), time.Second); err == nil {
				c.Close()
			}
		}
	}
	waitErr := cmd.Wait()
	t.Logf("%s: %v: out %q err %q (%v)", m.name, args, out.String(), stderr.String(), waitErr)
	return out.String(), reached(out.String())
}

// TestSeccompNetBypasses: each route around Landlock's network rules
// (MSG_FASTOPEN, listen's autobind, a datagram socketpair, netlink
// SOCK_DIAG) reaches its target in the test process when unconfined and
// under Landlock alone, and not with the seccomp filter, on both spawn
// paths, IPv4 and IPv6.
func TestSeccompNetBypasses(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	f := newFixture(t)
	bin := f.withNetAttack(t)
	rs := f.compile(t, landlock.Options{}) // no TCP port granted
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true})
	require.NoError(t, err)
	require.False(t, filter.Supervised())

	for _, a := range netAttacks(f) {
		t.Run(a.name, func(t *testing.T) {
			_, reached := runNetAttack(t, f, rs, filter, bin, a, modeUnconfined)
			require.True(t, reached, "control: the attack works without landjail")
			_, reached = runNetAttack(t, f, rs, filter, bin, a, modeLandlock)
			assert.Equal(t, a.landlockReaches, reached, "Landlock alone on this kernel")
			for _, m := range []spawnMode{modePooled, modeFresh} {
				_, reached = runNetAttack(t, f, rs, filter, bin, a, m)
				assert.False(t, reached, "%s: the seccomp filter must stop it", m.name)
			}
		})
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) uint16 {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return uint16(l.Addr().(*net.TCPAddr).Port)
}

// TestSeccompListenSupervised: with a bind port granted (or UNIX sockets
// allowed) listen goes through the supervisor: a socket bound to the
// granted port listens and accepts, a never-bound one is refused (the
// autobind bypass), and a UNIX socket in the workspace listens; on both
// spawn paths, IPv4 and IPv6.
func TestSeccompListenSupervised(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	f := newFixture(t)
	bin := f.withNetAttack(t)
	granted := freePort(t)
	rs := f.compile(t, landlock.Options{BindTCP: []uint16{granted}})
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true, BindTCP: []uint16{granted}})
	require.NoError(t, err)
	require.True(t, filter.Supervised())
	unixFilter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true, AllowUnixSockets: true})
	require.NoError(t, err)
	require.True(t, unixFilter.Supervised())

	listenOn := func(fam string, bind bool) netAttack {
		args := []string{"listen", fam}
		if bind {
			args = append(args, strconv.Itoa(int(granted)))
		}
		return netAttack{
			name: "listen", interactive: true,
			setup: func(*testing.T) ([]string, func(string) bool) {
				return args, func(out string) bool { return strings.Contains(out, "accepted") }
			},
		}
	}
	for _, fam := range []string{"4", "6"} {
		for _, m := range []spawnMode{modePooled, modeFresh} {
			for _, fl := range []*seccomp.Filter{filter, unixFilter} {
				_, reached := runNetAttack(t, f, rs, fl, bin, listenOn(fam, false), m)
				assert.False(t, reached, "IPv%s %s: listen without bind refused", fam, m.name)
			}
			_, reached := runNetAttack(t, f, rs, filter, bin, listenOn(fam, true), m)
			assert.True(t, reached, "IPv%s %s: listen on the granted port works", fam, m.name)
		}
	}
	for _, m := range []spawnMode{modePooled, modeFresh} {
		c := exec.CommandContext(context.Background(), f.ws, rs, bin, "listen-unix", filepath.Join(f.root, m.name+".sock"))
		c.Seccomp, c.FreshThread = unixFilter, m.fresh
		out, err := c.CombinedOutput()
		assert.NoError(t, err, "%s: listen on a UNIX socket in the workspace: %s", m.name, out)
	}
}

// TestSeccompExecRefusesSupervised: Cmd.Exec cannot keep a supervisor
// alive across execve, so it refuses a Supervised filter before doing
// anything (had it execve'd, the child test process would have printed
// EXECUTED and run no test, which fails the parent).
func TestSeccompExecRefusesSupervised(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{BindTCP: []uint16{8080}})
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true, BindTCP: []uint16{8080}})
	require.NoError(t, err)
	c := exec.CommandContext(context.Background(), f.ws, rs, "/bin/sh", "-c", "echo EXECUTED")
	c.Seccomp = filter
	assert.ErrorIs(t, c.Exec(), seccomp.ErrSupervised)
}
