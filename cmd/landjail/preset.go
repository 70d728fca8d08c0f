package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/landjail/landjail/internal/preset"
	"github.com/landjail/landjail/internal/termsafe"
)

// printPresets ends --print-rules with one comment block per --preset:
// what was found and not granted, the variables it sets (env is the
// command's environment; with --allow-domain the proxy variables are
// added at start), and the registries it downloads from that
// --allow-domain does not list. Nothing without --preset.
func printPresets(w io.Writer, o *options, env []string) {
	missing := o.PresetRegistries()
	for _, p := range o.Presets() {
		fmt.Fprintf(w, "# preset %s:", p.Name)
		if len(p.Roots) == 0 {
			fmt.Fprint(w, " no roots beyond the system preset")
		}
		for _, r := range p.Roots {
			fmt.Fprintf(w, " %s %s (%s);", r.Access, termsafe.Quote(r.Path), termsafe.Escape(r.Why))
		}
		fmt.Fprintln(w)
		var set []string
		for _, kv := range p.Env(homeOf(env)) {
			name, _, _ := strings.Cut(kv, "=")
			for _, e := range env {
				if n, _, _ := strings.Cut(e, "="); n == name {
					set = append(set, e)
				}
			}
		}
		if len(set) > 0 {
			fmt.Fprintf(w, "#   env: %s\n", termsafe.Escape(strings.Join(set, " ")))
		}
		if p.ProxyEnv("127.0.0.1:1") != nil {
			fmt.Fprintf(w, "#   with --allow-domain also: %s\n", proxyNames(p))
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "#   note: %s\n", termsafe.Escape(n))
		}
		if m := missing[p.Name]; len(m) > 0 {
			fmt.Fprintf(w, "#   registries, not allowed (no network unless --allow-domain lists them): %s\n", strings.Join(m, " "))
		}
	}
}

// proxyNames lists the variables p sets for a proxy.
func proxyNames(p *preset.Preset) string {
	var names []string
	for _, kv := range p.ProxyEnv("127.0.0.1:1") {
		n, _, _ := strings.Cut(kv, "=")
		names = append(names, n)
	}
	return strings.Join(names, " ")
}

func homeOf(env []string) string {
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	return home
}

// explainPresets adds to --explain, after a command that failed, the
// registries each --preset toolchain downloads from that --allow-domain
// does not list: a download it tried failed at name resolution or at
// the proxy, which Landlock does not record.
func explainPresets(w io.Writer, o *options) {
	missing := o.PresetRegistries()
	for _, p := range o.Presets() {
		m := missing[p.Name]
		if len(m) == 0 {
			continue
		}
		fmt.Fprintf(w, "landjail: --explain: preset %s downloads from %s, not allowed: if it tried, add --allow-domain %s\n", p.Name, strings.Join(m, ", "), strings.Join(m, " --allow-domain "))
	}
}
