package allowlist

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAllowRejects(t *testing.T) {
	for _, e := range []string{
		"", " ", "*.com", "a.*.example.com", "*", "exa mple.com", "example.com:0",
		"example.com:70000", "example.com:http", "under_score.com", "127.1",
		"2130706433", "0x7f.1", "fe80::1%eth0", "a..b", ".", "*.",
		"*.test",
		// found by FuzzParseAllow: an invalid UTF-8 byte (idna made it
		// U+FFFD, "xn--zn7c") and a leading empty label
		"\x8e", ".A", "*..com",
		// public: is for a host name (R30b-4)
		"public:192.0.2.7", "public:*.example.com", "public:public:a.example",
	} {
		_, err := ParseAllow([]string{e})
		assert.ErrorIs(t, err, ErrBadAllowEntry, "entry %q", e)
	}
}

func TestParseAllowForms(t *testing.T) {
	for _, tc := range []struct {
		entry string
		want  Rule
	}{
		{"Registry.NPMjs.org.", Rule{Name: "registry.npmjs.org", Ports: portsDefault}},
		{"registry.npmjs.org:8443", Rule{Name: "registry.npmjs.org", Ports: []uint16{8443}}},
		{"registry.npmjs.org:*", Rule{Name: "registry.npmjs.org"}},
		{"*.Example.com", Rule{Name: "example.com", Wildcard: true, Ports: portsDefault}},
		{"*.example.co.uk", Rule{Name: "example.co.uk", Wildcard: true, Ports: portsDefault}},
		{"*.cdn.test", Rule{Name: "cdn.test", Wildcard: true, Ports: portsDefault}},
		{"github.io", Rule{Name: "github.io", Ports: portsDefault}}, // exact: one site
		{"*.user.github.io", Rule{Name: "user.github.io", Wildcard: true, Ports: portsDefault}},
		{"bücher.example", Rule{Name: "xn--bcher-kva.example", Ports: portsDefault}},
		{"192.0.2.7", Rule{IP: netip.MustParseAddr("192.0.2.7"), Ports: portsDefault}},
		{"[2001:db8::1]:22", Rule{IP: netip.MustParseAddr("2001:db8::1"), Ports: []uint16{22}}},
		{"2001:db8::1", Rule{IP: netip.MustParseAddr("2001:db8::1"), Ports: portsDefault}},
		{"::ffff:192.0.2.7", Rule{IP: netip.MustParseAddr("192.0.2.7"), Ports: portsDefault}},
		{"public:Files.example:443", Rule{Name: "files.example", Ports: []uint16{443}, Public: true}},
		{"public:files.example", Rule{Name: "files.example", Ports: portsDefault, Public: true}},
		{"public:443", Rule{Name: "public", Ports: []uint16{443}}}, // the host "public"
		{"public:*", Rule{Name: "public"}},
	} {
		rules, err := ParseAllow([]string{tc.entry})
		require.NoError(t, err, tc.entry)
		assert.Equal(t, tc.want, rules[0], tc.entry)
		again, err := ParseAllow([]string{rules[0].String()})
		if assert.NoError(t, err, "%s: String %q", tc.entry, rules[0].String()) && len(tc.want.Ports) < 2 {
			assert.Equal(t, tc.want, again[0], "%s: String %q parses back", tc.entry, rules[0].String())
		}
	}
	// LiftsDefence: an exact name or address does, a public: name or a
	// wildcard does not.
	rules, err := ParseAllow([]string{"exact.example", "public:learned.example", "*.cdn.example", "192.0.2.7"})
	require.NoError(t, err)
	for host, want := range map[string]bool{"exact.example": true, "learned.example": false, "a.cdn.example": false, "192.0.2.7": true} {
		tg, err := ParseTarget(host, 443)
		require.NoError(t, err)
		ok, exact := Match(rules, tg)
		assert.True(t, ok, host)
		assert.Equal(t, host != "a.cdn.example", exact, host)
		assert.Equal(t, want, LiftsDefence(rules, tg), host)
	}
}

