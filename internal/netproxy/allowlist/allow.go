// Package allowlist is the pure half of landjail's --allow-domain proxy
// (package internal/netproxy): parsing the allowlist ([ParseAllow]) and
// a request's destination ([ParseTarget]), matching them ([Match]), the
// special-address check of the DNS-rebinding defence ([IsSpecial]) and
// the proxy variables for the child ([Env]). No network, no HTTP library:
// landjail run links it to validate --allow-domain without goproxy's
// start-up cost.
package allowlist

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// portsDefault are the ports a bare entry ("registry.npmjs.org") allows:
// the HTTP and HTTPS ports, because a package registry or git forge needs
// nothing else and any other port is a service the user did not name.
var portsDefault = []uint16{80, 443}

// Rule is one parsed allowlist entry. The zero value matches nothing.
type Rule struct {
	// Name is the host name in lower-case ASCII (IDNA A-labels), no
	// trailing dot; for a wildcard it is the suffix after "*." . Empty for
	// an IP rule.
	Name string
	// Wildcard is true for "*.suffix": it matches every name that ends in
	// ".suffix", at any depth, and NOT "suffix" itself (list both to allow
	// both; this mirrors TLS wildcard certificates, which do not cover the
	// apex either).
	Wildcard bool
	// IP is set for an IP-literal rule (IPv4-mapped IPv6 is unmapped).
	IP netip.Addr
	// Ports lists the allowed ports; nil means any port ("name:*").
	Ports []uint16
	// Public is set for "public:name": the name is listed exactly, but
	// keeps the DNS-rebinding defence a wildcard has (its addresses must
	// not be special nor this host's: [LiftsDefence]). --learn writes
	// the names it learns this way, since it cannot tell, without asking
	// DNS about a name the command chose, where the name leads.
	Public bool
}

func (r Rule) String() string {
	h := r.Name
	switch {
	case r.IP.IsValid():
		h = r.IP.String()
		if r.IP.Is6() {
			h = "[" + h + "]"
		}
	case r.Wildcard:
		h = "*." + h
	case r.Public:
		h = "public:" + h
	}
	if r.Ports == nil {
		return h + ":*"
	}
	if len(r.Ports) == 1 {
		return h + ":" + strconv.Itoa(int(r.Ports[0]))
	}
	return h
}

func (r Rule) allowsPort(port uint16) bool {
	if r.Ports == nil {
		return true
	}
	for _, p := range r.Ports {
		if p == port {
			return true
		}
	}
	return false
}

// ParseAllow parses allowlist entries. Each entry is one of
//
//	name            registry.npmjs.org   (ports 80 and 443)
//	*.suffix        *.docker.io (subdomains at any depth, not the apex)
//	IP              192.0.2.7, [2001:db8::1], 2001:db8::1
//	public:name     public:files.pythonhosted.org (as name, but the
//	                name's addresses must not be special: Rule.Public)
//
// optionally followed by ":port" (only that port) or ":*" (any port).
// Names are compared case-insensitively in ASCII form: a Unicode name is
// converted to its IDNA A-label form (punycode, UTS #46 lookup profile) and
// one trailing dot is removed. It returns an error wrapping
// [ErrBadAllowEntry] for an empty entry, a bad port, a name IDNA refuses,
// a wildcard anywhere but the first label, a wildcard over a single label
// ("*.com": it would open a whole top-level domain), and a name made only
// of digits and dots ("127.1": list such an address as an IP). Wildcards
// over other public suffixes ("*.co.uk") are refused by netproxy.New,
// which links the Public Suffix List: this package stays small enough
// for landjail's own flag checks.
func ParseAllow(entries []string) ([]Rule, error) {
	rules := make([]Rule, 0, len(entries))
	for _, e := range entries {
		r, err := parseEntry(e)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadAllowEntry, e, err)
		}
		rules = append(rules, r)
	}
	return rules, nil
}

func parseEntry(e string) (Rule, error) {
	e = strings.TrimSpace(e)
	if e == "" {
		return Rule{}, fmt.Errorf("empty")
	}
	// "public:" is a prefix unless what follows is a port ("public:443"
	// is the host "public" on port 443).
	if rest, ok := strings.CutPrefix(e, "public:"); ok && rest != "*" && strings.Trim(rest, "0123456789") != "" {
		r, err := parseEntry(rest)
		switch {
		case err != nil:
			return Rule{}, err
		case r.IP.IsValid():
			return Rule{}, fmt.Errorf("public: is for a host name, not an address")
		case r.Wildcard:
			return Rule{}, fmt.Errorf("public: is for a host name; a wildcard keeps the rebinding defence already")
		case r.Public:
			return Rule{}, fmt.Errorf("public: twice")
		}
		r.Public = true
		return r, nil
	}
	host, portStr := e, ""
	if h, p, err := net.SplitHostPort(e); err == nil {
		host, portStr = h, p
	} else if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		host = e[1 : len(e)-1]
	}
	r := Rule{Ports: portsDefault}
	switch portStr {
	case "":
	case "*":
		r.Ports = nil
	default:
		p, err := parsePort(portStr)
		if err != nil {
			return Rule{}, err
		}
		r.Ports = []uint16{p}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return Rule{}, fmt.Errorf("IPv6 zone not allowed")
		}
		r.IP = ip.Unmap()
		return r, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard = true
		host = rest
	}
	name, err := canonicalName(host)
	if err != nil {
		return Rule{}, err
	}
	if r.Wildcard && !strings.Contains(name, ".") {
		return Rule{}, fmt.Errorf("wildcard over a top-level domain")
	}

	r.Name = name
	return r, nil
}

