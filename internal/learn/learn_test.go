package learn

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/netproxy"
	"github.com/landjail/landjail/jail"
)

// A case file in testdata/cases holds sections "-- NAME --":
//
//	tree      entries made under a fresh directory $T: "d/" a directory,
//	          "f" a file, "a => b" a symbolic link (each may be a Go
//	          quoted string)
//	have      the config file before the merge ($T replaced)
//	refusals  one a line: RIGHT "PATH" [bydesign|unlearnable "WHY"], RIGHT
//	          read, read-dir, exec, write or create; or proxy "HOST" PORT
//	          "REASON" (through FromProxy)
//	want      the config file after the merge ($T replaced); the section
//	          "want-error" instead: Update must fail with ErrNotMergeable
//	loads     the entries the output must load as, through cliopts'
//	          config loader: "ro PATH" ... (Go quoted), in order
//	home      the user's HOME during the merge, relative to $T (HOME is
//	          set to it; without the section HOME is $T/.nohome, missing)
//	path      PATH during the merge ($T replaced; without the section
//	          PATH is the test's own)
type testCase struct {
	name     string
	sections map[string]string
}

func loadCases(t *testing.T) []testCase {
	files, err := filepath.Glob("testdata/cases/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var cs []testCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		c := testCase{name: strings.TrimSuffix(filepath.Base(f), ".txt"), sections: map[string]string{}}
		cur := ""
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if s := strings.TrimSpace(line); strings.HasPrefix(s, "-- ") && strings.HasSuffix(s, " --") {
				cur = strings.TrimSuffix(strings.TrimPrefix(s, "-- "), " --")
				c.sections[cur] = ""
				continue
			}
			if cur != "" {
				c.sections[cur] += line
			}
		}
		cs = append(cs, c)
	}
	return cs
}

func unq(t *testing.T, s string) string {
	t.Helper()
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		require.NoError(t, err, s)
		return u
	}
	return s
}

// fields splits a line into words and Go quoted strings.
func fields(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' {
			q, err := strconv.QuotedPrefix(line)
			require.NoError(t, err, line)
			out = append(out, unq(t, q))
			line = line[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(line, " ")
		out = append(out, w)
		line = rest
	}
	return out
}

func buildTree(t *testing.T, root, spec string) {
	for _, line := range strings.Split(spec, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := fields(t, line)
		p := filepath.Join(root, f[0])
		switch {
		case len(f) == 3 && f[1] == "=>":
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(strings.ReplaceAll(f[2], "$T", root), p))
		case strings.HasSuffix(f[0], "/"):
			require.NoError(t, os.MkdirAll(p, 0o755))
		default:
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
		}
	}
}

func parseRefusals(t *testing.T, root, spec string) []Refusal {
	var out []Refusal
	rights := map[string]Right{"read": Read, "read-dir": Read, "exec": Exec, "write": Write, "create": Create}
	for _, line := range strings.Split(spec, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := fields(t, strings.ReplaceAll(line, "$T", root))
		if f[0] == "proxy" {
			port, err := strconv.Atoi(f[2])
			require.NoError(t, err)
			out = append(out, FromProxy(f[1], uint16(port), f[3]))
			continue
		}
		r, ok := rights[f[0]]
		require.True(t, ok, line)
		ref := Refusal{Path: f[1], Right: r, Dir: f[0] == "read-dir"}
		if len(f) == 4 {
			switch f[2] {
			case "bydesign":
				ref.ByDesign = f[3]
			case "unlearnable":
				ref.NotLearnable = f[3]
			default:
				t.Fatalf("bad refusal line %q", line)
			}
		}
		out = append(out, ref)
	}
	return out
}

