// Package netproxy is a domain-allowlist HTTP proxy for confined children:
// plain HTTP forwarding and CONNECT tunnels, built on
// github.com/elazarl/goproxy, that lets a request through only when its
// host is on an allowlist (see [allowlist.ParseAllow]) and the host's addresses pass
// a DNS-rebinding check (see [Proxy]).
//
// The caller creates the listener (for landjail: inside the child's
// private network namespace) and calls [Proxy.Serve]; the proxy dials from
// ordinary goroutines, so upstream connections are made in the network
// namespace of the process's ordinary threads (the host's), never of the
// thread that created the listener.
//
// It does not protect against: a listed host that relays elsewhere (an
// open proxy, a git forge serving anyone's repository, DNS-over-HTTPS); a
// CONNECT tunnel to a listed name whose TLS SNI or HTTP Host names another
// site on the same server (domain fronting: the proxy does not look inside
// tunnels); exfiltration through the allowed hosts themselves; and
// programs that ignore proxy variables (the caller must make direct
// connections fail, see the package README section, or serve them
// transparently: [Proxy.ServeDNS] and [Proxy.ServeTransparent], which
// check only a connection's first TLS ClientHello or HTTP request).
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/landjail/landjail/internal/cpushare"
	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"golang.org/x/net/netutil"
	"golang.org/x/net/publicsuffix"
)

// Limits. Each is the default of the [Config] field of the same meaning.
const (
	// DefaultMaxConns bounds concurrently open client connections (each
	// keep-alive connection or CONNECT tunnel counts once); further
	// clients wait in the listen backlog. 256 is far above what a package
	// manager opens (npm: 16 sockets, pip: 10, cargo: ~30) and keeps file
	// descriptors below ~600 (256 clients, as many upstream connections in
	// use, maxIdleUpstream idle ones).
	DefaultMaxConns = 256
	// DefaultIdleTimeout closes a CONNECT tunnel, or a kept-alive client
	// connection, with no bytes in either direction for this long.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultDialTimeout bounds one upstream TCP connect.
	DefaultDialTimeout = 30 * time.Second
	// MaxHeaderBytes bounds a client request's header block (the request
	// line and headers) and an upstream response's header block; larger
	// requests get 431, larger responses 502.
	MaxHeaderBytes = 64 << 10
	// readHeaderTimeout bounds how long a client may take to send headers.
	readHeaderTimeout = 30 * time.Second
	// maxRefusalKinds bounds the distinct (host, port, reason) entries
	// kept by [Proxy.Refused]; more distinct refusals are counted under
	// host "*" with reason [ReasonTooMany], so a child cannot grow the
	// parent's memory by asking for random names.
	maxRefusalKinds = 1024
	// maxIdleUpstream bounds the kept-alive upstream connections of
	// forwarded plain-HTTP requests, over all hosts (8 per host): without
	// it a child asking for many allowed names (a wildcard's) would hold
	// one idle connection, and descriptor, per name for 90 s.
	maxIdleUpstream = 64
)

// Resolver looks up a host's addresses. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens TCP connections. *net.Dialer satisfies it. The proxy calls
// it only with a numeric "IP:port" address that passed the allowlist check.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config configures a [Proxy]. Only Allow is required.
type Config struct {
	// Allow is the allowlist, see [allowlist.ParseAllow]. Empty allows nothing.
	Allow []string
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver Resolver
	// Dialer dials checked addresses; nil means a net.Dialer with
	// DefaultDialTimeout.
	Dialer Dialer
	// Log receives an Info record the first time each (host, port,
	// reason) is refused (at most 1025 records; repeats are only counted,
	// see [Proxy.Refused]) and Debug records from goproxy; nil discards.
	Log *slog.Logger
	// MaxConns, IdleTimeout: zero means the Default* constant.
	MaxConns    int
	IdleTimeout time.Duration
	// CPUs bounds the proxy's own process CPU time to that many CPUs
	// (internal/cpushare), charged at each read and write of a client
	// connection, which waits while the share is owed: the command's
	// --cpus, which bounds its own group, not this process (red team
	// round 23, R23c-4: refused requests pipelined at --cpus 0.05 made
	// the proxy use 0.33 CPU). 0: no bound.
	CPUs float64
}

