package cliopts

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"github.com/landjail/landjail/internal/preset"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

const flagPreset = "preset"

// presetFlag is --preset, a policy flag (run, resolve and mcp answer with
// the same grants).
func presetFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: flagPreset, Usage: "grant a language toolchain: `NAME` go, java, node, python or rust (repeatable), or auto (from the workspace's go.mod, package.json, pyproject.toml, Cargo.toml, pom.xml, ...): its directories found from PATH (GOROOT, pyenv, nvm, rustup, SDKMAN!) read-execute, its caches in the command's HOME, its clients' proxy variables with --allow-domain; registries stay explicit (--print-rules names them)"}
}

// presetState caches the discovery of the --preset toolchains (Presets).
// Load fills it, before the Options are shared between goroutines.
type presetState struct {
	done bool
	list []*preset.Preset
}

// validatePresets checks the --preset names (preset.ErrUnknown).
func (o *Options) validatePresets() error {
	if _, err := preset.Expand(o.Preset, "/nonexistent"); err != nil {
		return fmt.Errorf("invalid --%s: %w", flagPreset, err)
	}
	return nil
}

// Presets returns the --preset toolchains as found on this machine
// (preset.Find; "auto" expanded from the workspace's marker files), once
// per Options: the same grants for the policy, the environment and
// --print-rules. Nil without --preset. Load calls it; for Options made
// otherwise, the first call must not race with another. Discovery executes nothing and
// trusts nothing inside the workspace, a --rw root or landjail's private
// HOMEs and TMPDIRs.
func (o *Options) Presets() []*preset.Preset {
	if len(o.Preset) == 0 {
		return nil
	}
	if !o.presets.done {
		o.presets.done = true
		root := o.Workspace
		if root == "" {
			root, _ = implicitWorkspace()
		}
		canon := func(p string) string {
			if c, err := filepath.EvalSymlinks(p); err == nil {
				return c
			}
			return filepath.Clean(p)
		}
		h := preset.Host{Getenv: os.Getenv, Workspace: canon(root)}
		h.Home, _ = os.UserHomeDir()
		h.Writable = append(h.Writable, h.Workspace)
		for _, r := range o.RW {
			h.Writable = append(h.Writable, canon(r))
		}
		for _, r := range slices.Concat(o.RO, o.ROX) {
			h.Carved = append(h.Carved, canon(r))
		}
		if o.Home != "" && o.Home != HomeWorkspace {
			h.Writable = append(h.Writable, canon(o.Home))
		}
		if cache, err := os.UserCacheDir(); err == nil {
			h.Writable = append(h.Writable, canon(filepath.Join(cache, "landjail")))
		}
		// Private TMPDIRs and --user HOMEs: $TMPDIR/landjail-*.
		h.Writable = append(h.Writable, privateTmps(os.TempDir())...)
		if !o.NoSystem {
			for _, r := range landlock.SystemRules(true) {
				if r.Access == landlock.RightsReadExec {
					h.SystemExec = append(h.SystemExec, canon(r.Path))
				}
			}
		}
		names, _ := preset.Expand(o.Preset, h.Workspace) // validated by Load
		for _, n := range names {
			if p, err := preset.Find(n, h); err == nil {
				o.presets.list = append(o.presets.list, p)
			}
		}
	}
	return o.presets.list
}

// presetRules are the Landlock rules of the presets' roots, labelled
// "preset:NAME" (--print-rules, the report).
func (o *Options) presetRules() []landlock.Rule {
	var rules []landlock.Rule
	for _, p := range o.Presets() {
		for _, r := range p.Roots {
			a := landlock.RightsRead
			if r.Access == preset.ReadExec {
				a = landlock.RightsReadExec
			}
			rules = append(rules, landlock.Rule{Path: r.Path, Access: a, Source: "preset:" + p.Name})
		}
	}
	return rules
}

// PresetRoots returns jail options allowing the presets' directories,
// as SystemRoots does for the system preset: resolve, and the file tools
// of landjail-mcp, answer with what the command may read.
func (o *Options) PresetRoots() []jail.Option {
	var opts []jail.Option
	for _, p := range o.Presets() {
		for _, r := range p.Roots {
			if fi, err := os.Stat(r.Path); err != nil || !fi.IsDir() {
				continue
			}
			mode := jail.ReadOnly
			if r.Access == preset.ReadExec {
				mode = jail.ReadExec
			}
			opts = append(opts, jail.WithAllowed(r.Path, mode))
		}
	}
	return opts
}

// PresetEnv returns the presets' variables for a command whose HOME is
// home (caches and configuration there: preset.Preset.Env), in --preset
// order; --env entries are meant to follow them and win.
func (o *Options) PresetEnv(home string) []string {
	var env []string
	for _, p := range o.Presets() {
		env = preset.Apply(env, p.Env(home))
	}
	return env
}

// PresetProxyEnv returns env with the variables the presets' clients
// read for the --allow-domain proxy at addr (npm_config_proxy, PIP_PROXY,
// CARGO_HTTP_PROXY, JAVA_TOOL_OPTIONS' -Dhttps.proxyHost, ...) set, as
// the usual proxy variables are: they replace any passed with --env
// (JAVA_TOOL_OPTIONS is appended to). env unchanged without presets.
func (o *Options) PresetProxyEnv(env []string, addr string) []string {
	for _, p := range o.Presets() {
		env = preset.Apply(env, p.ProxyEnv(addr))
	}
	return env
}

// PresetRegistries returns, per preset in order, the registries it
// downloads from that --allow-domain does not list (an exact entry or
// a wildcard above it), for the hints of --print-rules and --explain.
func (o *Options) PresetRegistries() map[string][]string {
	out := map[string][]string{}
	for _, p := range o.Presets() {
		for _, r := range p.Registries {
			if !allowListed(o.AllowDomain, r) {
				out[p.Name] = append(out[p.Name], r)
			}
		}
	}
	return out
}

// allowListed reports whether the --allow-domain list lets a request to
// host on port 443 through (allowlist.Match, as the proxy decides).
func allowListed(allow []string, host string) bool {
	rules, err := allowlist.ParseAllow(allow)
	if err != nil {
		return false
	}
	t, err := allowlist.ParseTarget(host, 443)
	if err != nil {
		return false
	}
	ok, _ := allowlist.Match(rules, t)
	return ok
}

// privateTmps lists the directories named landjail-* in tmp (private
// TMPDIRs and --user HOMEs a command may write), each a real directory:
// an entry that is a symbolic link is none of them (landjail never uses
// one), and followed it made what it named untrusted for every preset:
// any local user's /tmp/landjail-x -> /etc hid the JDK's configuration
// from --preset java (found in round 30, after the reviewers' squatting
// tests).
func privateTmps(tmp string) []string {
	m, err := filepath.Glob(filepath.Join(tmp, "landjail-*"))
	if err != nil {
		return nil
	}
	if c, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = c
	}
	var out []string
	for _, p := range m {
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			out = append(out, filepath.Join(tmp, filepath.Base(p)))
		}
	}
	return out
}
