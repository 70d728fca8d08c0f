package main

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// allowUnixReport is the report's "allow_unix": the named sockets
// (--allow-unix) and how they are enforced.
type allowUnixReport struct {
	Sockets     []seccomp.UnixSocket `json:"sockets"`
	Enforcement string               `json:"enforcement"`
}

// allowUnixOf is the report's allow_unix for a command confined by rs,
// with the seccomp layer or without (nil without --allow-unix).
func allowUnixOf(o *options, rs *landlock.Ruleset, seccompOn bool) *allowUnixReport {
	if len(o.AllowUnix) == 0 {
		return nil
	}
	socks, _ := o.NamedUnixSockets() // checked by validate
	_, how := o.AllowUnixEnforcement(rs, seccompOn)
	return &allowUnixReport{Sockets: socks, Enforcement: how}
}

// printAllowUnix is --print-rules' "# allow-unix:" line.
func printAllowUnix(w io.Writer, o *options, rs *landlock.Ruleset, seccompOn bool) {
	r := allowUnixOf(o, rs, seccompOn)
	if r == nil {
		return
	}
	fmt.Fprintf(w, "# allow-unix: %s;", r.Enforcement)
	for _, s := range r.Sockets {
		fmt.Fprintf(w, " %s (dev %d, inode %d)", termsafe.Quote(s.Path), s.Dev, s.Ino)
	}
	fmt.Fprintln(w)
}
