package netproxy

import (
	"errors"
	"net"
	"strings"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// syntheticTTL is the time to live, in seconds, of the responder's
// answers. The mapping never changes during a run, so a cache may keep
// it; a short TTL only costs queries that stay inside the namespace.
const syntheticTTL = 300

// ServeDNS answers DNS queries on pc (for landjail: a UDP socket on
// allowlist.DNSAddr inside the command's network namespace) until
// [Proxy.Close], then returns [ErrClosed]; any other error is pc's. It
// takes ownership of pc and closes it.
//
// Each query gets at most one answer, as [Proxy.AnswerDNS] builds it.
// Answers are never truncated (one A record fits in 512 bytes), so no
// DNS over TCP is served. A query the responder cannot parse far enough
// to learn its ID gets no answer.
func (p *Proxy) ServeDNS(pc net.PacketConn) error {
	if !p.track(pc) {
		pc.Close()
		return ErrClosed
	}
	defer p.untrack(pc)
	buf := make([]byte, 65535)
	for {
		// Config.CPUs: charged at each query, as a client connection's
		// reads are (R23c-4); while owed, queries wait in the socket's
		// buffer, and past it are dropped, as UDP is.
		var (
			n    int
			from net.Addr
			err  error
		)
		p.cpu.Do(func() { n, from, err = pc.ReadFrom(buf) }, time.Sleep)
		if err != nil {
			if p.isClosed() {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if resp := p.AnswerDNS(buf[:n]); resp != nil {
			// A failed send (the client's socket is gone) is the
			// client's loss; nothing to count.
			_, _ = pc.WriteTo(resp, from)
		}
	}
}

// AnswerDNS returns the response to one DNS query message (RFC 1035), or
// nil for a message to ignore (shorter than a header, or a response).
// It never panics on any input (FuzzAnswerDNS):
//
//   - one question of class IN whose name an allowlist entry matches
//     (exact or wildcard, on any port, and a wildcard only at or below
//     the name's public suffix, as for the proxy): type A gets the name's
//     synthetic address (allowlist.SyntheticPrefix, stable for the
//     proxy's life); every other type, AAAA included, an empty NOERROR
//     answer, so clients fall back to the IPv4 address;
//   - "localhost" and names under it, unless listed: 127.0.0.1 for A,
//     empty for other types (RFC 6761; the view hides /etc/hosts), not
//     counted;
//   - any other name: NXDOMAIN, counted as refused
//     ([ReasonDNSNotListed], [ReasonBelowSuffix], [ReasonBadHost]);
//   - a listed name when 65536 names have addresses already: SERVFAIL,
//     counted ([ReasonTableFull]);
//   - not exactly one question: FORMERR; an opcode other than QUERY:
//     NOTIMP; a class other than IN: REFUSED. Not counted.
//
// Answers are authoritative and copy the query's ID, RD bit and question.
func (p *Proxy) AnswerDNS(query []byte) []byte {
	var parser dnsmessage.Parser
	h, err := parser.Start(query)
	if err != nil || h.Response {
		return nil
	}
	resp := dnsmessage.Header{
		ID: h.ID, Response: true, OpCode: h.OpCode, Authoritative: true,
		RecursionDesired: h.RecursionDesired, RecursionAvailable: true,
	}
	qs, err := parser.AllQuestions()
	switch {
	case h.OpCode != 0:
		resp.RCode = dnsmessage.RCodeNotImplemented
		return build(resp, nil, nil)
	case err != nil || len(qs) != 1:
		resp.RCode = dnsmessage.RCodeFormatError
		return build(resp, nil, nil)
	}
	q := qs[0]
	if q.Class != dnsmessage.ClassINET {
		resp.RCode = dnsmessage.RCodeRefused
		return build(resp, &q, nil)
	}
	unsafeName := strings.TrimSuffix(q.Name.String(), ".")
	t, err := allowlist.ParseTarget(unsafeName, 53)
	if err != nil || t.Name == "" {
		// Not a host name (or an IP literal asked as a name).
		p.refuse(unsafeName, 0, ReasonBadHost)
		resp.RCode = dnsmessage.RCodeNameError
		return build(resp, &q, nil)
	}
	reason := p.dnsListed(t.Name)
	if reason != "" && (t.Name == "localhost" || strings.HasSuffix(t.Name, ".localhost")) {
		// RFC 6761 6.3: the loopback of the namespace the query came
		// from, where /etc/hosts cannot be read. Not a refusal.
		if q.Type != dnsmessage.TypeA {
			return build(resp, &q, nil)
		}
		return build(resp, &q, &dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
	}
	if reason != "" {
		p.refuse(t.Name, 0, reason)
		resp.RCode = dnsmessage.RCodeNameError
		return build(resp, &q, nil)
	}
	if q.Type != dnsmessage.TypeA {
		return build(resp, &q, nil)
	}
	a, ok := p.syn.assign(t.Name)
	if !ok {
		p.refuse(t.Name, 0, ReasonTableFull)
		resp.RCode = dnsmessage.RCodeServerFailure
		return build(resp, &q, nil)
	}
	return build(resp, &q, &dnsmessage.AResource{A: a.As4()})
}

// dnsListed returns "" when the canonical name may be given an address,
// or the reason it may not.
func (p *Proxy) dnsListed(name string) string {
	listed, exact := allowlist.ListsName(p.rules, name)
	if !listed {
		return ReasonDNSNotListed
	}
	if !exact {
		anyPort := make([]allowlist.Rule, len(p.rules))
		for i, r := range p.rules {
			r.Ports = nil
			anyPort[i] = r
		}
		if !wildcardOwns(anyPort, allowlist.Target{Name: name, Port: 1}) {
			return ReasonBelowSuffix
		}
	}
	return ""
}

// build packs a response with at most one question and one A answer.
// Packing what AnswerDNS parsed cannot fail; if it did, no answer goes
// out.
func build(h dnsmessage.Header, q *dnsmessage.Question, a *dnsmessage.AResource) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if q != nil {
		if b.StartQuestions() != nil || b.Question(*q) != nil {
			return nil
		}
	}
	if a != nil {
		if b.StartAnswers() != nil {
			return nil
		}
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: syntheticTTL}
		if b.AResource(rh, *a) != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
