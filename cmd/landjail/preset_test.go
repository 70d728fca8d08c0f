package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/preset"
)

// withEnv returns the test's environment with each NAME=VALUE of set
// replacing the variable of that name.
func withEnv(set ...string) []string {
	env := os.Environ()
	for _, kv := range set {
		name, _, _ := strings.Cut(kv, "=")
		out := env[:0:0]
		for _, e := range env {
			if n, _, _ := strings.Cut(e, "="); n != name {
				out = append(out, e)
			}
		}
		env = append(out, kv)
	}
	return env
}

// TestPresetPyenvShim: a pyenv-like toolchain under a temporary HOME (a
// shim script in ~/.pyenv/shims that execs a "python" in
// ~/.pyenv/versions) fails without --preset python (control: HOME is not
// granted, the shim is denied) and runs with it; credentials next to it
// (~/.pypirc, ~/.ssh) stay unreadable with the preset, and --print-rules
// labels the grant.
func TestPresetPyenvShim(t *testing.T) {
	t.Parallel()
	bin := landjailBin(t)
	home, ws, chome := wsDir(t), wsDir(t), wsDir(t)
	root := filepath.Join(home, ".pyenv")
	for name, body := range map[string]string{
		"shims/python3":               "#!/bin/sh\nexec \"$PYENV_ROOT/versions/3.12.0/bin/python3\" \"$@\"\n",
		"versions/3.12.0/bin/python3": "#!/bin/sh\necho fake-python-ok \"$@\"\n",
	} {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	writeTree(t, home, map[string]string{".pypirc": "password = SECRET-PYPI\n", ".ssh/id_ed25519": "SECRET-KEY\n"})
	env := withEnv("HOME="+home, "PATH="+filepath.Join(root, "shims")+":/usr/bin:/bin", "PYENV_ROOT=")
	base := []string{"run", "--workspace", ws, "--home", chome}

	code, out := runBin(t, bin, env, append(base, "--", "python3", "-V")...)
	if noLandlock() {
		// The path check refuses a command outside the policy (126).
		assert.NotZero(t, code, "control: the shim ran without --preset under the path check\n%s", out)
	} else {
		// 126 permission denied (Landlock), or 127 not found: the
		// namespace layer's /tmp, where the test's HOME is, is private.
		assert.Contains(t, []int{126, 127}, code, "control: the shim in HOME ran without --preset\n%s", out)
		assert.Regexp(t, "permission denied|no such file", out)
	}

	code, out = runBin(t, bin, env, append(base, "--preset", "python", "--", "python3", "-V")...)
	require.Zero(t, code, "with --preset python: %s", out)
	assert.Contains(t, out, "fake-python-ok -V")

	if !noLandlock() {
		code, out = runBin(t, bin, env, append(base, "--preset", "python", "--", "sh", "-c",
			"cat "+filepath.Join(home, ".pypirc")+"; cat "+filepath.Join(home, ".ssh/id_ed25519"))...)
		assert.NotZero(t, code)
		assert.Regexp(t, refusedOrHidden, out)
		assert.NotContains(t, out, "SECRET")
	}

	code, out = runBin(t, bin, env, append(base, "--preset", "python", "--print-rules")...)
	require.Zero(t, code, out)
	assert.Contains(t, out, "preset:python "+root+" {execute,read_file,read_dir}")
	assert.Contains(t, out, "PYENV_ROOT="+root)
	assert.Contains(t, out, "registries, not allowed")
}

// TestPresetGoBuild: `go build` of a module that imports a third-party
// module (BurntSushi/toml, from the caller's module cache) with --preset
// go alone: no network, no --rox/--ro/--env. The module comes from the
// caller's download cache (read-only, the first GOPROXY) into a module
// cache in the private HOME, the build cache lands there too, nothing
// lands in the workspace but the binary, and go warns about no read-only
// cache. Control: the README's former flags (GOCACHE in the workspace)
// leave .cache/ in the workspace, so the absence below is the preset's
// doing.
func TestPresetGoBuild(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles a module from a cold build cache; skipped with -short")
	}
	if _, err := osexec.LookPath("go"); err != nil {
		kerneltest.Missing(t, "go is not installed")
	}
	bin := landjailBin(t)
	sum, err := os.ReadFile(filepath.Join(pkgDir, "..", "..", "go.sum"))
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "github.com/BurntSushi/toml v1.6.0") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2, "go.sum of landjail lists BurntSushi/toml v1.6.0")
	modcache := goEnv(t, "GOMODCACHE")
	if _, err := os.Stat(filepath.Join(modcache, "cache/download/github.com/!burnt!sushi/toml/@v/v1.6.0.zip")); err != nil {
		t.Skipf("BurntSushi/toml v1.6.0 is not in the module download cache: %v", err)
	}
	tiny := map[string]string{
		"go.mod": "module example.com/tiny\n\ngo 1.22\n\nrequire github.com/BurntSushi/toml v1.6.0\n",
		"go.sum": strings.Join(lines, "\n") + "\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/BurntSushi/toml\"\n)\n\n" +
			"func main() {\n\tvar v struct{ A int }\n\t_, err := toml.Decode(\"A = 7\", &v)\n\tfmt.Println(\"tiny-toml\", v.A, err)\n}\n",
	}
	ws, home := wsDir(t), wsDir(t)
	writeTree(t, ws, tiny)
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--home", home, "--preset", "go", "--",
		"sh", "-c", "go build -o bin/tiny . && ./bin/tiny")
	require.Zero(t, code, "go build with --preset go: %s", out)
	assert.Contains(t, out, "tiny-toml 7 <nil>")
	assert.NotContains(t, out, "stat cache")
	assert.NotContains(t, out, "read-only file system")
	ents, err := os.ReadDir(ws)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{"bin", "go.mod", "go.sum", "main.go"}, names, "only the binary was added to the workspace")
	assert.DirExists(t, filepath.Join(home, ".cache", "go-build"), "GOCACHE in the private HOME")
	assert.DirExists(t, filepath.Join(home, "go", "pkg", "mod", "github.com", "!burnt!sushi", "toml@v1.6.0"), "the module extracted into the private HOME's module cache")

	// Control: the former quick start's flags put the build cache in the
	// workspace.
	ws2 := wsDir(t)
	writeTree(t, ws2, tiny)
	goroot := goEnv(t, "GOROOT")
	code, out = runBin(t, bin, nil, "run", "--workspace", ws2, "--home", wsDir(t), "--rox", goroot, "--ro", modcache,
		"--env", "GOMODCACHE="+modcache, "--env", "GOCACHE="+filepath.Join(ws2, ".cache", "go-build"), "--env", "GOPROXY=off",
		"--", "go", "build", "-o", "bin/tiny", ".")
	require.Zero(t, code, "control build: %s", out)
	assert.DirExists(t, filepath.Join(ws2, ".cache"), "control: the former flags leave .cache/ in the workspace")
}

