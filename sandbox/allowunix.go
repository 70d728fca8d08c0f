package sandbox

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/internal/cliopts"
)

// checkAllowUnix warns, in one line, when --allow-unix is not enforced as
// asked (the named sockets refused too, or every socket open), and
// refuses to run with --strict.
func (p *Plan) checkAllowUnix(stderr io.Writer) error {
	mode, how := p.Options.AllowUnixEnforcement(p.Ruleset, p.Seccomp != nil)
	if mode != cliopts.UnixRefused && mode != cliopts.UnixNotEnforced {
		return nil
	}
	if p.Options.Strict {
		return fmt.Errorf("--allow-unix is %s (--strict)", how)
	}
	fmt.Fprintf(stderr, "landjail: warning: --allow-unix %s (--strict refuses)\n", how)
	return nil
}