// TestCases runs every case of testdata/cases: the merge is the expected
// text, loads through cliopts.ReadConfig as the listed grants, and is a
// fixed point (a second merge of the same refusals changes nothing).
func TestCases(t *testing.T) {
	for _, c := range loadCases(t) {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			buildTree(t, root, c.sections["tree"])
			home := ".nohome"
			if h, ok := c.sections["home"]; ok {
				home = strings.TrimSpace(h)
			}
			t.Setenv("HOME", filepath.Join(root, home))
			if p, ok := c.sections["path"]; ok {
				t.Setenv("PATH", strings.ReplaceAll(strings.TrimSpace(p), "$T", root))
			}
			have := strings.ReplaceAll(c.sections["have"], "$T", root)
			refs := parseRefusals(t, root, c.sections["refusals"])
			out, _, err := Update([]byte(have), root, refs)
			if _, ok := c.sections["want-error"]; ok {
				assert.ErrorIs(t, err, ErrNotMergeable)
				return
			}
			require.NoError(t, err)
			want := strings.ReplaceAll(c.sections["want"], "$T", root)
			assert.Equal(t, want, string(out))

			again, p, err := Update(out, root, refs)
			require.NoError(t, err)
			assert.Equal(t, string(out), string(again), "a second merge changed the file")
			assert.Empty(t, p.Add, "a second merge added entries")

			cfg := filepath.Join(root, "learned.toml")
			require.NoError(t, os.WriteFile(cfg, out, 0o644))
			o, err := cliopts.ReadConfig(cfg)
			require.NoError(t, err, "the output must load as a plain --config")
			var got []string
			for _, kv := range []struct {
				k string
				v []string
			}{{"ro", o.RO}, {"rox", o.ROX}, {"rw", o.RW}, {"allow_domain", o.AllowDomain}} {
				for _, v := range kv.v {
					got = append(got, kv.k+" "+strconv.Quote(strings.ReplaceAll(v, root, "$T")))
				}
			}
			var wantLoads []string
			for _, l := range strings.Split(c.sections["loads"], "\n") {
				if l = strings.TrimSpace(l); l != "" {
					wantLoads = append(wantLoads, l)
				}
			}
			assert.Equal(t, wantLoads, got)
		})
	}
}

// TestProxyReasonsMatchNetproxy keeps FromProxy's copies of the proxy's
// reasons equal to internal/netproxy's (not linked into landjail).
func TestProxyReasonsMatchNetproxy(t *testing.T) {
	assert.Equal(t, netproxy.ReasonNotListed, proxyNotListed)
	assert.Equal(t, netproxy.ReasonPort, proxyPort)
	assert.Equal(t, netproxy.ReasonSpecial, proxySpecial)
	assert.Equal(t, netproxy.ReasonLocal, proxyLocal)
	assert.Equal(t, netproxy.ReasonBelowSuffix, proxyBelowSuffix)
}

// TestQuoteRoundTrip: every string Quote writes decodes to itself, and no
// line of it is anything but the one string.
func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"", `a"b`, `a\b`, "a\nb", "a\r\n]]\n[x]\nrw = [\"/\"]", "\x00\x01\x1f\x7f", "é漢字", "#", "''' \"\"\""} {
		text := "ro = [" + Quote(s) + "]\n"
		assert.Equal(t, 1, strings.Count(text, "\n"), "%q", s)
		var g Grants
		g, err := ReadGrants([]byte(text), "/")
		require.NoError(t, err, text)
		if s == "" {
			assert.Equal(t, []string{"/"}, g[KeyRO]) // joined to dir: relative
			continue
		}
		want := s
		if !filepath.IsAbs(s) {
			want = filepath.Join("/", s)
		}
		assert.Equal(t, []string{want}, g[KeyRO], "%q", s)
	}
}