// TestPresetJavaProxy: Java's URLConnection ignores HTTP(S)_PROXY; with
// --preset java and --allow-domain, JAVA_TOOL_OPTIONS carries the proxy as
// system properties and a request to a listed address (this host's
// non-loopback IPv4: the JVM sends loopback names around any proxy)
// reaches the server through landjail's proxy. Control: the same run
// without the preset (the JDK's /etc directories granted with --ro, so
// the JVM starts) connects directly, which the network mode stops, and
// the server sees nothing.
func TestPresetJavaProxy(t *testing.T) {
	if _, err := osexec.LookPath("java"); err != nil {
		t.Skip("no java in PATH")
	}
	hip := hostIP()
	if hip == "" {
		t.Skip("no non-loopback IPv4 address on this host")
	}
	useNetproxy(t)
	if mode := wantProxyMode(t, false); mode != cliopts.NetworkAirtight && mode != cliopts.NetworkAdvisory {
		t.Skipf("the proxy is %s here: no client reaches anything", mode)
	}
	l, err := net.Listen("tcp4", hip+":0")
	require.NoError(t, err)
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	target := l.Addr().String()

	ws := wsDir(t)
	writeTree(t, ws, map[string]string{"Fetch.java": `import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;

public class Fetch {
    public static void main(String[] a) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URI(a[0]).toURL().openConnection();
        c.setConnectTimeout(5000);
        c.setReadTimeout(5000);
        try (InputStream in = c.getInputStream()) {
            System.out.println("java-got " + new String(in.readAllBytes()));
        }
    }
}
`})
	base := []string{"run", "--workspace", ws, "--home", wsDir(t), "--timeout", "2m", "--allow-domain", target}
	code, stdout, stderr := runCLI(t, append(base, "--preset", "java", "--", "java", "Fetch.java", "http://"+target+"/java")...)
	require.Zero(t, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, "java-got hello /java")
	assert.Contains(t, stderr, "-Dhttps.proxyHost=127.0.0.1", "the JVM says what it picked up")
	assert.Equal(t, int32(1), hits.Load())

	// Control: no preset; the JDK's configuration granted by hand.
	p, err := preset.Find("java", preset.Host{Getenv: os.Getenv, Home: os.Getenv("HOME")})
	require.NoError(t, err)
	ctl := append([]string(nil), base...)
	for _, r := range p.Roots {
		ctl = append(ctl, "--"+r.Access.String(), r.Path)
	}
	code, stdout, stderr = runCLI(t, append(ctl, "--", "java", "Fetch.java", "http://"+target+"/control")...)
	assert.NotZero(t, code, "control: java reached the server without the proxy properties\nstdout: %s\nstderr: %s", stdout, stderr)
	assert.NotContains(t, stderr, "Error loading java.security", "control: the JVM did not start")
	assert.Equal(t, int32(1), hits.Load(), "control: the server saw a direct request")
}

