// Package preset finds a language toolchain on the caller's machine and
// says what a confined command needs to use it: the toolchain's
// directories (read-execute, or read-only for its configuration), the
// environment that puts its caches and configuration in the command's
// private HOME, the proxy variables each of its clients reads, and the
// registries it downloads from (never allowed implicitly: they are named
// for --print-rules and --explain, and --allow-domain stays explicit).
//
// Presets: go, java, node, python, rust; [Auto] chooses among them from
// the workspace's marker files (go.mod, package.json, pyproject.toml,
// Cargo.toml, pom.xml, ...).
//
// Discovery executes nothing: it looks commands up in the caller's PATH,
// resolves symbolic links one component at a time, lists a JDK's and
// Maven's conf and lib directories for links into /etc, and reads two
// files (Go's go.env and the caller's go env file). A PATH entry, binary
// or link on the way inside a writable root (the workspace, --rw,
// landjail's private HOMEs and TMPDIRs) is skipped: a confined command
// could have planted it, and a symbolic link there could point a grant at
// any directory. A directory is granted only if it exists, is not "/", is
// not the caller's HOME or above it, and, below HOME, only in a layout
// this package knows (a GOROOT with src/runtime, Go's module download
// cache, a JAVA_HOME holding bin/java, pyenv's root, a virtual
// environment with pyvenv.cfg, nvm's versions/node/VERSION, asdf's data
// directory, SDKMAN!'s candidates/NAME/VERSION, rustup's home and cargo's
// bin): HOME's other contents (~/.ssh, ~/.npmrc, ~/.cargo/credentials.toml,
// ~/.config/pip/pip.conf, ~/.m2/settings.xml) are never granted. A
// toolchain found only elsewhere below HOME is named in a note and not
// granted (add --rox DIR).
//
// The package does not protect against a toolchain directory that holds
// secrets of its own (a global npmrc with a token in nvm's version
// prefix, etc/npmrc): such a directory is granted readable whole.
package preset

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Names are the presets, sorted.
var Names = []string{"go", "java", "node", "python", "rust"}

// Auto is the preset name that stands for the presets whose marker files
// are in the workspace (Markers).
const Auto = "auto"

// ErrUnknown: a preset name that is neither one of Names nor Auto.
var ErrUnknown = errors.New("unknown preset")

// Access is what a Root grants.
type Access uint8

const (
	// Read: read files and list directories.
	Read Access = iota + 1
	// ReadExec: Read, and execute files.
	ReadExec
)

