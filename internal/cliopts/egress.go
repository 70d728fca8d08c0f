package cliopts

import (
	"fmt"
	"slices"

	"github.com/landjail/landjail/internal/egressns"
	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// Transparent egress (issue 24): in the airtight mode the command's
// network namespace also gets a DNS responder on 127.0.0.1:53 that
// answers only listed names, with addresses of
// allowlist.SyntheticPrefix routed to loopback, and a listener per
// allowlist port that the proxy serves (netproxy.Proxy.ServeTransparent:
// the TLS SNI or HTTP Host must name the host the address was given
// to). Programs that ignore the proxy variables (Node's fetch, Java,
// git://, ssh to a NAME:22 entry) then reach listed hosts, and only
// those. Use: TransparentPorts into landlock.Options.TransparentTCP
// before compiling; after Decide, Transparent says whether it is in
// force, and SeccompFilterTransparent gives the seccomp layer that lets
// the command's UDP reach the responder.

// TransparentPorts returns the TCP ports of the transparent listeners
// for landlock.Options.TransparentTCP: allowlist.TransparentPorts of the
// list, without the proxy's own port; nil without a proxy or when the
// list names more than allowlist.MaxTransparentPorts ports (then no
// transparent egress).
func (a *AllowProxy) TransparentPorts() []uint16 {
	if a == nil {
		return nil
	}
	return slices.DeleteFunc(TransparentPorts(a.allow), func(p uint16) bool { return p == a.port })
}

// TransparentPorts returns allowlist.TransparentPorts of an
// --allow-domain list, nil when it does not parse or names more than
// allowlist.MaxTransparentPorts ports. --print-rules uses it (the proxy's
// port is not known then); AllowProxy.TransparentPorts at run time.
func TransparentPorts(allow []string) []uint16 {
	rules, err := allowlist.ParseAllow(allow)
	if err != nil || len(rules) == 0 {
		return nil
	}
	ports := allowlist.TransparentPorts(rules)
	if len(ports) > allowlist.MaxTransparentPorts {
		return nil
	}
	return ports
}

// transparentFor reports whether transparent egress is in force for a
// mode and the Ruleset's report: only airtight, and only when Landlock
// enforces a connect rule for every transparent port (the caller asked
// for them: landjail run does, landjail-mcp's calls do not).
func (a *AllowProxy) transparentFor(mode Network, rep *landlock.Report) bool {
	ports := a.TransparentPorts()
	return mode == NetworkAirtight && len(ports) > 0 && slices.Equal(rep.TransparentTCP, ports)
}

// Transparent reports whether Decide put transparent egress in force.
func (a *AllowProxy) Transparent() bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.transparent
}

// setupEgress runs in the InNamespace hook, after the proxy's listener:
// with transparent egress, the synthetic range's route, the DNS socket
// and the transparent listeners (egressns.Setup), kept for Serve.
func (a *AllowProxy) setupEgress() error {
	a.mu.Lock()
	on := a.transparent
	a.mu.Unlock()
	if !on {
		return nil
	}
	s, err := egressns.Setup(a.TransparentPorts())
	if err != nil {
		return fmt.Errorf("--%s: transparent egress in the command's network namespace: %w", flagAllowDomain, err)
	}
	a.mu.Lock()
	a.egress = s
	a.mu.Unlock()
	return nil
}

// SeccompFilterTransparent is SeccompFilterFor with UDP sockets allowed
// (seccomp.Options.UDPPrivateNetwork), for a command with transparent egress: its
// resolver must reach the responder on 127.0.0.1:53. It opens nothing
// else: the command's network namespace routes only loopback and
// allowlist.SyntheticPrefix (to loopback), so UDP reaches no other host.
// Errors: seccomp.Build's.
func (o *Options) SeccompFilterTransparent(rs *landlock.Ruleset) (*seccomp.Filter, error) {
	opt := o.seccompOptions(rs.Report().Layer != landlock.LayerNamespaces)
	opt.UDPPrivateNetwork = true
	return o.seccompFilter(opt)
}
