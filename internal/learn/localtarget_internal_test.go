package learn

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFromProxyLocalTargets: a host the proxy refused as not listed is
// not learned when it is loopback, private, link-local, unspecified,
// "localhost" or this host's own address: listed exactly, the proxy
// would reach it (red team round 27, R27a-1). A name is not resolved
// (red team round 30, R30b-4: the lookup carried what the command
// encoded in the name out of the sandbox): it is learnable, as
// "public:NAME:PORT", which keeps the proxy's rebinding defence
// (TestLearnedNameKeepsDefence). Control: a public address is learned
// as it is.
func TestFromProxyLocalTargets(t *testing.T) {
	was := hostAddrs
	t.Cleanup(func() { hostAddrs = was })
	hostAddrs = func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("1.1.1.1")} }
	for _, tc := range []struct {
		host      string
		byDesign  bool
		learnable bool
	}{
		{"localhost", true, false},
		{"LOCALHOST.", true, false},
		{"app.localhost", true, false},
		{"127.0.0.1", true, false},
		{"0.0.0.0", true, false},
		{"[::]", true, false},
		{"::1", true, false},
		{"169.254.169.254", true, false},
		{"10.1.2.3", true, false},
		{"::ffff:127.0.0.1", true, false},
		{"rebind.example", false, true}, // a name: public:, never resolved here
		{"1.1.1.1", true, false},        // this host's
		{"64:ff9b::101:101", true, false},
		{"nx.example", false, true},
		{"registry.example", false, true},
		{"93.184.216.34", false, true},
	} {
		for _, reason := range []string{proxyNotListed, proxyPort} {
			r := FromProxy(tc.host, 80, reason)
			assert.Equal(t, tc.byDesign, r.ByDesign != "", "%s %s: %+v", tc.host, reason, r)
			assert.Equal(t, tc.learnable, r.ByDesign == "" && r.NotLearnable == "", "%s %s: %+v", tc.host, reason, r)
		}
	}
	entry, line := decideProxy(FromProxy("registry.example", 443, proxyNotListed), Grants{})
	assert.Equal(t, "public:registry.example:443", entry, line)
	entry, line = decideProxy(FromProxy("93.184.216.34", 443, proxyNotListed), Grants{})
	assert.Equal(t, "93.184.216.34:443", entry, line)
	entry, _ = decideProxy(FromProxy("registry.example", 443, proxyNotListed), Grants{KeyAllowDomain: {"public:registry.example"}})
	assert.Empty(t, entry, "already allowed")
}

// TestDecidePathAbovePrivateDirs: a grant of a directory that holds
// landjail's private directories ($TMPDIR, which holds every
// workspace's landjail-* TMPDIR; the cache directory above
// $XDG_CACHE_HOME/landjail) is refused by design, for every right (red
// team round 27, R27a-2: rw of $TMPDIR learned, and the next run read
// another workspace's private TMPDIR). Control: a directory beside them.
func TestDecidePathAbovePrivateDirs(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"tmp/landjail-0-abc", "cache/landjail/home", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(base, d), 0o700))
	}
	t.Setenv("TMPDIR", filepath.Join(base, "tmp"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	for _, right := range []Right{Read, Write, Create} {
		for _, p := range []string{"tmp", "cache", base} {
			path := filepath.Join(base, p)
			if p == base {
				path = base
			}
			if right == Create {
				path = filepath.Join(path, "new") // Create grants the directory
			}
			key, _, line := decidePath(Refusal{Path: path, Right: right})
			assert.Empty(t, key, "%s %v", p, right)
			assert.Contains(t, line, "holds landjail's own private directories", "%s %v", p, right)
		}
	}
	key, _, line := decidePath(Refusal{Path: filepath.Join(base, "other", "new"), Right: Create})
	assert.NotEmpty(t, key, "control: a create beside them is learned: %s", line)
}

// TestExecRulesOtherHomes: another user's home directory, a directory
// above it (/home) and its start-up files are refused by design, as the
// caller's are (red team round 27, R27f-1: root's --user 1000 --learn
// learned rw of /home and /home/USER/.bashrc). Controls: an ordinary
// directory of that home, and one beside the homes.
func TestExecRulesOtherHomes(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	home := filepath.Join(base, "home", "cloudsdk")
	for _, d := range []string{home + "/src", base + "/srv/out"} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	require.NoError(t, os.WriteFile(home+"/.bashrc", []byte("# rc\n"), 0o644))
	passwd := filepath.Join(base, "passwd")
	require.NoError(t, os.WriteFile(passwd, []byte("root:x:0:0:root:/:/bin/sh\ncloudsdk:x:1000:1000::"+home+":/bin/bash\nghost:x:1001:1001::"+base+"/gone:/bin/sh\n"), 0o644))
	assert.Equal(t, []string{home}, passwdHomes(passwd))

	e := newExecRules()
	defer e.close()
	e.homes = passwdHomes(passwd)
	assert.NotEmpty(t, e.why(filepath.Join(base, "home"), true), "/home")
	assert.NotEmpty(t, e.why(home, true), "the home itself")
	assert.NotEmpty(t, e.why(home+"/.bashrc", false), "a start-up file")
	assert.Empty(t, e.why(home+"/src", true), "control: a directory of the home")
	assert.Empty(t, e.why(base+"/srv/out", true), "control: beside the homes")
}
