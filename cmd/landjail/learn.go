package main

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/internal/learn"
	"github.com/landjail/landjail/internal/refusal"
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

// finish turns what the run was refused into grants and writes FILE:
// refused are the run's refusals from every layer as --explain collected
// them (Landlock's audit records, the namespace view's and seccomp's
// from the filter's supervisor, the proxy's; noise marked),
// unavailable why Landlock's own are missing (not root: said on stderr,
// the rest is still learned), proxyErr why the proxy's are lost. Each
// file-system refusal is classified against the run's policy
// (learn.PolicyClassifier). It prints one summary line and returns the
// write's error.
func (l *learner) finish(plan *sandbox.Plan, refused []refusal.Refusal, unavailable, proxyErr string, exitCode int, stderr io.Writer) error {
	defer l.f.Close()
	if unavailable != "" {
		fmt.Fprintf(stderr, "landjail: --learn: Landlock's own refusals are unavailable (%s): the view's, seccomp's and the proxy's are learned\n", termsafe.Quote(unavailable))
	}
	if proxyErr != "" {
		fmt.Fprintf(stderr, "landjail: --learn: the proxy's refusals are lost (%s)\n", termsafe.Quote(proxyErr))
	}
	o := plan.Options
	memo := learn.NewMemo() // bounded, and each directory walked once (R30b-6)
	defer memo.Close()
	c := learn.PolicyClassifier{WS: plan.WS, Probe: func(dir string) (*jail.Workspace, error) {
		return o.Policy(jail.WithAllowed(dir, jail.ReadOnly))
	}, Pinned: o.PolicyFiles(), Memo: memo, Throttle: plan.CPUThrottle()}
	out, p, err := learn.Update(l.f.Text(), l.f.Dir(), learn.FromRefusals(refused, c))
	if err != nil {
		return fmt.Errorf("--learn %s: %w", termsafe.Quote(l.f.Path()), err)
	}
	if err := l.f.Write(out); err != nil {
		return fmt.Errorf("--learn: %w", err)
	}
	fmt.Fprintf(stderr, "landjail: --learn: %s: %d new grant(s), %d refusal(s) not granted (listed in its comments)\n",
		termsafe.Quote(l.f.Path()), len(p.Add), len(p.Comments))
	// Each grant on a line of its own: the command chose what it was
	// refused, so FILE is reviewed before it is used again (red team R6-3).
	for _, e := range p.Add {
		fmt.Fprintf(stderr, "landjail: --learn: + %s %s (%s)\n", e.Key, termsafe.Quote(e.Value), termsafe.Quote(e.Note))
	}
	if len(p.Add) > 0 {
		fmt.Fprintln(stderr, "landjail: --learn: the command chose what it was refused: review these grants before the next --config run")
	}
	if exitCode != 0 && o.NoSeccomp && plan.Ruleset != nil && plan.Ruleset.Report().Layer == landlock.LayerNamespaces {
		fmt.Fprintln(stderr, "landjail: --learn: with --no-seccomp nothing records the namespace view's refusals (a write outside the writable roots fails with EROFS there): learn such writes without --no-seccomp, or with --no-namespaces")
	}
	return nil
}

// close releases the file when the run ends before finish.
func (l *learner) close() {
	if l != nil {
		l.f.Close()
	}
}