func (a Access) String() string {
	switch a {
	case Read:
		return "ro"
	case ReadExec:
		return "rox"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Root is one path a preset grants: an existing directory (or, for a
// single configuration file, a file), absolute and free of symbolic
// links.
type Root struct {
	Path   string
	Access Access
	// Why says what it is ("GOROOT", "pyenv root", ...).
	Why string
}

// Preset is one preset as found on this machine.
type Preset struct {
	// Name is one of Names.
	Name string
	// Roots are the directories (and files) granted, in a fixed order,
	// without duplicates and without those the system preset already
	// grants read-execute (/usr, /bin, /sbin, /lib*).
	Roots []Root
	// Registries are the host names the toolchain downloads from
	// (proxy.golang.org, registry.npmjs.org, ...): not allowed by the
	// preset, named so that a user can pass --allow-domain.
	Registries []string
	// Notes say what was found but not granted, and why.
	Notes []string

	env      func(home string) []string
	proxyEnv func(proxyURL, host, port string) []string
}

// Env returns the variables (NAME=VALUE) that put the toolchain's caches
// and configuration in home, the command's HOME, and point it at the
// roots found (GOPROXY, RUSTUP_HOME, PYENV_ROOT, JAVA_HOME, ...).
func (p *Preset) Env(home string) []string {
	if p.env == nil {
		return nil
	}
	return p.env(home)
}

// ProxyEnv returns the variables the toolchain's clients read for an
// HTTP proxy at addr ("127.0.0.1:PORT"), beyond HTTP_PROXY, HTTPS_PROXY
// and ALL_PROXY: npm_config_proxy, PIP_PROXY, CARGO_HTTP_PROXY,
// JAVA_TOOL_OPTIONS system properties, .... Nil for a toolchain whose
// clients read the usual variables.
func (p *Preset) ProxyEnv(addr string) []string {
	if p.proxyEnv == nil {
		return nil
	}
	host, port, ok := strings.Cut(addr, ":")
	if !ok {
		return nil
	}
	return p.proxyEnv("http://"+addr, host, port)
}

// Host is what discovery reads about the caller.
type Host struct {
	// Getenv is the caller's environment (os.Getenv).
	Getenv func(string) string
	// Home is the caller's HOME ("" or "/" for none): toolchains below it
	// are granted only in known layouts, and it is never granted itself.
	Home string
	// Workspace is the workspace root, canonical (markers for Auto).
	Workspace string
	// Writable are the roots a confined command can write (workspace,
	// --rw, landjail's private HOME and TMPDIR parents), canonical:
	// nothing found inside them is trusted or granted.
	Writable []string
	// SystemExec are the directories the system preset grants
	// read-execute (/usr, /bin, ...): roots inside them are not repeated.
	SystemExec []string
	// Carved are the policy's other roots (--ro, --rox), canonical: the
	// deny patterns are carved out of them, and a grant holding one would
	// void the carving (Landlock's rules add up).
	Carved []string
}

// Markers maps each preset to the workspace files that select it for
// Auto (top level only).
var Markers = map[string][]string{
	"go":     {"go.mod", "go.work"},
	"java":   {"pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"},
	"node":   {"package.json"},
	"python": {"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile"},
	"rust":   {"Cargo.toml"},
}

// AutoNames returns the presets whose marker files exist at the top of
// workspace (Lstat: a symbolic link counts), sorted. The workspace is the
// command's to write: a run with Auto lets it choose among the presets,
// each of which grants toolchain directories only.
func AutoNames(workspace string) []string {
	var out []string
	for _, n := range Names {
		for _, m := range Markers[n] {
			if _, err := os.Lstat(filepath.Join(workspace, m)); err == nil {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// Expand returns names with Auto replaced by AutoNames(workspace),
// without duplicates, in the order given. Errors: ErrUnknown, naming the
// preset.
func Expand(names []string, workspace string) ([]string, error) {
	var out []string
	for _, n := range names {
		add := []string{n}
		switch {
		case n == Auto:
			add = AutoNames(workspace)
		case !slices.Contains(Names, n):
			return nil, fmt.Errorf("%w %q (want %s or %s)", ErrUnknown, n, strings.Join(Names, ", "), Auto)
		}
		for _, a := range add {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// Find discovers the preset name (one of Names) on h. It executes
// nothing. Errors: ErrUnknown.
func Find(name string, h Host) (*Preset, error) {
	if h.Getenv == nil {
		h.Getenv = func(string) string { return "" }
	}
	f := &finder{h: h, p: &Preset{Name: name}}
	switch name {
	case "go":
		f.golang()
	case "java":
		f.java()
	case "node":
		f.node()
	case "python":
		f.python()
	case "rust":
		f.rust()
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	return f.p, nil
}

// finder holds one discovery.
type finder struct {
	h Host
	p *Preset

	canons map[string]string // canon's answers (a PATH is walked once per command name)
	mgrs   []manager         // managers, once
}

// inside reports whether p is dir or below it (whole components).
func inside(p, dir string) bool {
	if dir == "" {
		return false
	}
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// home is the caller's HOME, canonical, "" for none.
func (f *finder) home() string {
	h := f.h.Home
	if h == "" || h == "/" || !filepath.IsAbs(h) {
		return ""
	}
	if c, err := filepath.EvalSymlinks(h); err == nil {
		return c
	}
	return filepath.Clean(h)
}

// untrusted reports whether p (canonical) lies in a writable root.
func (f *finder) untrusted(p string) bool {
	for _, w := range f.h.Writable {
		if inside(p, w) {
			return true
		}
	}
	return false
}

// maxSymlinks bounds the links canon follows (the kernel's MAXSYMLINKS).
const maxSymlinks = 40

// canon returns p with symbolic links resolved, or "" when it does not
// exist, is relative, or it or any path on the way to it (a link, the
// directory a link points into) lies in a writable root: equivalent to
// filepath.EvalSymlinks plus a check of the result, but a link a command
// planted in the workspace cannot point a grant elsewhere, and a link
// elsewhere cannot pass through the workspace.
func (f *finder) canon(p string) string {
	if c, ok := f.canons[p]; ok {
		return c
	}
	c := f.resolve(p)
	if f.canons == nil {
		f.canons = map[string]string{}
	}
	f.canons[p] = c
	return c
}

// resolve is canon without the cache.
func (f *finder) resolve(p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return ""
	}
	cur, rest := "/", strings.Split(filepath.Clean(p), "/")[1:]
	for hops := 0; len(rest) > 0; {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		if f.untrusted(next) {
			return ""
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return ""
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > maxSymlinks {
			return ""
		}
		t, err := os.Readlink(next)
		if err != nil {
			return ""
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		rest = append(strings.Split(t, "/"), rest...)
	}
	if f.untrusted(cur) {
		return ""
	}
	return cur
}

// lookPath finds name in the caller's PATH as a confined command would
// (the first executable regular file), skipping relative entries and
// entries in a writable root. It returns the path found (as PATH names
// it) and its canonical form, or "", "".
func (f *finder) lookPath(name string) (found, real string) {
	for _, dir := range filepath.SplitList(f.h.Getenv("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		cd := f.canon(dir)
		if cd == "" {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		if r := f.canon(p); r != "" {
			return p, r
		}
	}
	return "", ""
}

// grant adds a root when path is a safe one: existing, canonical, not
// "/", not HOME or above it, not in a writable root, not holding the
// workspace, a writable root or a carved one, not already granted or
// covered by the system preset's read-execute directories. It reports
// whether the path is covered now.
func (f *finder) grant(path string, a Access, why string) bool {
	c := f.canon(path)
	if c == "" || c == "/" {
		return false
	}
	if home := f.home(); home != "" && inside(home, c) {
		f.note("%s %s is your HOME or above it: not granted", why, c)
		return false
	}
	for _, s := range f.h.SystemExec {
		if inside(c, s) {
			return true
		}
	}
	// A grant above the workspace or another root of the policy gives
	// the command the files the deny patterns keep from it there (the
	// workspace's .env under Landlock alone) and next to it (a sibling
	// project's), while resolve and the file tools refuse them (red team
	// round 25, R25b-3: python3 in the bin of a monorepo holding the
	// workspace). Asked after the system preset's directories, where
	// nothing is added (a workspace in /usr/src: node's prefix /usr).
	if held := f.holdsRoot(c); held != "" {
		f.note("%s %s holds %s, a root of the policy: not granted (add --rox for what the command needs)", why, c, held)
		return false
	}
	for i, r := range f.p.Roots {
		if inside(c, r.Path) && (r.Access == ReadExec || a == Read) {
			return true
		}
		if r.Path == c {
			f.p.Roots[i].Access = max(r.Access, a)
			return true
		}
	}
	f.p.Roots = append(f.p.Roots, Root{Path: c, Access: a, Why: why})
	return true
}

// holdsRoot returns the workspace, writable or carved root that lies
// inside c, or "".
func (f *finder) holdsRoot(c string) string {
	for _, l := range [][]string{{f.h.Workspace}, f.h.Writable, f.h.Carved} {
		for _, r := range l {
			if r != "" && inside(r, c) {
				return r
			}
		}
	}
	return ""
}

func (f *finder) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	if !slices.Contains(f.p.Notes, n) {
		f.p.Notes = append(f.p.Notes, n)
	}
}

func (f *finder) registry(hosts ...string) {
	for _, h := range hosts {
		if h != "" && !slices.Contains(f.p.Registries, h) {
			f.p.Registries = append(f.p.Registries, h)
		}
	}
}

// urlHost returns the host name of a URL ("" for none): never its user
// information, which may be a credential.
func urlHost(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return ""
	}
	return p.Hostname()
}

// managers are the version managers whose layout below HOME is known:
// the directory to grant for a binary found below root.
type manager struct {
	name string
	root string // canonical, "" when absent
	// unit returns the directory to grant for the canonical binary bin
	// below root ("" for none).
	unit func(root, bin string) string
}

// envOr is the caller's variable name, or def below HOME.
func (f *finder) envOr(name, def string) string {
	if v := f.h.Getenv(name); v != "" && filepath.IsAbs(v) {
		return v
	}
	if home := f.home(); home != "" && def != "" {
		return filepath.Join(home, def)
	}
	return ""
}

// wholeRoot grants a manager's whole directory.
func wholeRoot(root, _ string) string { return root }

// versionDir grants root/A/B/C: the first depth components below root.
func versionDir(depth int) func(root, bin string) string {
	return func(root, bin string) string {
		rel, err := filepath.Rel(root, bin)
		if err != nil {
			return ""
		}
		parts := strings.Split(rel, "/")
		if len(parts) <= depth {
			return ""
		}
		return filepath.Join(append([]string{root}, parts[:depth]...)...)
	}
}

func (f *finder) managers() []manager {
	if f.mgrs != nil {
		return f.mgrs
	}
	ms := []manager{
		{"pyenv root", f.envOr("PYENV_ROOT", ".pyenv"), wholeRoot},
		{"asdf data directory", f.envOr("ASDF_DATA_DIR", ".asdf"), wholeRoot},
		{"nvm version", filepath.Join(f.envOr("NVM_DIR", ".nvm"), "versions"), versionDir(2)},
		{"SDKMAN! candidate", filepath.Join(f.envOr("SDKMAN_DIR", ".sdkman"), "candidates"), versionDir(2)},
	}
	for i := range ms {
		if ms[i].root != "" {
			ms[i].root = f.canon(ms[i].root)
		}
	}
	f.mgrs = ms
	return ms
}

// toolchain grants what running the command name found in PATH needs:
// the version manager's directory when the binary lies in a known layout,
// else the installation prefix (the parent of its bin directory), and
// returns that directory ("" when nothing was granted).
func (f *finder) toolchain(name string) string {
	found, real := f.lookPath(name)
	if real == "" {
		return ""
	}
	for _, m := range f.managers() {
		if m.root == "" {
			continue
		}
		for _, p := range []string{found, real} {
			if c := f.canon(filepath.Dir(p)); c != "" && inside(c, m.root) {
				if d := m.unit(m.root, filepath.Join(c, filepath.Base(p))); d != "" && f.grant(d, ReadExec, m.name) {
					return d
				}
			}
		}
	}
	prefix := filepath.Dir(real)
	if filepath.Base(prefix) == "bin" {
		prefix = filepath.Dir(prefix)
	}
	if home := f.home(); home != "" && inside(prefix, home) {
		f.note("%s at %s is below your HOME in a layout landjail does not know: not granted (add --rox DIR)", name, real)
		return ""
	}
	// A repository is a project, not an installation: its bin on PATH
	// (direnv's PATH_add bin) would grant every file of it, its .env
	// among them. Only the directory of the tool then.
	if _, err := os.Lstat(filepath.Join(prefix, ".git")); err == nil && prefix != filepath.Dir(real) {
		f.note("%s at %s is in the repository %s: only %s granted", name, real, prefix, filepath.Dir(real))
		prefix = filepath.Dir(real)
	}
	if f.grant(prefix, ReadExec, name+" installation") {
		return prefix
	}
	if bin := filepath.Dir(real); prefix != bin && f.holdsRoot(f.canon(prefix)) != "" && f.grant(bin, ReadExec, name+" directory") {
		return bin
	}
	return ""
}

// etcLinks grants read-only the /etc directories of the toolchain's
// configuration that symbolic links in prefix, prefix/conf (two levels
// down), prefix/lib and prefix/lib/security point into, when the directory's name starts
// with one of names (Debian's JDK links conf/security/java.security to
// /etc/java-17-openjdk/; Maven's conf is /etc/maven).
func (f *finder) etcLinks(prefix string, names ...string) {
	visited := 0
	var scan func(dir string, depth int)
	scan = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if visited++; visited > 2000 {
				return
			}
			p := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				t, err := os.Readlink(p)
				if err != nil || !strings.HasPrefix(t, "/etc/") {
					continue
				}
				first, _, _ := strings.Cut(strings.TrimPrefix(t, "/etc/"), "/")
				for _, n := range names {
					if strings.HasPrefix(first, n) {
						f.grant(filepath.Join("/etc", first), Read, "configuration of "+filepath.Base(prefix))
					}
				}
				continue
			}
			if e.IsDir() && depth > 0 {
				scan(p, depth-1)
			}
		}
	}
	for _, d := range []struct {
		name  string
		depth int
	}{{"", 0}, {"conf", 2}, {"lib", 0}, {"lib/security", 0}} {
		scan(filepath.Join(prefix, d.name), d.depth)
	}
}

// setEnv returns env with NAME=VALUE replacing any entry of the same
// name.
func setEnv(env []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	out := slices.DeleteFunc(slices.Clone(env), func(e string) bool {
		n, _, _ := strings.Cut(e, "=")
		return n == name
	})
	return append(out, kv)
}

// readEnvFile reads a go env file (NAME=VALUE lines), nil when missing.
func readEnvFile(path string) map[string]string {
	b, err := readRegularFile(path, 1<<20)
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}

// readRegularFile reads path when it is a regular file of at most max
// bytes, opened non-blocking: a FIFO a confined run made in place of the
// go env file (a HOME the command can write) held every later start
// (red team round 26, R26e-3); anything else is an error, never a read
// that blocks.
func readRegularFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fs.ErrInvalid}
	}
	return io.ReadAll(io.LimitReader(f, max+1))
}
