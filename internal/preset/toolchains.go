package preset

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// golang: GOROOT read-execute (the caller's GOROOT variable, else the
// parent of the bin directory of the go found in PATH, symbolic links
// resolved; it must hold src/runtime), the caller's module download
// cache read-only, offered as the first GOPROXY (file://), so modules
// already downloaded need no network and the caller's cache is never
// written; GOPATH, GOMODCACHE and GOCACHE in the command's HOME.
func (f *finder) golang() {
	goroot := ""
	if v := f.h.Getenv("GOROOT"); v != "" {
		goroot = f.canon(v)
	}
	if goroot == "" {
		if _, real := f.lookPath("go"); real != "" {
			goroot = filepath.Dir(filepath.Dir(real))
		}
	}
	if goroot != "" && !isDir(filepath.Join(goroot, "src", "runtime")) {
		f.note("no GOROOT: %s has no src/runtime", goroot)
		goroot = ""
	}
	if goroot != "" {
		f.grant(goroot, ReadExec, "GOROOT")
	} else {
		f.note("go not found in PATH (outside writable roots)")
	}
	// The configuration the caller's go would read: $GOROOT/go.env,
	// then the go env file, then the environment.
	cfg := map[string]string{}
	explicit := map[string]string{}
	if goroot != "" {
		for k, v := range readEnvFile(filepath.Join(goroot, "go.env")) {
			cfg[k] = v
		}
	}
	envFile := f.h.Getenv("GOENV")
	if envFile == "" {
		base := f.h.Getenv("XDG_CONFIG_HOME")
		if base == "" && f.home() != "" {
			base = filepath.Join(f.home(), ".config")
		}
		if base != "" {
			envFile = filepath.Join(base, "go", "env")
		}
	}
	if envFile != "off" && filepath.IsAbs(envFile) {
		for k, v := range readEnvFile(envFile) {
			cfg[k], explicit[k] = v, v
		}
	}
	for _, k := range []string{"GOPROXY", "GOSUMDB", "GOMODCACHE", "GOPATH", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOINSECURE", "GOFLAGS"} {
		if v := f.h.Getenv(k); v != "" {
			cfg[k], explicit[k] = v, v
		}
	}
	// The caller's own values (the go env file, outside the policy, and
	// the environment) keep their public entries only; go.env's are
	// under GOROOT, which the command reads anyway.
	proxy := cfg["GOPROXY"]
	if v := explicit["GOPROXY"]; v != "" {
		proxy = f.publicOnly("GOPROXY", v)
	}
	if proxy == "" {
		proxy = "https://proxy.golang.org,direct"
	}
	if v, ok := explicit["GOSUMDB"]; ok {
		explicit["GOSUMDB"] = f.publicOnly("GOSUMDB", v)
		cfg["GOSUMDB"] = explicit["GOSUMDB"]
	}
	modcache := cfg["GOMODCACHE"]
	if modcache == "" {
		gopath, _, _ := strings.Cut(cfg["GOPATH"], ":")
		if gopath == "" && f.home() != "" {
			gopath = filepath.Join(f.home(), "go")
		}
		if gopath != "" {
			modcache = filepath.Join(gopath, "pkg", "mod")
		}
	}
	local := ""
	if dl := filepath.Join(modcache, "cache", "download"); modcache != "" && isDir(dl) {
		if f.grant(dl, Read, "Go module download cache (first GOPROXY, file://)") {
			local = "file://" + f.canon(dl)
		}
	}
	for _, e := range strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' }) {
		switch e {
		case "direct":
			f.note("GOPROXY lists direct: a module the proxies lack is fetched from its version control host (github.com, ...), which --allow-domain must list too")
		case "off":
		default:
			f.registry(urlHost(e))
		}
	}
	if sumdb := cfg["GOSUMDB"]; sumdb != "off" {
		if sumdb == "" {
			sumdb = "sum.golang.org"
		}
		name, u, hasURL := strings.Cut(sumdb, " ")
		if hasURL {
			f.registry(urlHost(u))
		} else {
			name, _, _ = strings.Cut(name, "+")
			f.registry(name)
		}
	}
	cmdProxy := proxy
	if local != "" {
		cmdProxy = local + "," + proxy
	}
	f.p.env = func(home string) []string {
		env := []string{
			"GOPATH=" + filepath.Join(home, "go"),
			"GOMODCACHE=" + filepath.Join(home, "go", "pkg", "mod"),
			"GOCACHE=" + filepath.Join(home, ".cache", "go-build"),
			"GOPROXY=" + cmdProxy,
			"GOFLAGS=" + strings.TrimSpace(explicit["GOFLAGS"]+" -modcacherw"),
			"GOTOOLCHAIN=local",
		}
		for _, k := range []string{"GOSUMDB", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOINSECURE"} {
			if v := explicit[k]; v != "" {
				env = append(env, k+"="+v)
			}
		}
		return env
	}
}

