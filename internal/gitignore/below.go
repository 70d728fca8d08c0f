package gitignore

// Open reports whether a rule of m that is not a tail rule can
// match parts followed by one or more components (parts relative to the
// top, as Match takes them): an anchored rule whose components parts
// begin, or one with a "**" that parts reach. alts gives the other
// spellings a component may be matched by (nil: none): a component
// matches a rule's component when it or one of its alts does. A negation
// counts as a match (it changes the verdict too).
func (m *Matcher) Open(parts []string, alts func(string) []string) bool {
	if m.Empty() {
		return false
	}
	for i, c := range m.base {
		if i == len(parts) {
			return true // above the base: any rule may be below
		}
		if parts[i] != c {
			return false
		}
	}
	parts = parts[len(m.base):]
	for i := range m.rules {
		if r := &m.rules[i]; !r.tail() && openComps(r.comps, parts, alts) {
			return true
		}
	}
	return false
}

// tail reports whether r is a tail rule: a name alone ("*.pem": no "/"
// but a trailing one), or "**/" followed by components none of which is
// "**" ("**/.config/gh/hosts.yml"). Whether a tail rule of n components
// matches a path is decided by the path's last n components alone (and
// whether it has that many); TailState is their state, Open the others'.
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

// openComps reports whether pat can match parts followed by at least one
// more component.
func openComps(pat []compPattern, parts []string, alts func(string) []string) bool {
	if len(parts) == 0 {
		return len(pat) > 0 // a non-empty rest matches some components
	}
	if len(pat) == 0 {
		return false
	}
	if pat[0].kind == compDoubleStar {
		if len(pat) == 1 {
			return true
		}
		return openComps(pat[1:], parts, alts) || openComps(pat, parts[1:], alts)
	}
	if !pat[0].match(parts[0]) {
		ok := false
		if alts != nil {
			for _, a := range alts(parts[0]) {
				if pat[0].match(a) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	return openComps(pat[1:], parts[1:], alts)
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