func TestMatch(t *testing.T) {
	rules, err := ParseAllow([]string{
		"registry.npmjs.org", "*.usercontent.example", "git.example:9418",
		"any.example:*", "192.0.2.7", "[2001:db8::1]:8080",
	})
	require.NoError(t, err)
	for _, tc := range []struct {
		hostPort       string
		allowed, exact bool
	}{
		{"registry.npmjs.org:443", true, true},
		{"REGISTRY.npmjs.org.:80", true, true},
		{"registry.npmjs.org:22", false, false},       // bare name: 80/443 only
		{"evil-registry.npmjs.org:443", false, false}, // not a wildcard
		{"registry.npmjs.org.evil.com:443", false, false},
		{"npmjs.org:443", false, false},
		{"raw.usercontent.example:443", true, false},
		{"a.b.usercontent.example:443", true, false}, // any depth
		{"usercontent.example:443", false, false},    // wildcard excludes the apex
		{"xusercontent.example:443", false, false},
		{"git.example:9418", true, true},
		{"git.example:443", false, false}, // an explicit port replaces 80/443
		{"any.example:22", true, true},
		{"192.0.2.7:443", true, true},
		{"[::ffff:192.0.2.7]:443", true, true}, // mapped form of a listed IP
		{"192.0.2.8:443", false, false},
		{"[2001:db8::1]:8080", true, true},
		{"[2001:db8::1]:443", false, false},
		{"xn--bcher-kva.example:443", false, false},
	} {
		tg, err := ParseTarget(tc.hostPort, 0)
		require.NoError(t, err, tc.hostPort)
		allowed, exact := Match(rules, tg)
		assert.Equal(t, tc.allowed, allowed, "allowed %s", tc.hostPort)
		assert.Equal(t, tc.exact, exact, "exact %s", tc.hostPort)
	}
}

func TestMatchIDNA(t *testing.T) {
	rules, err := ParseAllow([]string{"bücher.example"})
	require.NoError(t, err)
	for _, hp := range []string{"xn--bcher-kva.example:443", "BÜCHER.example:443", "bücher.example.:443"} {
		tg, err := ParseTarget(hp, 0)
		require.NoError(t, err, hp)
		ok, _ := Match(rules, tg)
		assert.True(t, ok, hp)
	}
}

func TestParseTargetRefuses(t *testing.T) {
	for _, hp := range []string{
		"", ":443", "host:0", "host:99999", "ho st:443", "127.1:80", "2130706433:80",
		"[fe80::1%25eth0]:80", "a..b:80", "a\x00b:80",
		".a:80", "\x8e:80",
	} {
		_, err := ParseTarget(hp, 80)
		assert.ErrorIs(t, err, ErrRefused, "%q", hp)
	}
}

func TestIsSpecial(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		special bool
	}{
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"0.0.0.0", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true},
		{"192.168.1.1", true}, {"169.254.169.254", true}, {"100.64.0.1", true},
		{"224.0.0.1", true}, {"255.255.255.255", true}, {"240.0.0.1", true},
		{"198.18.0.1", true}, {"192.0.0.170", true},
		{"168.63.129.16", true}, {"::ffff:168.63.129.16", true}, {"64:ff9b::a83f:8110", true}, // Azure WireServer
		{"2002:a83f:8110::1", true}, {"192.0.0.192", true}, {"100.100.100.200", true}, {"fd20:ce::254", true},
		{"fd00:ec2::254", true}, {"169.254.170.2", true}, {"169.254.0.23", true},
		{"::", true}, {"::1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:10.0.0.1", true},
		{"::ffff:0:7f00:1", true}, {"::ffff:0:101:101", true}, // IPv4-translated
		{"::127.0.0.1", true}, {"fe80::1", true}, {"fc00::1", true}, {"fd12:3456::1", true},
		{"ff02::1", true}, {"fec0::1", true}, {"2001:db8::1", true}, {"2001:0:4136:e378::1", true},
		{"64:ff9b::7f00:1", true}, {"64:ff9b::a00:1", true}, {"64:ff9b:1::1", true},
		{"2002:7f00:1::1", true}, {"2002:c0a8:101::1", true}, {"100::1", true},
		{"fe80::1%eth0", true},
		// public
		{"1.1.1.1", false}, {"104.16.0.1", false}, {"172.32.0.1", false}, {"100.128.0.1", false},
		{"::ffff:1.1.1.1", false}, {"2606:4700::1111", false}, {"64:ff9b::101:101", false},
		{"2002:101:101::1", false}, {"168.63.129.17", false}, {"168.63.129.15", false},
	} {
		assert.Equal(t, tc.special, IsSpecial(netip.MustParseAddr(tc.addr)), tc.addr)
	}
}

func TestEnv(t *testing.T) {
	assert.Equal(t, []string{
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=http://127.0.0.1:3128", "all_proxy=http://127.0.0.1:3128",
		"NO_PROXY=", "no_proxy=",
	}, Env("127.0.0.1:3128"))
}
