package netproxy

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// dnsQuery packs a query for name and type with ID 0x4242 and RD set.
func dnsQuery(t testing.TB, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x4242, RecursionDesired: true})
	require.NoError(t, b.StartQuestions())
	require.NoError(t, b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}))
	out, err := b.Finish()
	require.NoError(t, err)
	return out
}

// dnsAnswer parses a response: its header and its A addresses.
func dnsAnswer(t testing.TB, resp []byte) (dnsmessage.Header, []netip.Addr) {
	t.Helper()
	var m dnsmessage.Message
	require.NoError(t, m.Unpack(resp))
	var addrs []netip.Addr
	for _, a := range m.Answers {
		if r, ok := a.Body.(*dnsmessage.AResource); ok {
			addrs = append(addrs, netip.AddrFrom4(r.A))
		}
	}
	return m.Header, addrs
}

func TestAnswerDNS(t *testing.T) {
	p, err := New(Config{Allow: []string{"example.test", "git.example.test:22", "*.pkg.example.com", "192.0.2.7"}})
	require.NoError(t, err)
	defer p.Close()

	cases := []struct {
		name   string
		typ    dnsmessage.Type
		rcode  dnsmessage.RCode
		answer bool // one A record in the synthetic range
		reason string
	}{
		{"example.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, ""},
		{"EXAMPLE.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, ""},
		{"example.test.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, false, ""},
		{"example.test.", dnsmessage.TypeMX, dnsmessage.RCodeSuccess, false, ""},
		{"git.example.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, ""},
		{"a.b.pkg.example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, true, ""},
		{"db.localhost.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, false, ""},
		// The controls: names no entry matches.
		{"evil.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonDNSNotListed},
		{"pkg.example.com.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonDNSNotListed},
		{"sub.example.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonDNSNotListed},
		{"7.2.0.192.in-addr.arpa.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonDNSNotListed},
		{"192.0.2.7.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonBadHost},
		{"under_score.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, false, ReasonBadHost},
	}
	for _, c := range cases {
		t.Run(c.name+c.typ.String(), func(t *testing.T) {
			before := countReason(p, c.reason)
			h, addrs := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, c.name, c.typ)))
			assert.Equal(t, uint16(0x4242), h.ID)
			assert.True(t, h.Response && h.RecursionDesired && h.Authoritative)
			assert.Equal(t, c.rcode, h.RCode)
			if c.answer {
				require.Len(t, addrs, 1)
				assert.True(t, allowlist.SyntheticPrefix.Contains(addrs[0]), addrs[0])
			} else {
				assert.Empty(t, addrs)
			}
			if c.reason != "" {
				assert.Equal(t, before+1, countReason(p, c.reason), "refusal counted")
			}
		})
	}

	h, lo := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "localhost.", dnsmessage.TypeA)))
	assert.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.1")}, lo, "%v", h)
	for _, r := range p.Refused() {
		assert.NotContains(t, r.Host, "localhost", "localhost is not a refusal")
	}
	// Listed, localhost gets a synthetic address like any name.
	pl, err := New(Config{Allow: []string{"localhost:8080"}})
	require.NoError(t, err)
	defer pl.Close()
	_, lo = dnsAnswer(t, pl.AnswerDNS(dnsQuery(t, "localhost.", dnsmessage.TypeA)))
	require.Len(t, lo, 1)
	assert.True(t, allowlist.SyntheticPrefix.Contains(lo[0]))

	// Stable and distinct per name, case-insensitive, and mapped back.
	_, a1 := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "example.test.", dnsmessage.TypeA)))
	_, a2 := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "Example.Test.", dnsmessage.TypeA)))
	_, a3 := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "git.example.test.", dnsmessage.TypeA)))
	assert.Equal(t, a1, a2)
	assert.NotEqual(t, a1, a3)
	n, ok := p.syn.name(a1[0])
	assert.True(t, ok)
	assert.Equal(t, "example.test", n)
	_, ok = p.syn.name(netip.MustParseAddr("198.18.200.1"))
	assert.False(t, ok, "an address never handed out maps to no name")
}

