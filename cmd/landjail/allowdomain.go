package main

import (
	"fmt"
	"io"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/landlock"
)

// reportRefusals stops the --allow-domain proxy (the command has been
// reaped), prints one line per kind of refused request on stderr
// ("landjail: proxy refused HOST:PORT N times (WHY)") and returns them
// for the report, with what went wrong with the proxy's process ("" when
// it reported: its refusals are lost otherwise). Nothing without a proxy.
func reportRefusals(proxy *cliopts.AllowProxy, stderr io.Writer) (refused []cliopts.Refusal, proxyErr string) {
	refused, err := proxy.Finish()
	if err != nil {
		fmt.Fprintf(stderr, "landjail: %v (the refusals it counted are lost)\n", err)
		proxyErr = err.Error()
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "landjail: %s\n", cliopts.FormatRefusal(r))
	}
	return refused, proxyErr
}

// printAllowDomain ends --print-rules with the --allow-domain proxy, as a
// comment line: the listed entries and whether the list will be airtight
// (a private network namespace) or only advisory.
func printAllowDomain(w io.Writer, o *options, r *landlock.Report) {
	if len(o.AllowDomain) == 0 {
		return
	}
	// As cliopts.AllowProxy.Decide decides at run time; the proxy's
	// connect rule is there whenever Landlock handles TCP.
	mode, _ := cliopts.NetworkMode(r, r.Level == landlock.LevelLandlock && len(r.HandledNet) > 0, o.NoNamespaces, o.NoSeccomp)
	fmt.Fprintf(w, "# network: %s, TCP connect only to its port (chosen at run time); allowed: %v\n", mode, o.AllowDomain)
	if mode == cliopts.NetworkAirtight && len(r.TransparentTCP) > 0 {
		fmt.Fprintf(w, "# transparent egress: DNS on 127.0.0.1:53 for the listed names, TCP connect to ports %v in the command's network namespace\n", r.TransparentTCP)
	}
}
