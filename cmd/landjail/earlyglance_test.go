package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/nsinit"
)

// TestStartLimitsEarlyGlance: main starts the limits goroutine before the
// stage entry points, so startLimitsEarly itself must start nothing for a
// process that is not a "landjail run": a stage's or the watchdog's argv
// of one word, another subcommand, help, --print-rules, and a run whose
// environment carries nsinit.EnvMarker (exec.Init exits on it, outside a
// PID namespace init, and would cut a sweep short). Control: a plain run
// is seen as one, with the mode guesses startEarly uses. Shown able to
// fail: without the EnvMarker check, the marked run was taken for a run
// (red).
func TestStartLimitsEarlyGlance(t *testing.T) {
	defer limits.WaitEarly() // the control starts the sweep
	for _, tc := range []struct {
		name   string
		args   []string
		marker bool
		want   earlyRun
	}{
		{"stage argv", []string{"landjail-nsinit"}, false, earlyRun{namespaces: true, privateNetwork: true}},
		{"other subcommand", []string{"landjail", "gc"}, false, earlyRun{namespaces: true, privateNetwork: true}},
		{"help", []string{"landjail", "run", "--help"}, false, earlyRun{namespaces: true, privateNetwork: true}},
		{"print-rules", []string{"landjail", "run", "--print-rules", "--", "true"}, false, earlyRun{namespaces: true, privateNetwork: true}},
		{"marked as a stage", []string{"landjail", "run", "--", "true"}, true, earlyRun{namespaces: true, privateNetwork: true}},
		{"control: a run", []string{"landjail", "run", "--no-namespaces", "--net", "host", "--", "true", "--help"}, false, earlyRun{run: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.marker {
				t.Setenv(nsinit.EnvMarker, "x")
			}
			assert.Equal(t, tc.want, startLimitsEarly(tc.args))
		})
	}
}
