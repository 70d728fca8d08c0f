package allowlist

import (
	"net/netip"
	"slices"
)

// SyntheticPrefix is the range from which the transparent-egress DNS
// responder (package internal/netproxy, [Proxy.ServeDNS]) hands out one
// address per listed name: 198.18.0.0/15, reserved for network benchmark
// tests (RFC 2544, RFC 6890 "Benchmarking"), so no real host has one.
// [IsSpecial] reports its addresses as special. Inside the command's
// network namespace landjail routes the whole range to loopback (a
// "local" route, as `ip route add local 198.18.0.0/15 dev lo`), where the
// proxy's transparent listeners accept connections to any of them.
var SyntheticPrefix = netip.MustParsePrefix("198.18.0.0/15")

// DNSAddr is where the transparent-egress DNS responder listens inside
// the command's network namespace: UDP 127.0.0.1:53, the name server
// glibc, musl and Go's resolver use when /etc/resolv.conf cannot be read
// (the view leaves it out when the network is restricted).
var DNSAddr = netip.MustParseAddrPort("127.0.0.1:53")

// MaxTransparentPorts bounds the ports of [TransparentPorts]: each is a
// listener, a Landlock rule and a descriptor passed to the proxy
// process in one message (SCM_RIGHTS carries at most 253). An allowlist
// naming more ports gets no transparent egress (the proxy variables
// still work).
const MaxTransparentPorts = 64

// TransparentPorts returns the TCP ports on which a transparent listener
// serves rules: every port a rule names, and 80 and 443 for rules that
// allow any port ("name:*": a listener per port is impossible, such a
// rule is reached transparently on those two, through the proxy
// variables on the others). IP rules are left out: no name maps to them.
// Sorted, without duplicates.
func TransparentPorts(rules []Rule) []uint16 {
	seen := map[uint16]bool{}
	for _, r := range rules {
		if r.IP.IsValid() {
			continue
		}
		ports := r.Ports
		if ports == nil {
			ports = portsDefault
		}
		for _, p := range ports {
			seen[p] = true
		}
	}
	out := make([]uint16, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// ListsName reports whether some name rule (exact or wildcard, on any
// port) matches the canonical name, and whether one names it exactly.
func ListsName(rules []Rule, name string) (listed, exact bool) {
	for _, r := range rules {
		switch {
		case r.IP.IsValid():
		case r.Wildcard:
			if len(name) > len(r.Name) && name[len(name)-len(r.Name)-1:] == "."+r.Name {
				listed = true
			}
		case r.Name == name:
			return true, true
		}
	}
	return listed, false
}

// OpaquePort reports whether a rule for the canonical name allows
// traffic that is neither TLS nor HTTP on port (so carries no name the
// proxy could check) to the name's transparent address: only a rule that
// names that port alone ("git.example.com:22") or any port
// ("git.example.com:*") does; a bare entry's 80 and 443 need a TLS SNI or
// HTTP Host that names the host.
func OpaquePort(rules []Rule, name string, port uint16) bool {
	for _, r := range rules {
		if ok, _ := ListsName([]Rule{r}, name); !ok {
			continue
		}
		if r.Ports == nil || (len(r.Ports) == 1 && r.Ports[0] == port) {
			return true
		}
	}
	return false
}