// TestFileWriteKeepsDirectory: Write goes to the directory opened before
// the run, even if the path was swapped for another directory since;
// ErrMoved says so. The control: a path not swapped gets the file, no
// error.
func TestFileWriteKeepsDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "conf")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.toml"), []byte("ro = []\n"), 0o600))

	f, err := Open(filepath.Join(dir, "f.toml"))
	require.NoError(t, err)
	assert.Equal(t, "ro = []\n", string(f.Text()))
	require.NoError(t, f.Write([]byte("a\n")))
	b, err := os.ReadFile(filepath.Join(dir, "f.toml"))
	require.NoError(t, err)
	assert.Equal(t, "a\n", string(b))
	fi, err := os.Stat(filepath.Join(dir, "f.toml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the old file's mode is kept")
	// The attack: the directory is moved and another put in its place.
	require.NoError(t, os.Rename(dir, dir+".old"))
	require.NoError(t, os.Mkdir(dir, 0o755))
	err = f.Write([]byte("b\n"))
	assert.ErrorIs(t, err, ErrMoved)
	b, err = os.ReadFile(filepath.Join(dir+".old", "f.toml"))
	require.NoError(t, err)
	assert.Equal(t, "b\n", string(b))
	_, err = os.Stat(filepath.Join(dir, "f.toml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, f.Close())
	ents, _ := os.ReadDir(dir + ".old")
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	assert.Equal(t, []string{"f.toml"}, names, "no temporary file left")
}

// TestFileOpenRefusesSymlink: a --learn FILE that is a symbolic link is
// refused (the rename would replace the link, and reading would follow
// it); a missing file is a new, empty one.
func TestFileOpenRefusesSymlink(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "real"), []byte("x"), 0o644))
	require.NoError(t, os.Symlink("real", filepath.Join(root, "link")))
	_, err := Open(filepath.Join(root, "link"))
	var pe *os.PathError
	assert.True(t, errors.As(err, &pe))
	assert.ErrorIs(t, err, os.ErrInvalid)
	f, err := Open(filepath.Join(root, "new.toml"))
	require.NoError(t, err)
	assert.Nil(t, f.Text())
	f.Close()
}

// TestScanner: the scanner finds the same keys TOML does in files with
// every kind of string and comment in and around arrays.
func TestScanner(t *testing.T) {
	f, err := os.Open("testdata/scanner.toml")
	require.NoError(t, err)
	defer f.Close()
	b, err := os.ReadFile("testdata/scanner.toml")
	require.NoError(t, err)
	st, err := scanTop(b)
	require.NoError(t, err)
	var keys []string
	for k := range st {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, ok := strings.CutPrefix(sc.Text(), "#key "); ok {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	assert.Equal(t, want, keys)
	assert.Equal(t, byte(']'), b[st["ro"].close])
}

// TestMergeCRLFNoFinalNewline: a file with CRLF line endings and no
// newline at its end: the merge still decodes to the old entries plus the
// new ones, and every old byte is still there, in order.
func TestMergeCRLFNoFinalNewline(t *testing.T) {
	old := "# mine\r\nro = [\"/a\"]\r\nrw = []"
	p := Plan{Add: []Entry{{KeyRO, "/b", "learned: read refused"}, {KeyRW, "/c", "learned: create refused"}, {KeyROX, "/d", "learned: execute refused"}},
		Comments: []string{`refused by design: "/e" (x)`}}
	out, err := Merge([]byte(old), p)
	require.NoError(t, err)
	g, err := ReadGrants(out, "/")
	require.NoError(t, err, "%s", out)
	assert.Equal(t, Grants{KeyRO: {"/a", "/b"}, KeyRW: {"/c"}, KeyROX: {"/d"}}, g)
	// Every old byte, in order (a subsequence of the output).
	i := 0
	for j := 0; j < len(out) && i < len(old); j++ {
		if out[j] == old[i] {
			i++
		}
	}
	assert.Equal(t, len(old), i, "old bytes lost:\n%s", out)
	again, err := Merge(out, Plan{Comments: p.Comments})
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again), "the comment is not repeated")
}

