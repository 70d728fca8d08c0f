package preset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type findCase struct {
	Name       string
	Preset     string
	Tree       []string
	Path       []string
	Env        []string
	Writable   *[]string
	Roots      []string
	Never      []string
	EnvHas     []string `toml:"env_has"`
	EnvNever   []string `toml:"env_never"`
	Registries *[]string
	NotesHas   []string `toml:"notes_has"`
	Chdir      string
	Workspace  string
	Carved     []string
}

// buildTree makes spec below dir: "d/" a directory, "f=text" a file,
// "a => target" a symbolic link, "x f=text" an executable file (sub
// substitutes the placeholders).
func buildTree(t *testing.T, dir string, spec []string, sub func(string) string) {
	t.Helper()
	for _, line := range spec {
		mode := os.FileMode(0o644)
		if rest, ok := strings.CutPrefix(line, "x "); ok {
			line, mode = rest, 0o755
		}
		if name, target, ok := strings.Cut(line, " => "); ok {
			p := filepath.Join(dir, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(sub(target), p))
			continue
		}
		if strings.HasSuffix(line, "/") {
			require.NoError(t, os.MkdirAll(filepath.Join(dir, line), 0o755))
			continue
		}
		name, text, _ := strings.Cut(line, "=")
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(sub(strings.ReplaceAll(text, `\n`, "\n"))), mode))
	}
}

// TestFindTable runs testdata/presets.toml: fake HOME and PATH trees
// (pyenv shims, nvm versions, rustup, SDKMAN!, a GOROOT, attacks through
// the workspace), asserting the exact roots, that credentials beside a
// toolchain are in none of them, the environment and the registries.
// The "control" case is the workspace attack with the workspace not
// writable: the same tree is then granted, so the attack case fails
// without the writable-root check.
func TestFindTable(t *testing.T) {
	var file struct{ Case []findCase }
	_, err := toml.DecodeFile("testdata/presets.toml", &file)
	require.NoError(t, err)
	require.NotEmpty(t, file.Case)
	for _, c := range file.Case {
		t.Run(c.Name, func(t *testing.T) {
			tmp, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			home, ws, chome := filepath.Join(tmp, "home"), filepath.Join(tmp, "ws"), filepath.Join(tmp, "chome")
			sub := strings.NewReplacer("$HOME", home, "$WS", ws, "$OPT", filepath.Join(tmp, "opt"), "$CHOME", chome, "$T", tmp).Replace
			if c.Workspace != "" {
				ws = sub(c.Workspace)
			}
			for _, d := range []string{home, ws} {
				require.NoError(t, os.MkdirAll(d, 0o755))
			}
			buildTree(t, tmp, c.Tree, sub)
			if c.Chdir != "" {
				t.Chdir(sub(c.Chdir))
			}
			env := map[string]string{"PATH": strings.Join(mapStrings(c.Path, sub), ":")}
			for _, kv := range c.Env {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = sub(v)
			}
			writable := []string{ws}
			if c.Writable != nil {
				writable = mapStrings(*c.Writable, sub)
			}
			h := Host{Getenv: func(k string) string { return env[k] }, Home: home, Workspace: ws, Writable: writable, SystemExec: []string{"/usr", "/bin"}, Carved: mapStrings(c.Carved, sub)}
			p, err := Find(c.Preset, h)
			require.NoError(t, err)
			var got []string
			for _, r := range p.Roots {
				got = append(got, r.Access.String()+" "+r.Path)
			}
			assert.Equal(t, mapStrings(c.Roots, sub), nonNil(got), "roots (notes: %v)", p.Notes)
			for _, n := range c.Never {
				n = sub(n)
				for _, r := range p.Roots {
					assert.False(t, inside(n, r.Path), "%s is granted through %s", n, r.Path)
				}
			}
			penv := p.Env(chome)
			for _, kv := range c.EnvHas {
				assert.Contains(t, penv, sub(kv))
			}
			for _, n := range c.EnvNever {
				for _, kv := range penv {
					assert.NotContains(t, kv, n, "the command's environment")
				}
			}
			if c.Registries != nil {
				assert.Equal(t, *c.Registries, nonNil(p.Registries))
			}
			for _, n := range c.NotesHas {
				assert.True(t, slices.ContainsFunc(p.Notes, func(s string) bool { return strings.Contains(s, n) }), "no note with %q in %q", n, p.Notes)
			}
		})
	}
}

func mapStrings(v []string, f func(string) string) []string {
	out := make([]string, 0, len(v))
	for _, s := range v {
		out = append(out, f(s))
	}
	return out
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// TestAutoAndExpand: markers at the top of the workspace choose the
// presets; unknown names are ErrUnknown; duplicates collapse.
func TestAutoAndExpand(t *testing.T) {
	ws := t.TempDir()
	assert.Empty(t, AutoNames(ws))
	for _, f := range []string{"go.mod", "Cargo.toml", "pyproject.toml"} {
		require.NoError(t, os.WriteFile(filepath.Join(ws, f), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "sub", "package.json"), nil, 0o644)) // not at the top
	assert.Equal(t, []string{"go", "python", "rust"}, AutoNames(ws))
	got, err := Expand([]string{"rust", Auto, "go"}, ws)
	require.NoError(t, err)
	assert.Equal(t, []string{"rust", "go", "python"}, got)
	_, err = Expand([]string{"ruby"}, ws)
	assert.ErrorIs(t, err, ErrUnknown)
	_, err = Find("ruby", Host{})
	assert.ErrorIs(t, err, ErrUnknown)
}

// TestProxyEnvAndApply: each preset's proxy variables for an address, and
// Apply replacing entries but appending to JAVA_TOOL_OPTIONS.
func TestProxyEnvAndApply(t *testing.T) {
	h := Host{Getenv: func(string) string { return "" }}
	want := map[string][]string{
		"go":     nil,
		"node":   {"npm_config_proxy=http://127.0.0.1:3128", "npm_config_https_proxy=http://127.0.0.1:3128", "YARN_HTTP_PROXY=http://127.0.0.1:3128", "YARN_HTTPS_PROXY=http://127.0.0.1:3128", "NODE_USE_ENV_PROXY=1"},
		"python": {"PIP_PROXY=http://127.0.0.1:3128"},
		"rust":   {"CARGO_HTTP_PROXY=http://127.0.0.1:3128"},
		"java":   {"JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=3128 -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=3128"},
	}
	for _, n := range Names {
		p, err := Find(n, h)
		require.NoError(t, err)
		assert.Equal(t, want[n], p.ProxyEnv("127.0.0.1:3128"), n)
	}
	env := Apply([]string{"A=1", "JAVA_TOOL_OPTIONS=-Duser.home=/h", "npm_config_proxy=http://evil"}, []string{"JAVA_TOOL_OPTIONS=-Dx=y", "npm_config_proxy=http://ok", "B=2"})
	assert.Equal(t, []string{"A=1", "JAVA_TOOL_OPTIONS=-Duser.home=/h -Dx=y", "npm_config_proxy=http://ok", "B=2"}, env)
}

// BenchmarkFind measures discovery of each preset on this machine's
// environment (PATH, HOME): what --preset adds to every start.
func BenchmarkFind(b *testing.B) {
	home, _ := os.UserHomeDir()
	h := Host{Getenv: os.Getenv, Home: home, Writable: []string{b.TempDir()}, SystemExec: []string{"/usr", "/bin", "/sbin"}}
	for _, n := range Names {
		b.Run(n, func(b *testing.B) {
			for b.Loop() {
				if _, err := Find(n, h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
