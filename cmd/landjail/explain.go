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
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
)

// explanation is one distinct access Landlock denied to the command, said
// in the words of the policy: the right, the path or port, why, and the
// flag that would allow it (the --report file lists them as data).
type explanation struct {
	Right  string `json:"right"`            // Landlock's name: read_file, make_reg, connect_tcp, ...
	Path   string `json:"path,omitempty"`   // the path as the kernel resolved it
	Port   uint16 `json:"port,omitempty"`   // for net.* rights
	Why    string `json:"why"`              // outside every root, deny pattern, read-only, frozen directory, ...
	Allow  string `json:"allow,omitempty"`  // the flag that would allow it, if one does
	Count  int    `json:"count"`            // how many times it was denied
	Denied string `json:"denied,omitempty"` // the program that was denied (comm)
}

// explainer collects Landlock's audit records for one run (--explain).
type explainer struct {
	c   *denials.Collector
	why string // why explanations are unavailable, when c is nil
	// ds and err are what finish read (--learn uses the denials as
	// they are: learner.finish).
	ds  []denials.Denial
	err error
}

// startExplainer starts collecting before the command starts; when
// explanations are unavailable (not root, no audit, Landlock ABI < 7) it
// says why instead.
func startExplainer(ctx context.Context) *explainer {
	if ok, why := denials.Available(); !ok {
		return &explainer{why: why}
	}
	c, err := denials.Start(ctx, denials.Filter{CreatorPIDs: []int{os.Getpid()}})
	if err != nil {
		return &explainer{why: err.Error()}
	}
	return &explainer{c: c}
}

// finish stops collecting and explains each denial against ws; it prints
// them to w and returns them (nil and the reason when unavailable).
func (e *explainer) finish(ws *jail.Workspace, w io.Writer) ([]explanation, string) {
	if e.c == nil {
		fmt.Fprintf(w, "landjail: --explain: denial explanations are unavailable: %s\n", e.why)
		return nil, e.why
	}
	ds, err := e.c.Stop()
	e.ds, e.err = ds, err
	if err != nil && len(ds) == 0 {
		fmt.Fprintf(w, "landjail: --explain: reading Landlock's audit records failed: %v\n", err)
		return nil, err.Error()
	}
	out := make([]explanation, 0, len(ds))
	for _, d := range ds {
		out = append(out, explain(ws, d))
	}
	out = groupProc(out)
	if len(out) == 0 {
		fmt.Fprintln(w, "landjail: --explain: Landlock denied nothing")
		return out, ""
	}
	fmt.Fprintf(w, "landjail: --explain: Landlock denied %d distinct access(es):\n", len(out))
	for _, x := range out {
		what := x.Path
		if x.Path == "" && strings.HasSuffix(x.Right, "_tcp") {
			what = fmt.Sprintf("TCP port %d", x.Port)
		}
		fmt.Fprintf(w, "  %s %s (%d×", x.Right, termsafe.Quote(what), x.Count)
		if x.Denied != "" {
			fmt.Fprintf(w, ", by %s", termsafe.Quote(x.Denied))
		}
		fmt.Fprintf(w, "): %s", termsafe.Quote(x.Why))
		if x.Allow != "" {
			fmt.Fprintf(w, "; to allow: %s", termsafe.Quote(x.Allow))
		}
		fmt.Fprintln(w)
	}
	return out, ""
}

// explain says why the policy denies d and which flag would allow it. It
// asks the Workspace the same question Landlock answered (the Workspace
// is the policy Landlock's rules were compiled from): outside every root,
// a deny pattern or private key, a read-only path or root; when the
// Workspace would allow it, Landlock refused because carve-outs froze the
// directory (entries next to a carved path cannot be created, removed or
// renamed), or because of the system preset.
func explain(ws *jail.Workspace, d denials.Denial) explanation {
	x := explanation{Path: d.Path, Port: d.Port, Count: d.Count, Denied: d.Comm}
	names := make([]string, len(d.Blockers))
	for i, b := range d.Blockers {
		names[i] = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(b, "fs."), "net."), "scope.")
	}
	x.Right = strings.Join(names, ",")
	if len(d.Blockers) == 0 {
		x.Why = "Landlock denied it (no right named)"
		return x
	}
	b := d.Blockers[0]
	switch {
	case b == "net.connect_tcp":
		x.Why = "TCP connect to a port not allowed"
		x.Allow = fmt.Sprintf("--connect-tcp %d", d.Port)
		return x
	case b == "net.bind_tcp":
		x.Why = "TCP bind to a port not allowed"
		x.Allow = fmt.Sprintf("--bind-tcp %d", d.Port)
		return x
	case strings.HasPrefix(b, "scope."):
		x.Why = "outside the sandbox (Landlock scope): another process or an abstract UNIX socket of the host"
		x.Allow = "--no-scope"
		return x
	case b == "fs.ioctl_dev":
		x.Why = "an ioctl on a device file (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): no root grants device ioctls but a --rw one"
		x.Allow = "--rw " + d.Path + " (only if the command really needs it)"
		return x
	case b == "fs.change_topology":
		x.Why = "mounts cannot be changed in a sandbox"
		return x
	case d.Path == "" || !filepath.IsAbs(d.Path):
		x.Why = "Landlock denied it (the path is not absolute in the record: a detached or other mount)"
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
		x.Why = "matches a deny pattern (--deny, --deny-secrets) or holds a private key"
		x.Allow = "drop the pattern that matches it"
	case errors.Is(err, jail.ErrReadOnly):
		x.Why = "read-only: a --read-only path, protected agent configuration, or a --ro/--rox root"
		x.Allow = "--rw " + dir + " (or drop --read-only/--protect-agent-config)"
	case errors.Is(err, jail.ErrNotExecutable):
		x.Why = "in a read-only root without execute"
		x.Allow = "--rox " + dir
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Why = "outside every allowed root"
		switch access {
		case jail.Read:
			x.Allow = "--ro " + dir
		case jail.Execute:
			x.Allow = "--rox " + dir
		default:
			x.Allow = "--rw " + dir
		}
	case err == nil && access == jail.Write:
		x.Why = "a directory frozen by carve-outs: next to a denied or read-only path, entries cannot be created, removed or renamed"
		x.Allow = "the namespace layer (on by default where available) masks instead of freezing; or --no-carve"
	case err == nil:
		x.Why = "allowed by the policy but not by Landlock's rules (the system preset, or a carve-out)"
	default:
		x.Why = "outside the policy (" + err.Error() + ")"
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
func groupProc(xs []explanation) []explanation {
	out := make([]explanation, 0, len(xs))
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
			out = append(out, explanation{Right: x.Right, Path: "/proc/PID/*", Denied: x.Denied,
				Why: "other processes' /proc entries: /proc is outside the policy (it would show the host's processes); expected from ps, top and runtimes that scan /proc"})
		}
		out[i].Count += x.Count
		paths[x.Right]++
		if out[i].Denied != x.Denied {
			out[i].Denied = ""
		}
	}
	for right, i := range groups {
		noun := "paths"
		if paths[right] == 1 {
			noun = "path"
		}
		out[i].Why = fmt.Sprintf("%d %s, %s", paths[right], noun, out[i].Why)
	}
	return out
}