// Refusal reasons, as recorded in [Refusal.Reason].
const (
	ReasonNotListed    = "not on the allowlist"
	ReasonPort         = "port not allowed for this host"
	ReasonBadHost      = "unparseable host"
	ReasonResolve      = "name did not resolve"
	ReasonSpecial      = "resolves to a loopback/private/special address and is not listed exactly"
	ReasonLocal        = "resolves to an address of this host and is not listed exactly"
	ReasonScheme       = "only http:// is forwarded; use CONNECT for https"
	ReasonNotProxyForm = "not a proxy request"
	ReasonTooMany      = "too many distinct refusals; counted together"
	ReasonBelowSuffix  = "under a public suffix below the wildcard (another owner's name)"
	// Transparent egress ([Proxy.AnswerDNS], [Proxy.ServeTransparent]).
	ReasonDNSNotListed = "not on the allowlist (DNS query)"
	ReasonTableFull    = "too many names given addresses in this run"
	ReasonNotSynthetic = "direct connection to an address the DNS responder did not hand out"
	ReasonNameMismatch = "TLS SNI or HTTP Host missing or naming another host than the address was given to"
	ReasonOpaque       = "neither TLS nor HTTP, and no entry names this port alone (NAME:PORT) or any port for the host"
)

// Refusal is one kind of refused request and how often it happened.
type Refusal struct {
	Host   string // canonical host name or IP literal as requested
	Port   uint16
	Reason string // one of the Reason* constants
	Count  int
}

type refusalKey struct {
	host   string
	port   uint16
	reason string
}

// Proxy is an allowlist HTTP/CONNECT proxy. Create it with [New]. Its
// methods are safe for concurrent use.
//
// For each request it: parses the target; refuses it unless an allowlist
// rule matches the host and port; for a name, resolves it once and
// refuses it if any address is special ([allowlist.IsSpecial]) or belongs to one of
// the host's own interfaces (snapshot taken by New) unless the name is
// listed exactly (not through a wildcard); then dials one of exactly the
// addresses it checked, never resolving again (a DNS answer that changes
// between check and dial, "rebinding", cannot redirect the connection).
// Refused requests get 403 with the reason and are counted ([Proxy.Refused]).
// Hop-by-hop headers (RFC 9110 7.6.1: Connection and the headers it
// names, Keep-Alive, Proxy-Connection, Proxy-Authorization,
// Proxy-Authenticate, TE, Trailer, Transfer-Encoding, Upgrade) are removed
// from forwarded requests and responses; Proxy-Authorization never goes
// upstream. Plain-HTTP WebSocket upgrades are therefore not forwarded (wss://
// through CONNECT works).
type Proxy struct {
	cpu      *cpushare.Share // Config.CPUs
	rules    []allowlist.Rule
	resolver Resolver
	dialer   Dialer
	log      *slog.Logger
	maxConns int
	idle     time.Duration

	gp  *goproxy.ProxyHttpServer
	srv *http.Server

	mu       sync.Mutex
	closed   bool
	refused  map[refusalKey]int
	local    map[netip.Addr]bool // the host's own interface addresses at New
	upstream map[*idleConn]struct{}
	serving  map[io.Closer]struct{} // transparent listeners, DNS sockets, transparent clients
	syn      *synthetic             // transparent egress: names and their addresses
}