func parsePort(s string) (uint16, error) {
	p, err := strconv.ParseUint(s, 10, 16)
	if err != nil || p == 0 {
		return 0, fmt.Errorf("port %q is not 1-65535", s)
	}
	return uint16(p), nil
}

// canonicalName returns the lower-case ASCII form of a host name with one
// trailing dot removed, or an error when it is not a valid DNS host name
// (IDNA UTS #46 lookup profile, which also refuses "*", "_", spaces, empty
// labels and labels longer than 63 bytes).
func canonicalName(unsafeName string) (string, error) {
	n := strings.TrimSuffix(unsafeName, ".")
	if n == "" {
		return "", fmt.Errorf("empty host name")
	}
	// idna maps an invalid UTF-8 byte to U+FFFD and encodes that
	// ("\x8e" became "xn--zn7c", a name idna itself then refuses).
	if !utf8.ValidString(n) {
		return "", fmt.Errorf("host name %q is not valid UTF-8", unsafeName)
	}
	a, err := idna.Lookup.ToASCII(n)
	if err != nil {
		return "", fmt.Errorf("host name %q: %v", unsafeName, err)
	}
	a = strings.ToLower(a)
	if a == "" || strings.HasPrefix(a, ".") || strings.HasSuffix(a, ".") || strings.Contains(a, "..") {
		return "", fmt.Errorf("host name %q: empty label", unsafeName)
	}
	// The lookup profile checks the lengths of the labels as given, not
	// of their punycode: a long Unicode label became an "xn--" label of
	// over 63 bytes that the name's own String then failed to parse (the
	// fuzzer, FuzzParseAllow). RFC 1035: 63 bytes a label, 253 a name.
	if len(a) > 253 {
		return "", fmt.Errorf("host name %q: longer than 253 bytes", unsafeName)
	}
	for l := range strings.SplitSeq(a, ".") {
		if len(l) > 63 {
			return "", fmt.Errorf("host name %q: a label longer than 63 bytes", unsafeName)
		}
	}
	// A host name made of digits and dots only ("127.1", "2130706433") is
	// an IP literal in inet_aton's eyes and to some resolvers; refuse it as
	// a name so it can only be listed, or requested, as an IP.
	if strings.Trim(a, "0123456789.") == "" || strings.HasPrefix(a, "0x") {
		return "", fmt.Errorf("host name %q looks like a numeric address", unsafeName)
	}
	return a, nil
}

// Target is a request's destination after parsing: exactly one of Name
// (canonical, see [ParseAllow]) and IP is set.
type Target struct {
	Name string
	IP   netip.Addr
	Port uint16
}

func (t Target) Host() string {
	if t.IP.IsValid() {
		return t.IP.String()
	}
	return t.Name
}

// ParseTarget parses a request's "host:port" (CONNECT authority or an
// absolute URL's host, with defaultPort used when the port is absent).
// Unparseable hosts return an error wrapping [ErrRefused].
func ParseTarget(unsafeHostPort string, defaultPort uint16) (Target, error) {
	host, portStr := unsafeHostPort, ""
	if h, p, err := net.SplitHostPort(unsafeHostPort); err == nil {
		host, portStr = h, p
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	t := Target{Port: defaultPort}
	if portStr != "" {
		p, err := parsePort(portStr)
		if err != nil {
			return Target{}, fmt.Errorf("%w: %v", ErrRefused, err)
		}
		t.Port = p
	}
	if t.Port == 0 {
		return Target{}, fmt.Errorf("%w: no port", ErrRefused)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return Target{}, fmt.Errorf("%w: IPv6 zone", ErrRefused)
		}
		t.IP = ip.Unmap()
		return t, nil
	}
	n, err := canonicalName(host)
	if err != nil {
		return Target{}, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	t.Name = n
	return t, nil
}

// LiftsDefence reports whether a rule of rules that allows t names it
// exactly, as an address or as a name not marked public: only then may a
// name resolve to a special address or one of this host's (the
// DNS-rebinding defence, netproxy). A wildcard and a "public:" name keep
// the defence.
func LiftsDefence(rules []Rule, t Target) bool {
	for _, r := range rules {
		if !r.allowsPort(t.Port) {
			continue
		}
		switch {
		case t.IP.IsValid():
			if r.IP.IsValid() && r.IP == t.IP {
				return true
			}
		case r.IP.IsValid(), r.Wildcard, r.Public:
		case r.Name == t.Name:
			return true
		}
	}
	return false
}

// Match reports whether t is allowed by rules, and whether the matching
// rule names t exactly (an exact name or IP rule, a "public:" name too,
// not a wildcard); whether the rule lets a name resolve to a special
// (loopback, private, ...) address is [LiftsDefence]'s. It is pure: no
// resolution, no network.
//
// An IP target matches only an IP rule with the same address: listing
// "registry.test" does not allow the address it resolves to.
func Match(rules []Rule, t Target) (allowed, exact bool) {
	for _, r := range rules {
		if !r.allowsPort(t.Port) {
			continue
		}
		switch {
		case t.IP.IsValid():
			if r.IP.IsValid() && r.IP == t.IP {
				return true, true
			}
		case r.IP.IsValid():
		case r.Wildcard:
			if strings.HasSuffix(t.Name, "."+r.Name) {
				allowed = true
			}
		case r.Name == t.Name:
			return true, true
		}
	}
	return allowed, false
}
