package allowlist

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseAllow feeds arbitrary --allow-domain entries (and a request
// host) to the parser. Properties:
//   - ParseAllow never panics; a refusal wraps ErrBadAllowEntry;
//   - an accepted entry round-trips: ParseAllow(rule.String()) is the
//     same rule;
//   - a name rule is canonical (lower-case ASCII, no empty label, no
//     trailing dot, not all digits and dots) and a wildcard covers at
//     least two labels ("*.com" is refused);
//   - the rule matches only what it says: its own name (exact) or a
//     subdomain of its suffix (wildcard, never the apex), on one of its
//     ports; the request host, when it parses, is allowed only then;
//   - an IP rule never allows a name, a name rule never an IP.
func FuzzParseAllow(f *testing.F) {
	for _, s := range []string{
		"registry.npmjs.org", "registry.npmjs.org:8443", "x.example:*", "*.Example.com",
		"*.example.co.uk", "bücher.example", "192.0.2.7", "[2001:db8::1]:22", "2001:db8::1",
		"::ffff:192.0.2.7", "*.com", "a.*.example.com", "127.1", "0x7f.1", "fe80::1%eth0",
		"example.com:0", "*.", "a..b", "EXAMPLE.com.", "[::1]", "xn--bcher-kva.example",
	} {
		f.Add(s, "sub."+strings.TrimPrefix(s, "*."), uint16(443))
	}
	f.Add("registry.npmjs.org", "registry.npmjs.org.evil.com", uint16(443))
	f.Add("*.usercontent.example", "usercontent.example", uint16(80))
	f.Fuzz(func(t *testing.T, entry, host string, port uint16) {
		rules, err := ParseAllow([]string{entry})
		if err != nil {
			if !errors.Is(err, ErrBadAllowEntry) {
				t.Fatalf("ParseAllow(%q): error %v does not wrap ErrBadAllowEntry", entry, err)
			}
			return
		}
		if len(rules) != 1 {
			t.Fatalf("ParseAllow(%q) = %d rules", entry, len(rules))
		}
		r := rules[0]
		again, err := ParseAllow([]string{r.String()})
		if err != nil || len(again) != 1 || !sameRule(again[0], r) {
			t.Fatalf("%q parsed as %#v, whose String %q parses as %#v, %v", entry, r, r.String(), again, err)
		}
		if r.IP.IsValid() == (r.Name != "") {
			t.Fatalf("%q: rule %#v has both or neither of Name and IP", entry, r)
		}
		if r.IP.IsValid() && (r.IP.Is4In6() || r.IP.Zone() != "" || r.Wildcard) {
			t.Fatalf("%q: IP rule %#v not canonical", entry, r)
		}
		if n := r.Name; n != "" {
			if n != strings.ToLower(n) || strings.HasSuffix(n, ".") || strings.HasPrefix(n, ".") ||
				strings.Contains(n, "..") || strings.Trim(n, "0123456789.") == "" || strings.ContainsAny(n, "* _") {
				t.Fatalf("%q: name %q not canonical", entry, n)
			}
			for _, c := range n {
				if c > 0x7e || c < 0x21 {
					t.Fatalf("%q: name %q not ASCII", entry, n)
				}
			}
			if r.Wildcard && !strings.Contains(n, ".") {
				t.Fatalf("%q: wildcard over a single label %q", entry, n)
			}
		}
		if r.Ports != nil && len(r.Ports) == 0 {
			t.Fatalf("%q: empty port list allows nothing; nil is any", entry)
		}
		for _, p := range r.Ports {
			if p == 0 {
				t.Fatalf("%q: port 0 in %v", entry, r.Ports)
			}
		}

		// The rule's own destinations.
		if port != 0 {
			var own Target
			switch {
			case r.IP.IsValid():
				own = Target{IP: r.IP, Port: port}
			case r.Wildcard:
				own = Target{Name: "sub." + r.Name, Port: port}
			default:
				own = Target{Name: r.Name, Port: port}
			}
			allowed, exact := Match(rules, own)
			if allowed != r.allowsPort(port) || (allowed && exact == r.Wildcard) {
				t.Fatalf("%q: Match(%+v) = %v, %v for rule %#v", entry, own, allowed, exact, r)
			}
			if r.Wildcard {
				if apex, _ := Match(rules, Target{Name: r.Name, Port: port}); apex {
					t.Fatalf("%q: wildcard %#v allows its apex", entry, r)
				}
			}
		}

		// An arbitrary request: allowed only by what the rule says.
		tg, err := ParseTarget(host, port)
		if err != nil {
			return
		}
		allowed, exact := Match(rules, tg)
		want := r.allowsPort(tg.Port)
		switch {
		case tg.IP.IsValid():
			want = want && r.IP == tg.IP
		case r.IP.IsValid():
			want = false
		case r.Wildcard:
			want = want && strings.HasSuffix(tg.Name, "."+r.Name)
		default:
			want = want && tg.Name == r.Name
		}
		if allowed != want || (allowed && exact == r.Wildcard) {
			t.Fatalf("%q: Match(%q → %+v) = %v, %v; the rule %#v says %v", entry, host, tg, allowed, exact, r, want)
		}
	})
}

// sameRule compares two rules, treating the default port list by value.
func sameRule(a, b Rule) bool {
	if a.Name != b.Name || a.Wildcard != b.Wildcard || a.Public != b.Public || a.IP != b.IP || (a.Ports == nil) != (b.Ports == nil) ||
		len(a.Ports) != len(b.Ports) {
		return false
	}
	for i := range a.Ports {
		if a.Ports[i] != b.Ports[i] {
			return false
		}
	}
	return true
}
