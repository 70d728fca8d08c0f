package main

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/learn"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/sandbox"
)

// learner is one run's --learn FILE: opened, read and checked before the
// command starts (what the command does to the file meanwhile is neither
// merged nor kept: it is replaced through the directory descriptor taken
// now), merged and written after it exits.
type learner struct {
	f *learn.File
}

// startLearner opens --learn's FILE (nil without --learn). A FILE that
// cannot be merged into (not TOML, a table, a symbolic link) is an error
// now, before the command runs.
func startLearner(o *options) (*learner, error) {
	if o.Learn() == "" {
		return nil, nil
	}
	f, err := learn.Open(o.Learn())
	if err != nil {
		return nil, fmt.Errorf("--learn: %w", err)
	}
	if _, _, err := learn.Update(f.Text(), f.Dir(), nil); err != nil {
		f.Close()
		return nil, fmt.Errorf("--learn %s: %w", termsafe.Quote(f.Path()), err)
	}
	return &learner{f: f}, nil
}

// finish turns what the run was refused into grants and writes FILE: the
// Landlock denials ex collected (nil or unavailable: said on stderr, and
// FILE holds what the proxy refused only), the proxy's refusals. It
// prints one summary line and returns the write's error.
func (l *learner) finish(plan *sandbox.Plan, ex *explainer, proxyRefused []cliopts.Refusal, proxyErr string, exitCode int, stderr io.Writer) error {
	defer l.f.Close()
	var refs []learn.Refusal
	switch {
	case ex == nil || ex.c == nil:
		why := "not collected"
		if ex != nil {
			why = ex.why
		}
		fmt.Fprintf(stderr, "landjail: --learn: Landlock's refusals are unavailable (%s): only the proxy's refusals are learned\n", termsafe.Quote(why))
	case ex.err != nil:
		fmt.Fprintf(stderr, "landjail: --learn: reading Landlock's refusals failed (%v): what was read is learned\n", ex.err)
		fallthrough
	default:
		o := plan.Options
		c := learn.PolicyClassifier{WS: plan.WS, Probe: func(dir string) (*jail.Workspace, error) {
			return o.Policy(jail.WithAllowed(dir, jail.ReadOnly))
		}}
		refs = learn.FromDenials(ex.ds, c)
	}
	if proxyErr != "" {
		fmt.Fprintf(stderr, "landjail: --learn: the proxy's refusals are lost (%s)\n", termsafe.Quote(proxyErr))
	}
	for _, r := range proxyRefused {
		refs = append(refs, learn.FromProxy(r.Host, r.Port, r.Reason))
	}
	out, p, err := learn.Update(l.f.Text(), l.f.Dir(), refs)
	if err != nil {
		return fmt.Errorf("--learn %s: %w", termsafe.Quote(l.f.Path()), err)
	}
	if err := l.f.Write(out); err != nil {
		return fmt.Errorf("--learn: %w", err)
	}
	fmt.Fprintf(stderr, "landjail: --learn: %s: %d new grant(s), %d refusal(s) not granted (listed in its comments)\n",
		termsafe.Quote(l.f.Path()), len(p.Add), len(p.Comments))
	if exitCode != 0 && plan.Ruleset != nil && plan.Ruleset.Report().Layer == landlock.LayerNamespaces {
		fmt.Fprintln(stderr, "landjail: --learn: with the namespace layer a write outside the writable roots fails with EROFS in the read-only view, which is not recorded yet: learn such writes with --no-namespaces")
	}
	return nil
}

// close releases the file when the run ends before finish.
func (l *learner) close() {
	if l != nil {
		l.f.Close()
	}
}
