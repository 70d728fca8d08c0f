package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/internal/attacktest/toolcall"
	"github.com/landjail/landjail/internal/kerneltest"
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
			toolcall.Run(t, cases, func(t *testing.T, r toolcall.Refusal) {
				for _, tool := range r.Tools {
					raw, err := json.Marshal(toolcall.Args(tool, r.In))
					require.NoError(t, err)
					_, err = r.Toolkit.Call(context.Background(), tool, raw)
					if !assert.Error(t, err, "%s(%q) succeeded; the Workspace refuses it with %q (%s)", tool, r.In, r.Want, r.Case.Why) {
						continue
					}
					var te *tools.Error
					assert.ErrorAs(t, err, &te)
					if !attacktest.ExpectErr(t, err, r.Want, "%s(%q)", tool, r.In) {
						t.Logf("why: %s", r.Case.Why)
					}
				}
			})
		})
	}
}
