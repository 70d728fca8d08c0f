package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/internal/termsafe"
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
func startExplainer(ctx context.Context, all bool) *explainer {
	if ok, why := denials.Available(); !ok {
		return &explainer{why: why, all: all}
	}
	c, err := denials.Start(ctx, denials.Filter{CreatorPIDs: []int{os.Getpid()}})
	if err != nil {
		return &explainer{why: err.Error(), all: all}
	}
	return &explainer{c: c, all: all}
}

// finish stops collecting and explains each refusal against ws: the
// Landlock denials, filter's events (nil filter: none), then the proxy's. It prints
// them to w and returns them, noise included (marked), and why Landlock's
// own denials are unavailable ("" when they were read).
func (e *explainer) finish(ws *jail.Workspace, filter *seccomp.Filter, proxied []refusal.Refusal, w io.Writer) ([]refusal.Refusal, string) {
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
	for _, x := range proxied {
		set.Add(x)
	}
	out := set.List()
	printRefusals(w, out, e.all, unavailable, filter.Explained())
	return out, unavailable
}

// printRefusals prints the --explain lines: one per refusal, the layer
// (but Landlock's, printed as it always was), right, what, count, program,
// rule and remedy; noise counted apart unless all.
func printRefusals(w io.Writer, xs []refusal.Refusal, all bool, unavailable string, others bool) {
	if unavailable != "" {
		if others {
			fmt.Fprintf(w, "landjail: --explain: Landlock's own denials are unavailable (%s); the view's, seccomp's and the reads the broker saw refused are listed\n", unavailable)
		} else {
			fmt.Fprintf(w, "landjail: --explain: denial explanations are unavailable: %s\n", unavailable)
		}
	}
	var shown []refusal.Refusal
	noise, noiseCount := 0, 0
	for _, x := range xs {
		if x.Noise && !all {
			noise++
			noiseCount += x.Count
			continue
		}
		shown = append(shown, x)
	}
	switch {
	case len(shown) == 0 && noise == 0:
		fmt.Fprintln(w, "landjail: --explain: nothing was refused")
	case len(shown) > 0:
		fmt.Fprintf(w, "landjail: --explain: %d distinct refusal(s):\n", len(shown))
	}
	for _, x := range shown {
		fmt.Fprint(w, "  ")
		if x.Layer != refusal.Landlock {
			fmt.Fprintf(w, "[%s] ", x.Layer)
		}
		fmt.Fprint(w, x.Right)
		if t := x.Target(); t != "" {
			fmt.Fprintf(w, " %s", termsafe.Quote(t))
		}
		fmt.Fprintf(w, " (%d×", x.Count)
		if x.Comm != "" {
			fmt.Fprintf(w, ", by %s", termsafe.Quote(x.Comm))
		}
		fmt.Fprintf(w, "): %s", termsafe.Quote(x.Rule))
		switch {
		case x.Flag != "":
			fmt.Fprintf(w, "; to allow: %s", termsafe.Quote(x.Flag))
		case x.ByDesign:
			fmt.Fprint(w, "; not allowed by design")
		}
		if x.Noise {
			fmt.Fprint(w, " [probe, handled when refused]")
		}
		fmt.Fprintln(w)
	}
	if noise > 0 && !all {
		fmt.Fprintf(w, "landjail: --explain: %d more (%d×) are probes the Go runtime, glibc or the loader make and handle when refused; --explain-all lists them\n", noise, noiseCount)
	}
}

