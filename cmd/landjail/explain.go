package main

import (
	"context"
	"io"
	"os"

	"github.com/landjail/landjail/internal/denials"
	explainpkg "github.com/landjail/landjail/internal/explain"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/seccomp"
)

// explainer collects, for one run (--explain), Landlock's audit records
// (root, Landlock ABI 7) and what the seccomp supervisor records
// (seccomp.Options.Explain: the filter's refusals and the view's, as any
// user).
type explainer struct {
	c   *denials.Collector
	why string // why Landlock's records are unavailable, when c is nil
	all bool   // --explain-all: noise listed with the rest
}

// startExplainer starts collecting before the command starts; when
// Landlock's records are unavailable (not root, no audit, Landlock ABI <
// 7) it says why instead, and the other layers are still explained.
// The records are handled through throttle (nil: directly): the
// command's --cpus share (sandbox.Plan.CPUThrottle, R30b-5).
func startExplainer(ctx context.Context, all bool, throttle func(work func())) *explainer {
	if ok, why := denials.Available(); !ok {
		return &explainer{why: why, all: all}
	}
	c, err := denials.Start(ctx, denials.Filter{CreatorPIDs: []int{os.Getpid()}})
	if err != nil {
		return &explainer{why: err.Error(), all: all}
	}
	c.SetThrottle(throttle)
	return &explainer{c: c, all: all}
}

// finish stops collecting and explains each refusal against ws: the
// Landlock denials, filter's events (nil filter: none), then extra (the
// proxy's, or the path-check fallback's). It prints
// them to w and returns them, noise included (marked), and why Landlock's
// own denials are unavailable ("" when they were read).
func (e *explainer) finish(ws *jail.Workspace, filter *seccomp.Filter, extra []refusal.Refusal, w io.Writer) ([]refusal.Refusal, string) {
	var set refusal.Set
	unavailable := ""
	if e.c == nil {
		unavailable = e.why
	} else if ds, err := e.c.Stop(); err != nil && len(ds) == 0 {
		unavailable = "reading Landlock's audit records failed: " + err.Error()
	} else {
		xs := make([]refusal.Refusal, 0, len(ds))
		for _, d := range ds {
			xs = append(xs, explain(ws, d))
		}
		for _, x := range groupProc(xs) {
			set.Add(x)
		}
	}
	for _, ev := range filter.Events() {
		if ev.Why == seccomp.LandlockRead && unavailable == "" {
			continue // Landlock's own records have it
		}
		set.Add(explainEvent(ws, ev))
	}
	for _, x := range extra {
		set.Add(x)
	}
	out := explainpkg.Relate(set.List())
	printRefusals(w, out, e.all, unavailable, filter.Explained())
	return out, unavailable
}

// printRefusals, explain, groupProc, explainEvent and toolchainRoot are
// internal/explain's, under the names cmd/landjail's tests use.
var (
	printRefusals = explainpkg.Print
	explain       = explainpkg.Landlock
	groupProc     = explainpkg.GroupProc
	explainEvent  = explainpkg.Event
	toolchainRoot = explainpkg.ToolchainRoot
)
