package allowlist

import "net/netip"

// specialPrefixes are the ranges a name must not resolve to unless the
// user listed that name exactly. Sources: IANA IPv4 and IPv6 Special-Purpose
// Address Registries (RFC 6890 and updates), RFC 1918, RFC 6598 (CGNAT),
// RFC 4193 (ULA), RFC 6052/8215 (NAT64), RFC 3056 (6to4), RFC 4380 (Teredo).
//
// Cloud platform endpoints are here too, checked per provider: most lie in
// a range above already (AWS 169.254.169.254, .253, 169.254.170.2 and
// fd00:ec2::254 in fc00::/7; GCP 169.254.169.254 and fd20:ce::254; Oracle
// 169.254.169.254 and 192.0.0.192; Alibaba 100.100.100.200, CGNAT; Tencent
// 169.254.0.23; DigitalOcean, Hetzner, OpenStack 169.254.169.254). Azure's
// WireServer 168.63.129.16 (goal state, extension settings, certificates;
// its agent firewalls it to uid 0, which the proxy may run as) is a public
// address and is listed on its own (red team round 26, R26d-1).
var specialPrefixes = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",        // "this network"
		"10.0.0.0/8",       // RFC 1918
		"100.64.0.0/10",    // shared address space (CGNAT)
		"127.0.0.0/8",      // loopback
		"168.63.129.16/32", // Azure WireServer and platform DNS
		"169.254.0.0/16",   // link-local (cloud metadata 169.254.169.254)
		"172.16.0.0/12",    // RFC 1918
		"192.0.0.0/24",     // IETF protocol assignments
		"192.0.2.0/24",     // TEST-NET-1
		"192.88.99.0/24",   // 6to4 relay anycast (deprecated)
		"192.168.0.0/16",   // RFC 1918
		"198.18.0.0/15",    // benchmarking
		"198.51.100.0/24",  // TEST-NET-2
		"203.0.113.0/24",   // TEST-NET-3
		"224.0.0.0/4",      // multicast
		"240.0.0.0/4",      // reserved, and 255.255.255.255 broadcast
		"::/96",            // unspecified, loopback, IPv4-compatible (deprecated)
		"::ffff:0:0:0/96",  // IPv4-translated (RFC 2765 SIIT); IPv4-mapped is unmapped first
		"64:ff9b:1::/48",   // local-use NAT64 (RFC 8215)
		"100::/64",         // discard-only
		"2001::/23",        // IETF protocol assignments, incl. Teredo 2001::/32
		"2001:db8::/32",    // documentation
		"3fff::/20",        // documentation (RFC 9637)
		"5f00::/16",        // SRv6 SIDs
		"fc00::/7",         // unique local
		"fe80::/10",        // link-local
		"fec0::/10",        // site-local (deprecated)
		"ff00::/8",         // multicast
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052
	sixToFour      = netip.MustParsePrefix("2002::/16")    // RFC 3056
)

// IsSpecial reports whether a is an address a name must not resolve to
// unless listed exactly: loopback, private, link-local, unspecified,
// multicast, broadcast, CGNAT, documentation and other special-purpose
// ranges, and cloud platform endpoints (see specialPrefixes). IPv4
// embedded in IPv6 is checked as IPv4 (see [Embedded4]); the NAT64
// well-known prefix, which a DNS64 resolver synthesises for a public
// address, is allowed when the embedded address is public. An address
// with an IPv6 zone is special.
func IsSpecial(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return true
	}
	a = Embedded4(a)
	for _, p := range specialPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Embedded4 returns the IPv4 address a packet to a reaches: the embedded
// one of an IPv4-mapped (::ffff:a.b.c.d), NAT64 well-known prefix
// (64:ff9b::a.b.c.d, RFC 6052) or 6to4 (2002:AABB:CCDD::/48, RFC 3056)
// address, and a itself otherwise (a zone is kept). Both the special
// ranges and the proxy's "address of this host" check compare this form:
// a NAT64 gateway hairpins 64:ff9b::<host's public IPv4> back to the
// host (red team round 26, R26d-4).
func Embedded4(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if !a.Is6() {
		return a
	}
	b := a.As16()
	switch {
	case nat64WellKnown.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	return a
}
