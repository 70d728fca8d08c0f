package main

import (
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
)

// egressScript runs clients that ignore the proxy variables (curl
// --noproxy '*', bash's /dev/tcp) and prints NAME=RESULT. "localhost."
// (trailing dot) because curl answers "localhost" itself without asking
// the resolver; the proxy resolves the listed "localhost" on the host,
// to the test servers' 127.0.0.1 (listed exactly, so loopback is
// allowed).
const egressScript = `code() { curl -sS -m 10 --noproxy '*' -o /dev/null -w '%{http_code}' "$@" 2>/dev/null; }
echo "http=$(curl -sS -m 10 --noproxy '*' http://localhost.:$HP/plain 2>&1)"
echo "https=$(curl -sSk -m 10 --noproxy '*' https://localhost.:$TP/tls 2>&1)"
exec 3<>/dev/tcp/localhost/$HP && printf 'GET /devtcp HTTP/1.0\r\nHost: localhost:%s\r\n\r\n' "$HP" >&3 && echo "devtcp=$(tail -1 <&3)"
SYN=$(getent hosts localhost | cut -d' ' -f1)
echo "syn=${SYN%.*}"
echo "unlisted=$(getent hosts notlisted.test >/dev/null; echo $?)"
echo "hostmismatch=$(code -H 'Host: notlisted.test' http://localhost.:$HP/hostmismatch)"
echo "snimismatch=$(code -k --resolve notlisted.test:$TP:$SYN https://notlisted.test:$TP/snimismatch)"
echo "otherport=$(code http://localhost.:$OP/otherport)"
echo "realip=$(code http://$HOSTIP:$HP/realip)"
echo "udp=$( (echo x >/dev/udp/$HOSTIP/$UP) 2>&1 | sed -n '1s/.*: //p')"
echo "udplo=$( (echo x >/dev/udp/127.0.0.1/$UP) 2>&1 && echo sent)"
`

// TestAllowDomainTransparent: in the airtight mode, clients that ignore
// the proxy variables reach a listed host through the proxy, over HTTP,
// TLS and a raw socket, by the name the in-namespace DNS responder
// resolved to a synthetic address; an unlisted name does not resolve and
// is listed as refused; another Host or SNI on that address is refused
// (the servers see nothing); a port not listed, the host's real address
// and UDP to it find nothing. The unconfined control shows the same
// real-address connection and datagram arrive without landjail, and
// --no-namespaces (advisory) shows the same clients fail without
// transparent egress.
func TestAllowDomainTransparent(t *testing.T) {
	requireProgram(t, "curl")
	requireProgram(t, "bash")
	requireProgram(t, "getent")
	useNetproxy(t)
	for _, tc := range proxyLayers {
		t.Run(tc.name, func(t *testing.T) {
			mode := wantProxyMode(t, tc.noNS)
			plain, tlsSrv, other, udp := newHitServer(t, false), newHitServer(t, true), newHitServer(t, false), newUDPSink(t)
			hip := hostIP()
			if hip == "" {
				t.Skip("no non-loopback IPv4 address on this host")
			}
			ws := wsDir(t)
			rep := filepath.Join(t.TempDir(), "report.json")
			require.NoError(t, os.WriteFile(filepath.Join(ws, "egress.sh"), []byte(egressScript), 0o644))
			args := append([]string{"run", "--workspace", ws, "--timeout", "2m", "--report", rep,
				"--allow-domain", "localhost:" + plain.port(), "--allow-domain", "localhost:" + tlsSrv.port(),
				"--env", "HP=" + plain.port(), "--env", "TP=" + tlsSrv.port(), "--env", "OP=" + other.port(),
				"--env", "UP=" + udp.port(), "--env", "HOSTIP=" + hip,
			}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "bash", "egress.sh")...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
				k, v, _ := strings.Cut(l, "=")
				got[k] = v
			}
			var r runReport
			b, err := os.ReadFile(rep)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &r), "%s", b)
			assert.Equal(t, mode, r.Network)
			assert.Equal(t, mode == cliopts.NetworkAirtight, r.TransparentEgress)
			if mode != cliopts.NetworkAirtight {
				// Control: without transparent egress the clients that
				// ignore the variables reach nothing.
				assert.NotEqual(t, "hello /plain", got["http"], "stdout: %s", stdout)
				assert.Zero(t, plain.count("/plain")+tlsSrv.count("/tls"))
				return
			}
			want := map[string]string{
				"http": "hello /plain", "https": "hello /tls", "devtcp": "hello /devtcp",
				"syn": "198.18.0", "unlisted": "2",
				"hostmismatch": "403", "snimismatch": "000", "otherport": "000", "realip": "000",
				"udp": "Network is unreachable", "udplo": "sent",
			}
			assert.Equal(t, want, got, "stderr: %s", stderr)
			assert.Equal(t, 1, plain.count("/plain"))
			assert.Equal(t, 1, tlsSrv.count("/tls"))
			assert.Equal(t, 1, plain.count("/devtcp"))
			assert.Zero(t, plain.count("/hostmismatch")+tlsSrv.count("/snimismatch")+other.count("/otherport")+plain.count("/realip"))
			assert.Zero(t, udp.received(), "a datagram left the sandbox")
			assert.Contains(t, r.ProxyRefused, cliopts.Refusal{Host: "notlisted.test", Count: 2, Reason: "not on the allowlist (DNS query)"}) // A and AAAA
			assert.Contains(t, stderr, "landjail: proxy refused notlisted.test ")
			mismatches := 0
			for _, x := range r.ProxyRefused {
				if strings.HasPrefix(x.Reason, "TLS SNI or HTTP Host") {
					mismatches += x.Count
				}
			}
			assert.Equal(t, 2, mismatches, "%+v", r.ProxyRefused)

			// Unconfined control: the datagram to the host's loopback
			// arrives without landjail (the sandbox's stayed in its
			// namespace).
			c := osexec.Command("bash", "-c", "echo x >/dev/udp/127.0.0.1/$UP")
			c.Env = []string{"PATH=" + os.Getenv("PATH"), "UP=" + udp.port()}
			out, err := c.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Eventually(t, func() bool { return udp.received() > 0 }, 5*time.Second, 10*time.Millisecond, "control: the datagram did not arrive")
		})
	}
}
