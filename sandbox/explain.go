package sandbox

import (
	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/explain"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/landlock"
)

// callExplain gives a server call (landjail-mcp's bash tool) a seccomp
// filter of its own that records what it and the view refuse, and
// Landlock's read refusals through the broker (Options.Explain; the
// server reads no audit records), so that each call's result lists its
// own refusals: finish returns one line each (explain.Line), noise
// counted in one line unless Options.ExplainAll. Without Options.Explain,
// or without seccomp, nothing changes and finish returns nil.
func (p *Plan) callExplain(rs *landlock.Ruleset, c *exec.Cmd) (finish func() []string, err error) {
	if !p.Options.Explain || c.Seccomp == nil {
		return func() []string { return nil }, nil
	}
	f, err := p.Options.SeccompFilterExplaining(rs)
	if err != nil {
		return nil, err
	}
	// Its supervisor works for the command: charged to --cpus, as the
	// run's own filter is (red team round 27, R27f-2: 0.6-0.7 CPU at
	// --cpus 0.1).
	f.LimitSupervisorCPU(p.spec.CPUs)
	c.Seccomp = f
	return func() []string {
		var set refusal.Set
		for _, e := range f.Events() {
			set.Add(explain.Event(p.WS, e))
		}
		var lines []string
		noise := 0
		for _, x := range explain.Relate(set.List()) {
			if x.Noise && !p.Options.ExplainAll {
				noise++
				continue
			}
			lines = append(lines, "refused: "+explain.Line(x))
		}
		if noise > 0 {
			lines = append(lines, "refused: more probes the Go runtime, glibc or the loader make and handle when refused (explain_all lists them)")
		}
		return lines
	}, nil
}