func TestAnswerDNSMalformed(t *testing.T) {
	p, err := New(Config{Allow: []string{"example.test"}})
	require.NoError(t, err)
	defer p.Close()
	assert.Nil(t, p.AnswerDNS(nil))
	assert.Nil(t, p.AnswerDNS([]byte{1, 2, 3}))

	// A response is ignored (no reflection loops).
	q := dnsQuery(t, "example.test.", dnsmessage.TypeA)
	resp := p.AnswerDNS(q)
	require.NotNil(t, resp)
	assert.Nil(t, p.AnswerDNS(resp))

	// Two questions: FORMERR; an opcode other than QUERY: NOTIMP.
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7})
	require.NoError(t, b.StartQuestions())
	for range 2 {
		require.NoError(t, b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("example.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}))
	}
	two, err := b.Finish()
	require.NoError(t, err)
	h, addrs := dnsAnswer(t, p.AnswerDNS(two))
	assert.Equal(t, dnsmessage.RCodeFormatError, h.RCode)
	assert.Empty(t, addrs)

	upd := append([]byte(nil), q...)
	upd[2] |= 5 << 3 // opcode UPDATE
	h, addrs = dnsAnswer(t, p.AnswerDNS(upd))
	assert.Equal(t, dnsmessage.RCodeNotImplemented, h.RCode)
	assert.Empty(t, addrs)

	// Class CH (version.bind-style probes): REFUSED.
	b = dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 8})
	require.NoError(t, b.StartQuestions())
	require.NoError(t, b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName("example.test."), Type: dnsmessage.TypeA, Class: dnsmessage.ClassCHAOS}))
	ch, err := b.Finish()
	require.NoError(t, err)
	h, addrs = dnsAnswer(t, p.AnswerDNS(ch))
	assert.Equal(t, dnsmessage.RCodeRefused, h.RCode)
	assert.Empty(t, addrs)
}

// TestSyntheticTableFull: past maxSynthetic names, SERVFAIL and counted;
// names that have an address keep it.
func TestSyntheticTableFull(t *testing.T) {
	p, err := New(Config{Allow: []string{"*.example.com"}})
	require.NoError(t, err)
	defer p.Close()
	_, first := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "first.example.com.", dnsmessage.TypeA)))
	require.Len(t, first, 1)
	p.syn.mu.Lock()
	for i := len(p.syn.byName); i < maxSynthetic; i++ {
		p.syn.byName["filler"+strconv.Itoa(i)] = netip.Addr{}
	}
	p.syn.mu.Unlock()
	h, addrs := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "second.example.com.", dnsmessage.TypeA)))
	assert.Equal(t, dnsmessage.RCodeServerFailure, h.RCode)
	assert.Empty(t, addrs)
	assert.Equal(t, 1, countReason(p, ReasonTableFull))
	_, again := dnsAnswer(t, p.AnswerDNS(dnsQuery(t, "first.example.com.", dnsmessage.TypeA)))
	assert.Equal(t, first, again)
}

func countReason(p *Proxy, reason string) int {
	n := 0
	for _, r := range p.Refused() {
		if r.Reason == reason {
			n += r.Count
		}
	}
	return n
}

// FuzzAnswerDNS: on any input the responder does not panic, answers with
// a message that parses, and never gives an address to a name the
// allowlist does not list.
func FuzzAnswerDNS(f *testing.F) {
	p, err := New(Config{Allow: []string{"example.test", "*.pkg.example.com"}})
	if err != nil {
		f.Fatal(err)
	}
	defer p.Close()
	for _, n := range []string{"example.test.", "evil.test.", "a.pkg.example.com.", "pkg.example.com."} {
		for _, typ := range []dnsmessage.Type{dnsmessage.TypeA, dnsmessage.TypeAAAA} {
			f.Add(dnsQuery(f, n, typ))
		}
	}
	f.Add([]byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1}) // pointer loop
	f.Fuzz(func(t *testing.T, query []byte) {
		resp := p.AnswerDNS(query)
		if resp == nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(resp); err != nil {
			t.Fatalf("answer does not parse: %v", err)
		}
		for _, a := range m.Answers {
			r, ok := a.Body.(*dnsmessage.AResource)
			if !ok {
				t.Fatalf("unexpected answer type %v", a.Header.Type)
			}
			name := a.Header.Name.String()
			tgt, err := allowlist.ParseTarget(name[:len(name)-1], 53)
			if err != nil {
				t.Fatalf("address for unparseable name %q", name)
			}
			if listed, _ := allowlist.ListsName(p.rules, tgt.Name); !listed {
				t.Fatalf("address for unlisted name %q", name)
			}
			if !allowlist.SyntheticPrefix.Contains(netip.AddrFrom4(r.A)) {
				t.Fatalf("address %v outside the synthetic range", r.A)
			}
		}
	})
}

// BenchmarkAnswerDNS: one A query for a listed name (address assigned
// already), parse to packed answer.
func BenchmarkAnswerDNS(b *testing.B) {
	p, err := New(Config{Allow: []string{"example.test"}})
	require.NoError(b, err)
	defer p.Close()
	q := dnsQuery(b, "example.test.", dnsmessage.TypeA)
	for b.Loop() {
		if p.AnswerDNS(q) == nil {
			b.Fatal("no answer")
		}
	}
}