// explain says why the policy denies d and which flag would allow it. It
// asks the Workspace the same question Landlock answered (the Workspace
// is the policy Landlock's rules were compiled from): outside every root,
// a deny pattern or private key, a read-only path or root; when the
// Workspace would allow it, Landlock refused because carve-outs froze the
// directory (entries next to a carved path cannot be created, removed or
// renamed), or because of the system preset.
func explain(ws *jail.Workspace, d denials.Denial) refusal.Refusal {
	x := refusal.Refusal{Layer: refusal.Landlock, Path: d.Path, Port: d.Port, Count: d.Count, Comm: d.Comm}
	x.Noise = noisePath(d.Path)
	names := make([]string, len(d.Blockers))
	for i, b := range d.Blockers {
		names[i] = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(b, "fs."), "net."), "scope.")
	}
	x.Right = strings.Join(names, ",")
	if len(d.Blockers) == 0 {
		x.Rule = "Landlock denied it (no right named)"
		return x
	}
	b := d.Blockers[0]
	switch {
	case b == "net.connect_tcp":
		x.Rule = "TCP connect to a port not allowed"
		x.Flag = fmt.Sprintf("--connect-tcp %d", d.Port)
		return x
	case b == "net.bind_tcp":
		x.Rule = "TCP bind to a port not allowed"
		x.Flag = fmt.Sprintf("--bind-tcp %d", d.Port)
		return x
	case strings.HasPrefix(b, "scope."):
		x.Rule = "outside the sandbox (Landlock scope): another process or an abstract UNIX socket of the host"
		x.Flag = "--no-scope"
		return x
	case b == "fs.ioctl_dev":
		x.Rule = "an ioctl on a device file (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): no root grants device ioctls but a --rw one"
		x.Flag = "--rw " + d.Path + " (only if the command really needs it)"
		return x
	case b == "fs.change_topology":
		x.Rule = "mounts cannot be changed in a sandbox"
		x.ByDesign = true
		return x
	case d.Path == "" || !filepath.IsAbs(d.Path):
		x.Rule = "Landlock denied it (the path is not absolute in the record: a detached or other mount)"
		return x
	}
	access := jail.Write
	switch b {
	case "fs.read_file", "fs.read_dir":
		access = jail.Read
	case "fs.execute":
		access = jail.Execute
	}
	_, err := ws.Check(d.Path, access)
	// What a flag should name: the file itself for an access to a file
	// (--ro/--rox/--rw take single files), the directory for creating,
	// removing or renaming entries in it.
	dir := d.Path
	switch b {
	case "fs.read_file", "fs.read_dir", "fs.execute", "fs.write_file", "fs.truncate":
	default:
		if fi, err := os.Stat(d.Path); err != nil || !fi.IsDir() {
			dir = filepath.Dir(d.Path)
		}
	}
	switch {
	case errors.Is(err, jail.ErrDenied):
		x.Rule = "matches a deny pattern (--deny, --deny-secrets) or holds a private key"
		x.Flag = "drop the pattern that matches it"
	case errors.Is(err, jail.ErrReadOnly):
		x.Rule = "read-only: a --read-only path, protected agent configuration, or a --ro/--rox root"
		x.Flag = "--rw " + dir + " (or drop --read-only/--protect-agent-config)"
	case errors.Is(err, jail.ErrNotExecutable):
		x.Rule = "in a read-only root without execute"
		x.Flag = "--rox " + toolchainRoot(dir)
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Rule = "outside every allowed root"
		switch access {
		case jail.Read:
			x.Flag = "--ro " + dir
		case jail.Execute:
			x.Flag = "--rox " + toolchainRoot(dir)
		default:
			x.Flag = "--rw " + dir
		}
	case err == nil && access == jail.Write:
		x.Rule = "a directory frozen by carve-outs: next to a denied or read-only path, entries cannot be created, removed or renamed"
		x.Flag = "the namespace layer (on by default where available) masks instead of freezing; or --no-carve"
	case err == nil:
		x.Rule = "allowed by the policy but not by Landlock's rules (the system preset, or a carve-out)"
	default:
		x.Rule = "outside the policy (" + err.Error() + ")"
	}
	return x
}

// procPIDPath reports whether p names an entry of a numbered process
// directory, /proc/N or below (not /proc/self or /proc/thread-self: those
// are the command's own and stay listed one by one).
func procPIDPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "/")
	if pid == "" {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// groupProc folds the denials of numbered /proc entries (ps, top, shell
// completion and language runtimes walk them: one line per process and
// file drowned the rest) into one line per right, "/proc/PID/*", with the
// number of paths and of denials. They are expected: /proc is outside the
// policy (it would show every process of the host), and no flag grants
// it. Order is kept, the group where its first member was.
func groupProc(xs []refusal.Refusal) []refusal.Refusal {
	out := make([]refusal.Refusal, 0, len(xs))
	groups := map[string]int{} // right -> index in out
	paths := map[string]int{}
	for _, x := range xs {
		if !procPIDPath(x.Path) {
			out = append(out, x)
			continue
		}
		i, ok := groups[x.Right]
		if !ok {
			i = len(out)
			groups[x.Right] = i
			out = append(out, refusal.Refusal{Layer: x.Layer, Right: x.Right, Path: "/proc/PID/*", Comm: x.Comm, ByDesign: true,
				Rule: "other processes' /proc entries: /proc is outside the policy (it would show the host's processes); expected from ps, top and runtimes that scan /proc"})
		}
		out[i].Count += x.Count
		paths[x.Right]++
		if out[i].Comm != x.Comm {
			out[i].Comm = ""
		}
	}
	for right, i := range groups {
		noun := "paths"
		if paths[right] == 1 {
			noun = "path"
		}
		out[i].Rule = fmt.Sprintf("%d %s, %s", paths[right], noun, out[i].Rule)
	}
	return out
}