// TestPresetAutoAndHints: --preset auto takes go and node from the
// workspace's go.mod and package.json (not python: its marker is in a
// subdirectory); --print-rules names each preset's registries that
// --allow-domain does not list, and --explain does after a failed
// command.
func TestPresetAutoAndHints(t *testing.T) {
	ws := wsDir(t)
	writeTree(t, ws, map[string]string{"go.mod": "module x\n", "package.json": "{}", "sub/pyproject.toml": ""})
	code, stdout, stderr := runCLI(t, "run", "--workspace", ws, "--preset", "auto", "--print-rules")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, "# preset go:")
	assert.Contains(t, stdout, "# preset node:")
	assert.NotContains(t, stdout, "# preset python:")
	assert.Regexp(t, `(?m)^#   registries, not allowed .*: registry\.npmjs\.org$`, stdout)
	assert.Contains(t, stdout, "proxy.golang.org")

	code, stdout, stderr = runCLI(t, "run", "--workspace", ws, "--preset", "auto", "--allow-domain", "registry.npmjs.org", "--print-rules")
	require.Zero(t, code, stderr)
	assert.NotRegexp(t, `registries, not allowed .*registry\.npmjs\.org`, stdout, "a listed registry is still named")

	code, _, stderr = runCLI(t, "run", "--workspace", ws, "--home", wsDir(t), "--preset", "node", "--explain", "--timeout", "1m", "--", "sh", "-c", "exit 3")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "preset node downloads from registry.npmjs.org, not allowed: if it tried, add --allow-domain registry.npmjs.org")
}

// TestPresetRustCargo: a real rustup install under HOME (cargo in
// ~/.cargo/bin is a rustup proxy that reads ~/.rustup) builds a crate
// with --preset rust alone; CARGO_HOME is the private HOME's, and
// ~/.cargo itself (credentials.toml's directory) stays unreadable.
// Control: without the preset the proxy in HOME is not even executable.
func TestPresetRustCargo(t *testing.T) {
	t.Parallel()
	cargo, err := osexec.LookPath("cargo")
	if err != nil {
		t.Skip("no cargo in PATH")
	}
	home, _ := os.UserHomeDir()
	if real, err := filepath.EvalSymlinks(cargo); err != nil || home == "" || !strings.HasPrefix(real, home+"/") {
		t.Skipf("cargo (%s) is not a rustup install under HOME", cargo)
	}
	bin := landjailBin(t)
	ws, chome := wsDir(t), wsDir(t)
	writeTree(t, ws, map[string]string{
		"Cargo.toml":  "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
		"src/main.rs": "fn main() { println!(\"cargo-preset-ok\"); }\n",
		// A script file, not sh -c: the path-check fallback (no
		// Landlock) refuses a -c script with variables as unverifiable.
		"build.sh": "cargo build --offline -q && ./target/debug/tiny && echo \"CARGO_HOME=$CARGO_HOME\"\n",
	})
	base := []string{"run", "--workspace", ws, "--home", chome}
	code, out := runBin(t, bin, nil, append(base, "--", "cargo", "--version")...)
	if noLandlock() {
		assert.NotZero(t, code, "control: cargo in HOME ran without --preset under the path check\n%s", out)
	} else {
		assert.Equal(t, 126, code, "control: cargo in HOME ran without --preset\n%s", out)
	}
	code, out = runBin(t, bin, nil, append(base, "--preset", "rust", "--", "sh", "build.sh")...)
	require.Zero(t, code, "cargo build with --preset rust: %s", out)
	assert.Contains(t, out, "cargo-preset-ok")
	assert.Contains(t, out, "CARGO_HOME="+filepath.Join(chome, ".cargo"))
	if !noLandlock() {
		code, out = runBin(t, bin, nil, append(base, "--preset", "rust", "--", "ls", filepath.Join(home, ".cargo"))...)
		assert.NotZero(t, code, "~/.cargo is listable: %s", out)
	}
}