// New returns a Proxy for cfg. It returns an error wrapping
// [ErrBadAllowEntry] when an allowlist entry does not parse
// (allowlist.ParseAllow) or is a wildcard over a public suffix of the
// Public Suffix List, ICANN's or a private one ("*.co.uk", "*.github.io",
// "*.cloudfront.net": anyone can register a name under them;
// golang.org/x/net/publicsuffix). It opens nothing: serving starts with
// [Proxy.Serve].
func New(cfg Config) (*Proxy, error) {
	rules, err := allowlist.ParseAllow(cfg.Allow)
	if err != nil {
		return nil, err
	}
	for i, r := range rules {
		if ps, _ := publicsuffix.PublicSuffix(r.Name); r.Wildcard && ps == r.Name {
			return nil, fmt.Errorf("%w %q: wildcard over the public suffix %s: anyone can register a name under it (list the names you need)", ErrBadAllowEntry, cfg.Allow[i], r.Name)
		}
	}
	p := &Proxy{
		cpu:      cpushare.New(cfg.CPUs),
		rules:    rules,
		resolver: cfg.Resolver,
		dialer:   cfg.Dialer,
		log:      cfg.Log,
		maxConns: cfg.MaxConns,
		idle:     cfg.IdleTimeout,
		refused:  map[refusalKey]int{},
		upstream: map[*idleConn]struct{}{},
		serving:  map[io.Closer]struct{}{},
		syn:      newSynthetic(),
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.dialer == nil {
		p.dialer = &net.Dialer{Timeout: DefaultDialTimeout}
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.maxConns <= 0 {
		p.maxConns = DefaultMaxConns
	}
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	p.local = localAddrs()

	gp := goproxy.NewProxyHttpServer()
	gp.Logger = slogPrintf{p.log}
	gp.Verbose = false
	gp.ConnectDial = nil // never chain to $HTTPS_PROXY; dial via ctx.Dialer
	gp.ConnectDialWithReq = nil
	gp.KeepHeader = false
	gp.AllowHTTP2 = false
	gp.NonproxyHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.refuse(r.Host, 0, ReasonNotProxyForm)
		http.Error(w, "landjail proxy: "+ReasonNotProxyForm, http.StatusForbidden)
	})
	gp.Tr = &http.Transport{
		Proxy:                  nil, // never chain to $HTTP_PROXY
		DialContext:            p.dialChecked,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConns:           maxIdleUpstream,
		MaxIdleConnsPerHost:    8,
		DisableCompression:     true,
		ForceAttemptHTTP2:      false,
	}
	gp.OnRequest().HandleConnectFunc(p.handleConnect)
	gp.OnRequest().DoFunc(p.handleRequest)
	gp.OnResponse().DoFunc(func(resp *http.Response, _ *goproxy.ProxyCtx) *http.Response {
		if resp != nil {
			stripHopByHop(resp.Header)
		}
		return resp
	})
	p.gp = gp
	p.srv = &http.Server{
		Handler:           gp,
		MaxHeaderBytes:    MaxHeaderBytes,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       p.idle,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	return p, nil
}

// Serve accepts proxy clients on l until [Proxy.Close] and returns
// [ErrClosed] then; any other error is l's Accept error. Serve takes
// ownership of l and closes it. At most MaxConns client connections are
// open at once. l may belong to another network namespace than the
// calling goroutine's thread; upstream dials do not depend on it.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		l.Close()
		return ErrClosed
	}
	err := p.srv.Serve(netutil.LimitListener(throttled(l, p.cpu), p.maxConns))
	if errors.Is(err, http.ErrServerClosed) {
		return ErrClosed
	}
	return err
}

// Close stops serving: it closes the listener, every client connection
// and every upstream connection (so CONNECT tunnels end). It is
// idempotent and returns nil.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	ups := make([]*idleConn, 0, len(p.upstream))
	for c := range p.upstream {
		ups = append(ups, c)
	}
	for c := range p.serving {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.srv.Close()
	for _, c := range ups {
		_ = c.Close()
	}
	p.gp.Tr.CloseIdleConnections()
	return nil
}

// Refused returns every kind of refused request so far with its count,
// sorted by host, port, reason.
func (p *Proxy) Refused() []Refusal {
	p.mu.Lock()
	out := make([]Refusal, 0, len(p.refused))
	for k, n := range p.refused {
		out = append(out, Refusal{Host: k.host, Port: k.port, Reason: k.reason, Count: n})
	}
	p.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Host != b.Host {
			return a.Host < b.Host
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.Reason < b.Reason
	})
	return out
}

// Env is allowlist.Env: the proxy variables for a child.
func Env(addr string) []string { return allowlist.Env(addr) }

func (p *Proxy) refuse(unsafeHost string, port uint16, reason string) {
	host := printable(unsafeHost)
	p.mu.Lock()
	k := refusalKey{host, port, reason}
	if _, ok := p.refused[k]; !ok && len(p.refused) >= maxRefusalKinds {
		k = refusalKey{"*", 0, ReasonTooMany}
	}
	p.refused[k]++
	first := p.refused[k] == 1
	p.mu.Unlock()
	if first { // repeats are counted, not logged: a child cannot flood the log
		p.log.Info("landjail proxy refused", "host", host, "port", port, "reason", reason)
	}
}

// localAddrs returns the addresses of the host's network interfaces
// (those of the calling thread's network namespace: call New from an
// ordinary goroutine). A name resolving to one of them would reach
// services the host binds to 0.0.0.0 through a public address that
// [allowlist.IsSpecial] does not flag. Interfaces added after New are not seen. A
// variable so tests can stand in a public address.
var localAddrs = func() map[netip.Addr]bool {
	m := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return m
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				m[ip.Unmap()] = true
			}
		}
	}
	return m
}

