package main

import (
	"fmt"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/refusal"
)

// Exit statuses that look like a refusal without --explain's evidence:
// a shell's "found but cannot execute" (126, POSIX: EACCES on execve, the
// view's noexec mounts and Landlock's execute right) and sysexits.h's
// EX_NOPERM (77).
const (
	exitCannotExecute = 126
	exitNoPerm        = 77
)

// deniedHint is the line printed after a run without --explain, or "":
// only when the run shows a refusal (the proxy refused a request, the
// filter killed the command with SIGSYS) or its status looks like one
// (126, 77). A command that failed for its own reasons (exit 1, exit 7, a
// failing test) gets no line: nothing says a layer refused it, and the
// line was noise in CI logs (issue 23).
func deniedHint(argv0 string, code int, signal string, proxyRefused, enforced bool) string {
	if code == 0 || !enforced {
		return ""
	}
	var why string
	switch {
	case proxyRefused:
		why = "the proxy refused a request"
	case signal == "SIGSYS":
		why = "it was killed by the seccomp filter (SIGSYS)"
	case code == exitCannotExecute:
		why = "status 126 is a shell's \"cannot execute\""
	case code == exitNoPerm:
		why = "status 77 is EX_NOPERM"
	default:
		return ""
	}
	return fmt.Sprintf("landjail: %s exited with status %d and %s; --explain lists what was refused and the flag that allows it (--print-rules shows the rules)", argv0, code, why)
}

// proxyRefusals are the proxy's refusals as records (--explain).
func proxyRefusals(rs []cliopts.Refusal) []refusal.Refusal {
	out := make([]refusal.Refusal, 0, len(rs))
	for _, r := range rs {
		x := refusal.Refusal{Layer: refusal.Proxy, Host: r.Host, Port: r.Port, Right: refusal.RightConnect,
			Rule: "proxy: " + r.Reason, Count: r.Count}
		if r.Host != "" {
			x.Flag = "--allow-domain " + r.Host
		}
		out = append(out, x)
	}
	return out
}
