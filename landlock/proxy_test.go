package landlock

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanProxyTCP: Options.ProxyTCP ports become connect rules (listed
// in Report.ProxyTCP) without giving up the private network namespace,
// unlike ConnectTCP; with the network unrestricted or below ABI 4 they
// are not rules. Kernel-free.
func TestPlanProxyTCP(t *testing.T) {
	for _, tc := range []struct {
		name       string
		connect    []uint16
		proxy      []uint16
		net        bool
		abi        int
		privateNet bool
		wantProxy  []uint16
		wantNote   string
	}{
		{name: "proxy only: private network kept", proxy: []uint16{3128}, net: true, abi: 7, privateNet: true, wantProxy: []uint16{3128}, wantNote: "TCP: connect only to the landjail proxy port [3128]"},
		{name: "connect-tcp: host network", connect: []uint16{443}, proxy: []uint16{3128}, net: true, abi: 7, wantProxy: []uint16{3128}},
		{name: "nothing: private network", net: true, abi: 7, privateNet: true, wantNote: "TCP: no port allowed"},
		{name: "ABI 3: no TCP rules", proxy: []uint16{3128}, net: true, abi: 3, privateNet: true, wantNote: "TCP port rules unused: the network is not restricted at this ABI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			req.namespaces = true
			req.net, req.connect, req.proxy = tc.net, tc.connect, tc.proxy
			c, err := plan(req, tc.abi, fakeStat("/ws/", "/ro/", "/dev/null", "/"), fakeList)
			require.NoError(t, err)
			assert.Equal(t, LayerNamespaces, c.report.Layer)
			assert.Equal(t, tc.privateNet, c.report.PrivateNetwork)
			assert.Equal(t, tc.wantProxy, c.report.ProxyTCP)
			if tc.wantNote != "" {
				assert.Contains(t, c.report.Notes, tc.wantNote)
			}
		})
	}
}