// printable returns at most 255 bytes of s with every byte outside
// printable ASCII replaced by '?', so a child's request cannot put
// terminal escapes or newlines into the parent's report or log.
func printable(s string) string {
	if len(s) > 255 {
		s = s[:255]
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// decision is what the check produced: the addresses to dial.
type decision struct {
	target allowlist.Target
	addrs  []netip.Addr
}

// decide runs the allowlist and rebinding checks for t. On refusal it
// returns the reason.
func (p *Proxy) decide(ctx context.Context, t allowlist.Target) (*decision, string) {
	allowed, exact := allowlist.Match(p.rules, t)
	if !allowed {
		// Distinguish a listed host on a wrong port for the report.
		anyPort := make([]allowlist.Rule, len(p.rules))
		for i, r := range p.rules {
			r.Ports = nil
			anyPort[i] = r
		}
		if ok, _ := allowlist.Match(anyPort, t); ok {
			return nil, ReasonPort
		}
		return nil, ReasonNotListed
	}
	if !exact && t.Name != "" && !wildcardOwns(p.rules, t) {
		return nil, ReasonBelowSuffix
	}
	if t.IP.IsValid() {
		return &decision{target: t, addrs: []netip.Addr{t.IP}}, ""
	}
	rctx, cancel := context.WithTimeout(ctx, DefaultDialTimeout)
	defer cancel()
	// The name fully qualified: a resolver applies resolv.conf's search
	// list to a relative one (with ndots:5, a Kubernetes pod's, before
	// the name itself), and the proxy connected to NAME.<search domain>,
	// a host no entry lists, where that zone answers (red team round 25,
	// R25c-11). "localhost" and the names below it are the loopback
	// addresses, answered here and never asked of DNS (RFC 6761, 6.3):
	// Go's resolver took "app.localhost" through the search list too
	// (R25d-1).
	var addrs []netip.Addr
	var err error
	if t.Name == "localhost" || strings.HasSuffix(t.Name, ".localhost") {
		addrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.IPv6Loopback()}
	} else {
		addrs, err = p.resolver.LookupNetIP(rctx, "ip", t.Name+".")
	}
	if err != nil || len(addrs) == 0 {
		return nil, ReasonResolve
	}
	checked := make([]netip.Addr, 0, len(addrs))
	lift := allowlist.LiftsDefence(p.rules, t) // an exact rule, not "public:"
	for _, a := range addrs {
		a = a.Unmap()
		if !lift && allowlist.IsSpecial(a) {
			return nil, ReasonSpecial
		}
		if !lift && (p.local[a] || p.local[allowlist.Embedded4(a)]) {
			return nil, ReasonLocal
		}
		checked = append(checked, a)
	}
	return &decision{target: t, addrs: checked}, ""
}

// wildcardOwns reports whether a wildcard rule matching t stands at or
// below t's public suffix: "*.amazonaws.com" matches
// "bucket.s3.amazonaws.com", but s3.amazonaws.com is a public suffix of
// its own (anyone's bucket), so that rule does not own the name;
// "*.example.co.uk" owns "a.example.co.uk".
func wildcardOwns(rules []allowlist.Rule, t allowlist.Target) bool {
	ps, _ := publicsuffix.PublicSuffix(t.Name)
	for _, r := range rules {
		if !r.Wildcard || !strings.HasSuffix(r.Name, "."+ps) {
			continue
		}
		if ok, _ := allowlist.Match([]allowlist.Rule{r}, t); ok {
			return true
		}
	}
	return false
}

func forbidden(r *http.Request, reason string) *http.Response {
	return goproxy.NewResponse(r, goproxy.ContentTypeText, http.StatusForbidden,
		"landjail proxy: refused: "+reason+"\n")
}

func (p *Proxy) handleConnect(host string, ctx *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
	t, err := allowlist.ParseTarget(host, 443)
	if err != nil {
		p.refuse(host, 0, ReasonBadHost)
		ctx.Resp = forbidden(ctx.Req, ReasonBadHost)
		return goproxy.RejectConnect, host
	}
	d, reason := p.decide(ctx.Req.Context(), t)
	if d == nil {
		p.refuse(t.Host(), t.Port, reason)
		ctx.Resp = forbidden(ctx.Req, reason)
		return goproxy.RejectConnect, host
	}
	ctx.Dialer = func(c context.Context, network, _ string) (net.Conn, error) {
		return p.dialDecision(c, d)
	}
	return goproxy.OkConnect, host
}

type decisionKey struct{}

func (p *Proxy) handleRequest(r *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
	if r.URL.Scheme != "http" {
		p.refuse(r.URL.Host, 0, ReasonScheme)
		return r, forbidden(r, ReasonScheme)
	}
	t, err := allowlist.ParseTarget(r.URL.Host, 80)
	if err != nil {
		p.refuse(r.URL.Host, 0, ReasonBadHost)
		return r, forbidden(r, ReasonBadHost)
	}
	d, reason := p.decide(r.Context(), t)
	if d == nil {
		p.refuse(t.Host(), t.Port, reason)
		return r, forbidden(r, reason)
	}
	stripHopByHop(r.Header)
	// Transport errors quote socket addresses ("read tcp A->B: reset"),
	// which goproxy would put in the error body: the child reads only
	// the host it asked for and what went wrong.
	ctx.RoundTripper = goproxy.RoundTripperFunc(func(req *http.Request, _ *goproxy.ProxyCtx) (*http.Response, error) {
		resp, err := p.gp.Tr.RoundTrip(req)
		if err != nil {
			return nil, hostOnly(t, err)
		}
		return resp, nil
	})
	return r.WithContext(context.WithValue(r.Context(), decisionKey{}, d)), nil
}

// dialChecked is the Transport's dialer for forwarded plain-HTTP
// requests: it dials only the addresses the request's decision checked.
// The Transport may hand the connection to a later request for the same
// host:port; that request was checked for the same name.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	d, ok := ctx.Value(decisionKey{}).(*decision)
	if !ok {
		return nil, fmt.Errorf("%w: dial of %q without an allowlist decision (cannot happen)", ErrRefused, addr)
	}
	if t, err := allowlist.ParseTarget(addr, 0); err != nil || t != d.target {
		return nil, fmt.Errorf("%w: dial of %q does not match the checked %q (cannot happen)", ErrRefused, addr, d.target.Host())
	}
	return p.dialDecision(ctx, d)
}

