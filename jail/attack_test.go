package jail_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/attacktest"
)

const attacksFile = "../testdata/attacks.toml"

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
					attacktest.RunCorpusOp(t, c, attacktest.LayerWorkspace, func(t *testing.T, e *attacktest.Env) attacktest.FS {
						return attacktest.NewWorkspace(t, e, c)
					})
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
	w := attacktest.NewWorkspace(t, e, c)
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
