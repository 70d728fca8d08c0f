package exec

import (
	"os"
	"strings"

	"github.com/landjail/landjail/jail"
)

// defaultPath is the child's PATH when the caller has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// DefaultPassEnv are the variables DefaultEnv copies from the caller's
// environment when set (HOME is never copied: it is the workspace root).
var DefaultPassEnv = []string{"PATH", "LANG", "TERM", "TZ"}

// DefaultEnv returns the child environment built from an allowlist, never
// from os.Environ() as a whole: PATH (the caller's, or
// /usr/local/bin:/usr/bin:/bin), HOME set to the workspace root, LANG, TERM
// and TZ when the caller has them, then pass: "NAME" copies NAME from the
// caller's environment if set, "NAME=VALUE" sets it. A later entry wins
// over an earlier one with the same name, in its place, so a pass entry
// "HOME=DIR" replaces the workspace root as HOME. The result has no
// duplicate names.
func DefaultEnv(ws *jail.Workspace, pass []string) []string {
	var env []string
	set := func(kv string) {
		name, _, _ := strings.Cut(kv, "=")
		for i, e := range env {
			if n, _, _ := strings.Cut(e, "="); n == name {
				env[i] = kv
				return
			}
		}
		env = append(env, kv)
	}
	if p, ok := os.LookupEnv("PATH"); ok && p != "" {
		set("PATH=" + p)
	} else {
		set("PATH=" + defaultPath)
	}
	if ws != nil {
		set("HOME=" + ws.Root())
	}
	for _, name := range DefaultPassEnv[1:] {
		if v, ok := os.LookupEnv(name); ok {
			set(name + "=" + v)
		}
	}
	for _, p := range pass {
		if p == "" {
			continue
		}
		if strings.Contains(p, "=") {
			set(p)
			continue
		}
		if v, ok := os.LookupEnv(p); ok {
			set(p + "=" + v)
		}
	}
	return env
}

// lookupEnv returns the value of name in env (last one wins).
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}
