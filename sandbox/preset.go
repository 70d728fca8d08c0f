package sandbox

import (
	"strings"

	"github.com/landjail/landjail/exec"
)

// presetEnv is the command's environment with the --preset variables
// (caches and configuration in the command's HOME, the toolchain roots
// found: cliopts.Options.PresetEnv) put before pass, the HOME, --git-identity
// and --env entries: what the caller passes wins. env is
// exec.DefaultEnv(p.WS, pass), returned unchanged without presets.
func (p *Plan) presetEnv(env, pass []string) []string {
	if len(p.Options.Preset) == 0 {
		return env
	}
	home := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	add := p.Options.PresetEnv(home)
	if len(add) == 0 {
		return env
	}
	return exec.DefaultEnv(p.WS, append(add, pass...))
}

// wirePresetProxy sets, after the --allow-domain proxy's own variables,
// the ones the presets' clients read (npm_config_proxy, PIP_PROXY,
// CARGO_HTTP_PROXY, JAVA_TOOL_OPTIONS, ...) on c.
func (p *Plan) wirePresetProxy(c *exec.Cmd, addr string) {
	c.Env = p.Options.PresetProxyEnv(c.Env, addr)
}
