// Package early starts, from a package initializer, what every "landjail
// run" needs first from the control groups: limits.StartEarly (the probe,
// then the group a StartPending asks for, then the sweep of stale groups)
// on a goroutine of its own. Imported for that effect alone, by
// cmd/landjail only. Its initialization needs only os's and the limits
// package's (light: procstat, osthread, os/exec), so it runs before most
// of landjail's packages initialize and before main, where StartEarly was
// called before (cmd/landjail's startLimitsEarly, which now calls it only
// when this did not: Started). The command line is only glanced at, as
// startLimitsEarly does: a wrong guess costs a probe and a sweep that the
// next Start would make anyway, never behaviour.
//
// Nothing is started for a process marked as landjail's init stage
// (LANDJAIL_NSINIT, nsinit.EnvMarker): its argv is one word anyway, and
// outside a PID namespace init exec.Init refuses it and exits at once,
// which would cut a sweep short. The audit watchdog's argv is one word too.
package early

import (
	"os"

	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/selfproc"
)

// Started reports whether this package's initializer called
// limits.StartEarly. Read it after package initialization only.
var Started bool

// envNsinit is nsinit.EnvMarker (package nsinit is not imported: its
// dependencies would initialize first).
const envNsinit = "LANDJAIL_NSINIT"

func init() {
	if _, stage := os.LookupEnv(envNsinit); stage || !Glance(os.Args) {
		return
	}
	limits.StartEarly()
	Started = true
}

// Glance reports whether args (args[0] the program) is a "landjail run"
// that will make its control group: "run", and neither --help nor
// --print-rules before "--".
func Glance(args []string) bool { return selfproc.IsRun(args) }
