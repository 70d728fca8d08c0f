package gitignore

import (
	"encoding/binary"
	"strings"
)

// tail reports whether r is a tail rule: a name alone ("*.pem": no "/"
// but a trailing one), or "**/" followed by components none of which is
// "**" ("**/.config/gh/hosts.yml"). Whether a tail rule of n components
// matches a path is decided by the path's last n components alone (and
// whether it has that many); TailState is their state, State the others'.
func (r *rule) tail() bool {
	if !r.anchored {
		return true
	}
	if r.comps[0].kind != compDoubleStar || len(r.comps) < 2 {
		return false
	}
	for _, c := range r.comps[1:] {
		if c.kind == compDoubleStar {
			return false
		}
	}
	return true
}

// TailState appends to buf the state of the path parts for m's tail
// rules (tail) of several components, and returns it: for each such
// rule "**/c1/.../cL", which j < L have parts ending in c1..cj (a match
// begun), once with parts as they are and once with at most one of them
// spelled as one of its alts (an editor copy's original: .kube.bak for
// .kube). Two paths with the same state are told apart by no tail rule
// at any path below them (whose rest is the same): the rule's match there
// depends on nothing else.
func (m *Matcher) TailState(buf []byte, parts []string, alts func(string) []string) []byte {
	if m == nil {
		return buf
	}
	var b byte
	n := 0
	bit := func(on bool) {
		if on {
			b |= 1 << n
		}
		if n++; n == 8 {
			buf, b, n = append(buf, b), 0, 0
		}
	}
	for i := range m.rules {
		r := &m.rules[i]
		if !r.tail() || !r.anchored {
			continue
		}
		cs := r.comps[1:]
		for j := 1; j < len(cs); j++ {
			exact, one := tailBegun(cs[:j], parts, alts)
			bit(exact)
			bit(one)
		}
	}
	if n > 0 {
		buf = append(buf, b)
	}
	return buf
}

// tailBegun reports whether parts end in components matching cs, as they
// are (exact) and with at most one spelled as one of its alts (one).
func tailBegun(cs []compPattern, parts []string, alts func(string) []string) (exact, one bool) {
	if len(parts) < len(cs) {
		return false, false
	}
	parts = parts[len(parts)-len(cs):]
	misses := 0
	for k, c := range cs {
		if c.match(parts[k]) {
			continue
		}
		if misses++; misses > 1 || alts == nil {
			return false, false
		}
		ok := false
		for _, a := range alts(parts[k]) {
			if c.match(a) {
				ok = true
				break
			}
		}
		if !ok {
			return false, false
		}
	}
	return misses == 0, true
}

// State appends to buf the state of the path parts for m's rules that
// are not tail rules (anchored ones, and those with "**" inside), and
// returns it: for each, the positions among its components that parts
// can have reached, once with parts as they are and once with at most one
// of them spelled as one of its alts (an editor copy's original). Two
// paths with the same State and TailState are told apart by no rule of m
// at any path below them with the same rest. A rule of more than 63
// components is given by parts themselves.
func (m *Matcher) State(buf []byte, parts []string, alts func(string) []string) []byte {
	if m == nil {
		return buf
	}
	for i, c := range m.base {
		if i == len(parts) {
			return append(buf, byte(i), 0xfe) // above the base, this deep
		}
		if parts[i] != c {
			return append(buf, 0xff) // outside the base: no rule applies
		}
	}
	parts = parts[len(m.base):]
	for i := range m.rules {
		r := &m.rules[i]
		if r.tail() {
			continue
		}
		if len(r.comps) > 63 {
			buf = append(buf, strings.Join(parts, "/")...)
			buf = append(buf, 0)
			continue
		}
		s0, s1 := uint64(1), uint64(0)
		for _, p := range parts {
			n1 := advance(r.comps, s1, p)
			if alts != nil {
				for _, a := range alts(p) {
					n1 |= advance(r.comps, s0, a)
				}
			}
			s0, s1 = advance(r.comps, s0, p), n1
		}
		buf = binary.LittleEndian.AppendUint64(buf, s0)
		buf = binary.LittleEndian.AppendUint64(buf, s1)
	}
	return buf
}

// advance is one step of matchComps as an automaton: from the positions
// s (bit i: the first i components matched), those after the component
// name. "**" consumes it and stays or ends, or (not the last component)
// consumes nothing.
func advance(cs []compPattern, s uint64, name string) uint64 {
	n := len(cs)
	// "**" that is not the last may match no component.
	for i := 0; i < n-1; i++ {
		if s&(1<<i) != 0 && cs[i].kind == compDoubleStar {
			s |= 1 << (i + 1)
		}
	}
	var out uint64
	for i := 0; i < n; i++ {
		if s&(1<<i) == 0 {
			continue
		}
		switch {
		case cs[i].kind == compDoubleStar:
			out |= 1<<i | 1<<(i+1)
		case cs[i].match(name):
			out |= 1 << (i + 1)
		}
	}
	return out
}