// publicProxies are the GOPROXY entries passed to the command as they
// are: go's keywords and public proxies, which need no credential.
var publicProxies = []string{"direct", "off", "https://proxy.golang.org", "https://goproxy.io", "https://goproxy.cn"}

// publicSumDBs are the GOSUMDB names, and URLs after one, passed as they
// are ("off", or a public checksum database's name, its public key after
// a "+" or not, and an optional URL of one).
var publicSumDBs = []string{"sum.golang.org", "sum.golang.google.cn"}

// publicOnly returns the value of the go variable name (GOPROXY's list
// of URLs separated by "," or "|", or GOSUMDB's "name[+key] [URL]") as
// the caller configured it, with only the public entries (publicProxies,
// publicSumDBs) kept, each verbatim, and a note naming the host of each
// entry left out and how to pass it. A private proxy's URL can carry its
// credential anywhere: in the user information (R25c-1), the query
// (R25d-3), the path (Cloudsmith's https://dl.cloudsmith.io/TOKEN/o/r/go/,
// red team round 26, R26a-3), a fragment, a host name. Recognising one is
// guesswork, and passing scheme and host only would leave such a proxy
// unusable and a token in a host name passed, so none of a private entry
// reaches the command unless the user passes it deliberately
// (--env GOPROXY=..., which wins over the preset's). A GOPROXY left with
// no entry becomes "off" (the module download cache alone), never the
// public default, which would be asked for private module paths; a
// GOSUMDB left out is unset (go's default, sum.golang.org).
func (f *finder) publicOnly(name, v string) string {
	if name == "GOSUMDB" {
		db, u, hasURL := strings.Cut(strings.TrimSpace(v), " ")
		base, _, _ := strings.Cut(db, "+")
		u = strings.TrimSpace(u)
		if db == "off" || slices.Contains(publicSumDBs, base) && (!hasURL || slices.ContainsFunc(publicSumDBs, func(s string) bool {
			return strings.TrimSuffix(u, "/") == "https://"+s
		})) {
			return v
		}
		host := base
		if hasURL {
			host = urlHost(u)
		}
		f.leftOut(name, host)
		return ""
	}
	var b strings.Builder
	sep := ""
	for v != "" {
		i := strings.IndexAny(v, ",|")
		e, next := v, ""
		if i >= 0 {
			e, next, v = v[:i], v[i:i+1], v[i+1:]
		} else {
			v = ""
		}
		if !slices.Contains(publicProxies, strings.TrimSuffix(strings.TrimSpace(e), "/")) {
			f.leftOut(name, urlHost(e))
			continue
		}
		b.WriteString(sep)
		b.WriteString(e)
		sep = next
	}
	if b.Len() == 0 {
		return "off"
	}
	return b.String()
}

// leftOut notes that publicOnly left out name's entry of host.
func (f *finder) leftOut(name, host string) {
	if host == "" {
		host = "an entry that does not parse as a URL"
	}
	f.note("%s: %s is not passed to the command (only public proxies and checksum databases are: a private one's URL can hold a credential); pass it deliberately with --env %s=VALUE, and list its host with --allow-domain", name, host, name)
}

