package netproxy

import (
	"io"
	"net/netip"
	"sync"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

// maxSynthetic bounds the names given a synthetic address in one run: a
// wildcard entry matches unboundedly many names, and each costs the
// proxy two map entries. 65536 is far above what a build resolves and
// keeps the table below ~10 MB; once it is full, new names get SERVFAIL
// and are counted as refused ([ReasonTableFull]).
const maxSynthetic = 1 << 16

// synthetic is the run's stable mapping between listed names and
// addresses of allowlist.SyntheticPrefix: the first query for a name
// takes the next free address, later ones get the same. Safe for
// concurrent use.
type synthetic struct {
	mu     sync.Mutex
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	next   netip.Addr
}

func newSynthetic() *synthetic {
	return &synthetic{
		byName: map[string]netip.Addr{},
		byAddr: map[netip.Addr]string{},
		// .0.0 is the network's own address; start at .0.1.
		next: allowlist.SyntheticPrefix.Addr().Next(),
	}
}

// assign returns name's address, taking a new one when it has none; ok
// is false when the table is full.
func (s *synthetic) assign(name string) (netip.Addr, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.byName[name]; ok {
		return a, true
	}
	if len(s.byName) >= maxSynthetic || !allowlist.SyntheticPrefix.Contains(s.next) {
		return netip.Addr{}, false
	}
	a := s.next
	s.next = a.Next()
	s.byName[name] = a
	s.byAddr[a] = name
	return a, true
}

// name returns the name a was given to ("", false for an address never
// handed out).
func (s *synthetic) name(a netip.Addr) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.byAddr[a.Unmap()]
	return n, ok
}

// track adds c to what Close closes; false (c not added) when the proxy
// is closed already.
func (p *Proxy) track(c io.Closer) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.serving[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c io.Closer) {
	p.mu.Lock()
	delete(p.serving, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
