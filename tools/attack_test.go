package tools_test

import (
	"context"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/attacktest/toolcall"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
	"github.com/landjail/landjail/tools"
)

// TestAttacks runs the corpus's refused inputs through the tools (via
// Call, as a framework would): read_file for "open"/"stat"/"lstat" cases,
// write_file for "write"/"create", list_directory, glob and grep with the
// input as their path for reads. Each must fail with the Workspace
// layer's error and change nothing outside; no tool may succeed where the
// Workspace refuses. Both openat mechanisms.
func TestAttacks(t *testing.T) {
	cases := attacktest.Load(t, "../testdata/attacks.toml")
	for _, mech := range []string{"openat2", "fallback"} {
		t.Run(mech, func(t *testing.T) {
			if mech == "fallback" {
				defer openat.SetForceFallback(true)()
			} else {
				kerneltest.RequireOpenat2(t)
			}
			n := 0
			for i := range cases {
				c := &cases[i]
				want, calls, ok := toolcall.For(c)
				if !ok {
					continue
				}
				n++
				t.Run(c.Name, func(t *testing.T) {
					e := attacktest.Build(t, c)
					ws := attacktest.NewWorkspace(t, e, c, jail.WithReadTracker(jail.NewReadTracker()))
					k := &tools.Toolkit{WS: ws}
					in := e.Input(t, c)
					if in == "" || !utf8.ValidString(in) {
						// "" is the default path for list/glob/grep; JSON
						// cannot carry non-UTF-8 names.
						t.Skip("input is empty or not UTF-8: not expressible as a JSON tool argument")
					}
					before := attacktest.Snapshot(t, e.Base)
					for _, tool := range calls {
						raw, err := json.Marshal(toolcall.Args(tool, in))
						require.NoError(t, err)
						_, err = k.Call(context.Background(), tool, raw)
						if !assert.Error(t, err, "%s(%q) succeeded; the Workspace refuses it with %q (%s)", tool, in, want, c.Why) {
							continue
						}
						var te *tools.Error
						assert.ErrorAs(t, err, &te)
						if !attacktest.ExpectErr(t, err, want, "%s(%q)", tool, in) {
							t.Logf("why: %s", c.Why)
						}
					}
					if !c.MayChangeOutside(attacktest.LayerWorkspace) {
						assert.Equal(t, before, attacktest.Snapshot(t, e.Base), "a refused tool call changed the tree")
					}
				})
			}
			assert.Greater(t, n, 50, "too few corpus cases ran")
		})
	}
}
