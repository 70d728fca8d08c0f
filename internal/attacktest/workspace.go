package attacktest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// NewWorkspace builds the case's policy (Case.Policy) over the built env
// as a jail.Workspace on e.Root, with extra options first, and closes it
// when the test ends. Every layer above the Workspace (jail's own tests,
// tools, mcpserver) builds its target this way.
func NewWorkspace(t testing.TB, e *Env, c *Case, extra ...jail.Option) *jail.Workspace {
	t.Helper()
	opts := extra
	p := c.Policy
	for _, a := range p.Allowed {
		m := map[string]jail.Mode{"ro": jail.ReadOnly, "rox": jail.ReadExec, "rw": jail.ReadWrite}[a.Mode]
		require.NotZero(t, m, "case %s: mode %q", c.Name, a.Mode)
		opts = append(opts, jail.WithAllowed(e.Sub(a.Path), m))
	}
	if len(p.Deny) > 0 {
		deny := make([]string, len(p.Deny))
		for i, d := range p.Deny {
			deny[i] = e.Sub(d)
		}
		opts = append(opts, jail.WithDeny(deny...))
	}
	if p.RejectAbsolute {
		opts = append(opts, jail.RejectAbsolute())
	}
	if p.Unrestricted {
		opts = append(opts, jail.Unrestricted())
	}
	if p.NoXDev {
		opts = append(opts, jail.WithNoXDev())
	}
	if p.NoHardlinkedWrites {
		opts = append(opts, jail.WithNoHardlinkedWrites())
	}
	if p.Tracker {
		opts = append(opts, jail.WithReadTracker(jail.NewReadTracker()))
	}
	w, err := jail.New(e.Root, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	require.Equal(t, e.Root, w.Root())
	return w
}

// RunCorpusOp runs the case's op through the layer named layer, built on
// the case's env by open, and checks it (RunOp); a case without an
// expectation for layer is skipped with the corpus's reason.
func RunCorpusOp(t *testing.T, c *Case, layer string, open func(t *testing.T, e *Env) FS) {
	t.Helper()
	if _, ok := c.Expect(layer); !ok {
		t.Skipf("no %s expectation: %s", layer, c.Skip[layer])
	}
	e := Build(t, c)
	RunOp(t, open(t, e), e, c, layer)
}