// java: the JDK (the caller's JAVA_HOME when it holds bin/java, else the
// prefix of the java found in PATH) read-execute, Maven's and Gradle's
// installations, and the /etc/java*, /etc/maven, /etc/gradle
// directories their configuration links point into, read-only. The JVM
// takes user.home from the password database, not HOME, so
// JAVA_TOOL_OPTIONS sets -Duser.home (Maven's ~/.m2); Gradle gets
// GRADLE_USER_HOME.
func (f *finder) java() {
	jh := ""
	if v := f.h.Getenv("JAVA_HOME"); v != "" {
		if c := f.canon(v); c != "" && isExec(filepath.Join(c, "bin", "java")) && f.grant(c, ReadExec, "JAVA_HOME") {
			jh = c
		}
	}
	if jh == "" {
		if d := f.toolchain("java"); d != "" && isExec(filepath.Join(d, "bin", "java")) {
			jh = d
		} else if _, real := f.lookPath("java"); real != "" {
			// Covered by the system preset (/usr/lib/jvm/...).
			if d := filepath.Dir(filepath.Dir(real)); isExec(filepath.Join(d, "bin", "java")) {
				jh = d
			}
		}
	}
	if jh == "" {
		f.note("java not found (JAVA_HOME, PATH outside writable roots)")
	} else {
		f.etcLinks(jh, "java", "openjdk")
	}
	for _, name := range []string{"javac", "mvn", "gradle"} {
		d := f.toolchain(name)
		if d == "" {
			if _, real := f.lookPath(name); real != "" {
				d = filepath.Dir(filepath.Dir(real))
			}
		}
		if d != "" {
			f.etcLinks(d, "maven", "gradle")
		}
	}
	f.registry("repo.maven.apache.org", "plugins.gradle.org", "services.gradle.org", "downloads.gradle.org")
	f.p.env = func(home string) []string {
		env := []string{
			"JAVA_TOOL_OPTIONS=-Duser.home=" + home,
			"GRADLE_USER_HOME=" + filepath.Join(home, ".gradle"),
		}
		if jh != "" {
			env = append(env, "JAVA_HOME="+jh)
		}
		return env
	}
	f.p.proxyEnv = func(_, host, port string) []string {
		return []string{"JAVA_TOOL_OPTIONS=-Dhttp.proxyHost=" + host + " -Dhttp.proxyPort=" + port +
			" -Dhttps.proxyHost=" + host + " -Dhttps.proxyPort=" + port}
	}
}

// node: the prefixes of node, npm, npx, corepack, yarn and pnpm found in
// PATH (nvm's versions/node/VERSION, asdf's data directory), npm's
// cache in the command's HOME. ~/.npmrc is not read (it may hold a
// token): a registry other than npm's is passed with --env
// npm_config_registry=URL.
func (f *finder) node() {
	found := false
	for _, name := range []string{"node", "npm", "npx", "corepack", "yarn", "pnpm"} {
		if _, real := f.lookPath(name); real != "" {
			found = true
			f.toolchain(name)
		}
	}
	if !found {
		f.note("node not found in PATH (outside writable roots)")
	}
	reg := f.h.Getenv("npm_config_registry")
	if reg == "" {
		reg = f.h.Getenv("NPM_CONFIG_REGISTRY")
	}
	if h := urlHost(reg); h != "" {
		f.registry(h)
	} else {
		f.registry("registry.npmjs.org")
	}
	if _, real := f.lookPath("yarn"); real != "" {
		f.registry("registry.yarnpkg.com")
	}
	f.p.env = func(home string) []string {
		return []string{
			"npm_config_cache=" + filepath.Join(home, ".npm"),
			"npm_config_update_notifier=false",
		}
	}
	f.p.proxyEnv = func(u, _, _ string) []string {
		return []string{
			"npm_config_proxy=" + u, "npm_config_https_proxy=" + u,
			"YARN_HTTP_PROXY=" + u, "YARN_HTTPS_PROXY=" + u,
			"NODE_USE_ENV_PROXY=1",
		}
	}
}

