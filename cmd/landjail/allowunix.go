package main

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// allowUnixReport is the report's "allow_unix": the named sockets
// (--allow-unix) and how they are enforced.
type allowUnixReport struct {
	Sockets     []seccomp.UnixSocket `json:"sockets"`
	Enforcement string               `json:"enforcement"`
}

// allowUnixOf is the report's allow_unix for a command confined by rs
// (nil without --allow-unix).
func allowUnixOf(o *options, rs *landlock.Ruleset) *allowUnixReport {
	if len(o.AllowUnix) == 0 {
		return nil
	}
	socks, _ := o.NamedUnixSockets() // checked by validate
	return &allowUnixReport{Sockets: socks, Enforcement: o.AllowUnixEnforcement(rs)}
}

// printAllowUnix is --print-rules' "# allow-unix:" line.
func printAllowUnix(w io.Writer, o *options, rs *landlock.Ruleset) {
	r := allowUnixOf(o, rs)
	if r == nil {
		return
	}
	fmt.Fprintf(w, "# allow-unix: %s;", r.Enforcement)
	for _, s := range r.Sockets {
		fmt.Fprintf(w, " %s (dev %d, inode %d)", s.Path, s.Dev, s.Ino)
	}
	fmt.Fprintln(w)
}