// dialDecision dials the checked addresses in order and returns the first
// connection, wrapped so idle tunnels time out and Close can end it.
func (p *Proxy) dialDecision(ctx context.Context, d *decision) (net.Conn, error) {
	var errs []error
	for _, a := range d.addrs {
		c, err := p.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, d.target.Port).String())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		ic := &idleConn{Conn: c, idle: p.idle, p: p}
		ic.touch()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return nil, ErrClosed
		}
		p.upstream[ic] = struct{}{}
		p.mu.Unlock()
		return ic, nil
	}
	return nil, unreachable(d.target, errs)
}

// hostOnly rewords an upstream error of a forwarded request for the
// child: the target as requested and why (an errno, a timeout), never an
// address. Errors already worded by unreachable are kept.
func hostOnly(t allowlist.Target, err error) error {
	var u *unreachableError
	if errors.As(err, &u) {
		return u
	}
	return &unreachableError{fmt.Sprintf("%s: no response: %s", net.JoinHostPort(t.Host(), strconv.Itoa(int(t.Port))), why(err))}
}

// unreachableError is an upstream failure worded for the child.
type unreachableError struct{ msg string }

func (e *unreachableError) Error() string { return e.msg }

// why names the cause of err without addresses: its errno, "timed out",
// or "failed".
func why(err error) string {
	var errno syscall.Errno
	var ne net.Error
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "failed"
}

// unreachable is the error for a target none of whose checked addresses
// answered, as the child sees it in the proxy's error response: the name
// and the reason (the last address's errno, or a timeout), never the
// addresses the proxy resolved (an allowed wildcard would otherwise make
// the proxy a resolver of every name under it).
func unreachable(t allowlist.Target, errs []error) error {
	reason := "no address"
	if len(errs) > 0 {
		reason = why(errs[len(errs)-1])
	}
	return &unreachableError{fmt.Sprintf("cannot connect to %s: %s", net.JoinHostPort(t.Host(), strconv.Itoa(int(t.Port))), reason)}
}

// hopByHop are the hop-by-hop headers of RFC 9110 section 7.6.1 plus the
// de facto Proxy-Connection and Keep-Alive.
var hopByHop = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func stripHopByHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
}

// slogPrintf adapts goproxy's Printf logger to slog at Debug level.
type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) {
	s.l.Debug(strings.TrimSpace(fmt.Sprintf(format, v...)), "from", "goproxy")
}

var _ io.Closer = (*Proxy)(nil)