// python: the prefixes of python3, python, pip, pip3, uv and poetry found
// in PATH (pyenv's root whole, with PYENV_ROOT set for its shims; asdf's
// data directory), a virtual environment in PATH (a directory with
// pyvenv.cfg), pip's cache in the command's HOME. pip.conf and .pypirc
// under HOME are not read.
func (f *finder) python() {
	found := false
	for _, name := range []string{"python3", "python", "pip3", "pip", "uv", "poetry"} {
		p, real := f.lookPath(name)
		if real == "" {
			continue
		}
		found = true
		if venv := filepath.Dir(filepath.Dir(p)); fileExists(filepath.Join(venv, "pyvenv.cfg")) {
			f.grant(venv, ReadExec, "virtual environment")
		}
		f.toolchain(name)
	}
	if !found {
		f.note("python not found in PATH (outside writable roots)")
	}
	pyenv := ""
	for _, m := range f.managers() {
		if m.name == "pyenv root" && m.root != "" {
			for _, r := range f.p.Roots {
				if r.Path == m.root {
					pyenv = m.root
					f.note("pip install through pyenv's shims installs, then exits 1 (\"pyenv: cannot rehash\"): %s/shims stays read-only, or a command could put code in your next shell; a virtual environment's pip works", m.root)
				}
			}
		}
	}
	if h := urlHost(f.h.Getenv("PIP_INDEX_URL")); h != "" {
		f.registry(h)
	} else {
		f.registry("pypi.org", "files.pythonhosted.org")
	}
	f.p.env = func(home string) []string {
		env := []string{
			"PIP_CACHE_DIR=" + filepath.Join(home, ".cache", "pip"),
			"PIP_DISABLE_PIP_VERSION_CHECK=1",
		}
		if pyenv != "" {
			env = append(env, "PYENV_ROOT="+pyenv)
		}
		return env
	}
	f.p.proxyEnv = func(u, _, _ string) []string { return []string{"PIP_PROXY=" + u} }
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// rust: rustup's proxies in cargo's bin directory ($CARGO_HOME/bin only:
// credentials.toml and config.toml beside it stay out) and rustup's home
// (RUSTUP_HOME, toolchains and settings) read-execute, or the prefix of a
// cargo installed elsewhere; CARGO_HOME (registry index, crates, git
// checkouts) in the command's HOME.
func (f *finder) rust() {
	cargoHome := f.canon(f.envOr("CARGO_HOME", ".cargo"))
	rustupHome := f.canon(f.envOr("RUSTUP_HOME", ".rustup"))
	rustup := ""
	found := false
	for _, name := range []string{"cargo", "rustc", "rustup"} {
		p, real := f.lookPath(name)
		if real == "" {
			continue
		}
		found = true
		if cargoHome != "" && inside(f.canon(filepath.Dir(p)), filepath.Join(cargoHome, "bin")) {
			f.grant(filepath.Join(cargoHome, "bin"), ReadExec, "cargo bin (rustup's proxies)")
			if rustupHome != "" && f.grant(rustupHome, ReadExec, "RUSTUP_HOME") {
				rustup = rustupHome
			}
			continue
		}
		f.toolchain(name)
	}
	if !found {
		f.note("cargo not found in PATH (outside writable roots)")
	}
	f.registry("index.crates.io", "static.crates.io")
	if found {
		f.note("crates are not taken from your ~/.cargo/registry (cargo locks and writes it): they come from the registries, or from a vendor directory in the workspace (cargo vendor)")
	}
	f.p.env = func(home string) []string {
		env := []string{"CARGO_HOME=" + filepath.Join(home, ".cargo")}
		if rustup != "" {
			env = append(env, "RUSTUP_HOME="+rustup)
		}
		return env
	}
	f.p.proxyEnv = func(u, _, _ string) []string { return []string{"CARGO_HTTP_PROXY=" + u} }
}

// appendVars are the variables Apply appends to instead of replacing:
// lists of options another preset or --env may also set.
var appendVars = map[string]bool{"JAVA_TOOL_OPTIONS": true}

// Apply returns env (NAME=VALUE entries) with each of add set: an entry
// of the same name is replaced, except JAVA_TOOL_OPTIONS, whose value is
// appended to (separated by a space).
func Apply(env, add []string) []string {
	out := append([]string(nil), env...)
	for _, kv := range add {
		name, val, _ := strings.Cut(kv, "=")
		if appendVars[name] {
			for _, e := range out {
				if n, old, _ := strings.Cut(e, "="); n == name && old != "" {
					kv = name + "=" + old + " " + val
				}
			}
		}
		out = setEnv(out, kv)
	}
	return out
}
