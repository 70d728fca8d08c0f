package exec_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
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
	ul, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer ul.Close()
	go func() {
		for {
			c, err := ul.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	uc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	defer uc.Close()
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tl.Close()

	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true})
	require.NoError(t, err)

	run := func(filter *seccomp.Filter, fresh bool, args ...string) error {
		c := exec.CommandContext(context.Background(), f.ws, rs, f.helper, args...)
		c.Seccomp = filter
		c.FreshThread = fresh
		return c.Run()
	}
	cases := []struct {
		name string
		args []string
		// landlockBlocks: Landlock alone refuses it on this kernel.
		landlockBlocks bool
	}{
		{"pathname unix socket outside", []string{"unix", sock}, landlock.ABI() >= 9},
		{"udp", []string{"udp", uc.LocalAddr().String()}, landlock.ABI() >= 10},
		{"mptcp connect to a denied port", []string{"mptcp", tl.Addr().String()}, false},
	}
	for _, fresh := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				err := run(nil, fresh, tc.args...)
				if !tc.landlockBlocks {
					assert.NoError(t, err, "Landlock alone lets this through (the gap the filter closes)")
				}
				assert.Error(t, run(filter, fresh, tc.args...), "the seccomp filter must refuse it (fresh thread: %v)", fresh)
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
