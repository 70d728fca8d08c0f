package jail_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

const attacksFile = "../testdata/attacks.toml"

// The corpus's error words that name this module's sentinels.
var _ = defineWords()

func defineWords() bool {
	for w, err := range map[string]error{
		"outside":    jail.ErrOutsideWorkspace,
		"denied":     jail.ErrDenied,
		"readonly":   jail.ErrReadOnly,
		"notexec":    jail.ErrNotExecutable,
		"absolute":   jail.ErrAbsolutePath,
		"invalid":    jail.ErrInvalidPath,
		"notread":    jail.ErrNotRead,
		"stale":      jail.ErrStale,
		"hardlinked": jail.ErrHardlinked,
		"escapes":    openat.ErrEscapes,
		"symlink":    openat.ErrSymlink,
	} {
		attacktest.Define(w, err)
	}
	return true
}

// newWorkspace builds the case's policy over the built env.
func newWorkspace(t testing.TB, e *attacktest.Env, c *attacktest.Case) *jail.Workspace {
	t.Helper()
	var opts []jail.Option
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

// TestAttacks runs every case of testdata/attacks.toml through Resolve
// and through the Workspace op, with openat2 and with the fallback walk.
func TestAttacks(t *testing.T) {
	runCorpus(t, attacktest.Load(t, attacksFile))
}

func runCorpus(t *testing.T, cases []attacktest.Case) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			t.Run(c.Name, func(t *testing.T) {
				t.Run("resolve", func(t *testing.T) { runResolve(t, c) })
				t.Run("workspace", func(t *testing.T) {
					if _, ok := c.Expect(attacktest.LayerWorkspace); !ok {
						t.Skipf("no workspace expectation: %s", c.Skip[attacktest.LayerWorkspace])
					}
					e := attacktest.Build(t, c)
					w := newWorkspace(t, e, c)
					attacktest.RunOp(t, w, e, c, attacktest.LayerWorkspace)
				})
			})
		}
	})
}

func runResolve(t *testing.T, c *attacktest.Case) {
	want, ok := c.Expect(attacktest.LayerResolve)
	if !ok {
		t.Skipf("no resolve expectation: %s", c.Skip[attacktest.LayerResolve])
	}
	e := attacktest.Build(t, c)
	w := newWorkspace(t, e, c)
	in := e.Input(t, c)
	got, err := w.Resolve(in)
	if !attacktest.ExpectErr(t, err, want, "Resolve(%q)", in) {
		t.Logf("why: %s", c.Why)
		return
	}
	if len(want) > 3 && want[:3] == "ok:" {
		assert.Equal(t, e.Path(want[3:]), got, "Resolve(%q); why: %s", in, c.Why)
	} else {
		assert.Empty(t, got, "Resolve returned a path with an error")
	}
}