// TestDevicesNotLearned (red team round 20, R20b-1): a refused read,
// write or exec of a device shared with the host (another terminal, the
// console, the kernel's log, a loop device) is listed as refused by
// design, never learned; controls: /dev/null and /dev/tty are learned as
// any file. Red before: ro /dev/kmsg, /dev/console learned.
func TestDevicesNotLearned(t *testing.T) {
	for _, p := range []string{"/dev/kmsg", "/dev/console", "/dev/tty1", "/dev/loop0", "/dev/ptmx"} {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		for _, r := range []Right{Read, Write, Exec} {
			key, path, line := decidePath(Refusal{Path: p, Right: r})
			assert.Empty(t, key, "%s %s", p, r)
			assert.Empty(t, path)
			assert.Contains(t, line, byDesignPrefix, "%s %s", p, r)
		}
	}
	for _, p := range []string{"/dev/null", "/dev/tty"} {
		key, path, _ := decidePath(Refusal{Path: p, Right: Read})
		assert.Equal(t, KeyRO, key, p)
		assert.Equal(t, p, path)
	}
}

// TestPrivateDirsNotLearned (red team round 26, R26c-5): a refused
// write or create in landjail's own private directories (the cache that
// holds every workspace's private HOME, a $TMPDIR/landjail-* directory)
// is refused by design, never learned; control: the same refusal in
// another directory of the cache is learned.
func TestPrivateDirsNotLearned(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, d := range []string{filepath.Join(cache, "landjail"), filepath.Join(cache, "landjail", "home"), filepath.Join(tmp, "landjail-0-0123456789ab")} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "f"), nil, 0o600))
		for _, r := range []Refusal{{Path: filepath.Join(d, "x"), Right: Create}, {Path: filepath.Join(d, "f"), Right: Write}} {
			key, path, line := decidePath(r)
			assert.Empty(t, key, "%v", r)
			assert.Empty(t, path, "%v", r)
			assert.Contains(t, line, byDesignPrefix, "%v", r)
		}
	}
	other := filepath.Join(cache, "other")
	require.NoError(t, os.MkdirAll(other, 0o700))
	key, path, _ := decidePath(Refusal{Path: filepath.Join(other, "x"), Right: Create})
	assert.Equal(t, KeyRW, key, "control")
	assert.Equal(t, other, path)
}

// TestSystemSecretsNotLearned (red team round 31, R31b-1): a refused
// read of the system's credential stores (/etc/shadow and its family,
// sudo's rules, an SSH host key) is refused by design, never learned: a
// root command reads them once granted. Control: /etc/passwd is learned.
func TestSystemSecretsNotLearned(t *testing.T) {
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	n := 0
	for _, p := range append([]string{"/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/sudoers", "/etc/security/opasswd"}, keys...) {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		n++
		key, path, line := decidePath(Refusal{Path: p, Right: Read})
		assert.Empty(t, key, p)
		assert.Empty(t, path, p)
		assert.Contains(t, line, byDesignPrefix, p)
	}
	require.NotZero(t, n, "no credential store on this machine to try")
	key, path, _ := decidePath(Refusal{Path: "/etc/passwd", Right: Read})
	assert.Equal(t, KeyRO, key, "control")
	assert.Equal(t, "/etc/passwd", path)
}

// TestSystemPrivateFileNotLearned: red team round 32, R32c-10. A file
// under /etc that others may not read (WireGuard's keys, MySQL's
// debian.cnf: keys without a PEM header, passwords) was learned ro for a
// refused read, and a root command read it next run. Such a file is
// refused by design, whether or not SystemSecretPaths names it. Control:
// a world-readable file under /etc is learnable.
func TestSystemPrivateFileNotLearned(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (a file under /etc)")
	}
	dir, err := os.MkdirTemp("/etc", "landjail-learn-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	private, public := filepath.Join(dir, "wg0.conf"), filepath.Join(dir, "public.conf")
	require.NoError(t, os.WriteFile(private, []byte("PrivateKey = x\n"), 0o600))
	require.NoError(t, os.WriteFile(public, []byte("x\n"), 0o644))
	p := Decide([]Refusal{{Path: private, Right: Read}, {Path: public, Right: Read}}, nil)
	var added []string
	for _, e := range p.Add {
		added = append(added, e.Value)
	}
	assert.Equal(t, []string{public}, added, "only the world-readable file")
	assert.Contains(t, strings.Join(p.Comments, "\n"), "a system file others may not read")
	assert.True(t, jail.IsSystemSecret("/etc/wireguard/wg0.conf"), "and named")
}
