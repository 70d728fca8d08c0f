package landlock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// TestTransparentTCPOnlyInPrivateNetwork: Options.TransparentTCP ports
// become connect rules only when the view has a private network
// namespace; the control, the same options without the namespace layer,
// drops them (they would open those ports toward every host).
func TestTransparentTCPOnlyInPrivateNetwork(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	ws := newWS(t)
	flat, err := landlock.Compile(ws, landlock.Options{ProxyTCP: []uint16{3128}, TransparentTCP: []uint16{443, 80}})
	require.NoError(t, err)
	defer flat.Close()
	assert.False(t, flat.Report().PrivateNetwork)
	assert.Empty(t, flat.Report().TransparentTCP, "no private network: no transparent ports")
	assert.Equal(t, []uint16{3128}, flat.Report().ProxyTCP)

	kerneltest.RequireNamespaces(t, nsview.Probe())
	rs, err := landlock.Compile(ws, landlock.Options{Namespaces: true, ProxyTCP: []uint16{3128}, TransparentTCP: []uint16{443, 80}})
	require.NoError(t, err)
	defer rs.Close()
	rep := rs.Report()
	if rep.UserNamespace {
		assert.Empty(t, rep.TransparentTCP, "user-namespace stage: the caller cannot listen in the namespace")
		return
	}
	assert.True(t, rep.PrivateNetwork)
	assert.Equal(t, []uint16{80, 443}, rep.TransparentTCP)
}
