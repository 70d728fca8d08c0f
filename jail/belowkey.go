package jail

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/landjail/landjail/internal/gitignore"
)

// BelowKey returns a key of the absolute path v for a walk of what is
// below it by v's name (a directory link's target walked by the name
// through the link): when BelowKey(v) == BelowKey(u), every path v/rest
// gets the same Narrowing as u/rest (with byName, the same
// NameNarrowing), so a walk made by one name need not be made by the
// other. Keys are equal when the two paths have the same narrowing
// themselves, lie in the same root, and have begun the same matches of
// every pattern from every place a pattern is matched from: for the
// patterns a path's last components decide ("**/.kube/config" after
// .../.kube; "*.pem" after anything) by those components, for the others
// (anchored "config/*/secret.txt", with a "**" inside, absolute ones) by
// the positions reached in them, and for a --read-only or protected path
// below v by what is left of it. An editor copy's original spelling
// (.kube.bak of .kube) counts as the name it spells, once on a path, as
// the deny patterns match it. There are finitely many keys, so a walk
// keyed by them ends on any loop. Strings only, no file access. For
// landlock's carve walk of directory links (red team round 19, R19-1,
// R19-2: a decoy planted beside the user's link to the same directory
// spared the user's name; round 10, R10-3: a loop's names grow without
// end; round 20, R20a-1, R20a-3: a bound on a loop's turns was cut by a
// decoy, or let planted links grow names for forty minutes).
func (w *Workspace) BelowKey(v string, byName bool) string {
	v = filepath.Clean(v)
	if byName {
		return w.BelowKeyOf(v, w.NameNarrowing(v))
	}
	return w.BelowKeyOf(v, w.Narrowing(v))
}

// BelowKeyOf is BelowKey for a walk that knows v's narrowing n already:
// Narrowing(v), or for a walk by name NameNarrowing(v), as a walk that
// matches each entry at its own level (EntryNarrowing,
// NameEntryNarrowing) and carries what its parents imply (a read-only
// parent; it never enters a denied one) computes it. The key is as
// sound as n is v's narrowing in what decides a walk below it (the
// denied and read-only bits): BelowKey matched a deep v whole, each of
// its parents again, and that match was nearly all of a walk through
// planted self-links (red team round 21, R21-1: 91 links named like the
// secrets preset's components took a run 256 s to start). Strings only.
func (w *Workspace) BelowKeyOf(v string, n Narrowing) string {
	v = filepath.Clean(v)
	bases := []string{"/"}
	inner := "/"
	for i := range w.roots {
		if r := w.roots[i].Path; within(v, r) {
			bases = append(bases, r)
			if len(r) > len(inner) {
				inner = r
			}
		}
	}
	// Every pattern by the match v has begun, from each base a pattern
	// is matched from: the tail patterns by what v's last components
	// begin (TailState: l17 and l18, or a loop's names, begin none), the
	// others by the positions v reaches in them (State: after config/
	// in config/**/secret.txt, however many names follow).
	// Each component's original spellings once: every base and matcher
	// asks for them again.
	origs := map[string][]string{}
	originals := func(c string) []string {
		o, ok := origs[c]
		if !ok {
			o = editorOriginals(c)
			origs[c] = o
		}
		return o
	}
	k := fmt.Appendf(nil, "%d\x00%s", n, inner)
	for _, b := range bases {
		parts := splitRel(v, b)
		for _, d := range []*denyMatcher{w.deny, w.ro, w.agentPat, w.keys} {
			if d == nil {
				continue
			}
			for _, m := range []*gitignore.Matcher{d.all, d.abs, d.spans} {
				k = append(k, 0)
				k = m.TailState(k, parts, originals)
				k = m.State(k, parts, originals)
			}
		}
	}
	for _, d := range []*denyMatcher{w.deny, w.ro, w.agentPat, w.keys} {
		if d == nil || inner == "/" {
			continue
		}
		for _, a := range d.aliases[inner] {
			// The spans are matched below a root's other spellings
			// too (spansMatch).
			k = append(k, 0)
			k = d.spans.TailState(k, splitRel(a+v[len(inner):], "/"), originals)
		}
	}
	// A --read-only path or protected path below v, by what is left of
	// it.
	for _, set := range [][]string{w.roPaths, w.agent} {
		for _, p := range set {
			if rest, ok := strings.CutPrefix(p, v+"/"); ok || v == "/" {
				if v == "/" {
					rest = p
				}
				k = append(k, 1)
				k = append(k, rest...)
			}
		}
	}
	return string(k)
}

// splitRel returns the components of v below base (nil for base itself).
func splitRel(v, base string) []string {
	rel := strings.TrimPrefix(strings.TrimPrefix(v, base), "/")
	if rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}

// CopySpellings returns the names an editor's or a backup tool's copy
// named c may be a copy of (.kube for .kube.bak, .kube~, #.kube#; a copy
// of a copy once more: .env for .env.bak~), as the deny patterns match a
// copy by its original's name (red team rounds 17 and 18, R17a-9,
// R18a-3); none for another name. For landlock's carve walk, which leads
// a pattern through a directory link by such a name too (red team round
// 20, R20a-5: a .kube.bak -> dotfiles/kube-old link). Strings only.
func CopySpellings(c string) []string { return copySpellings(c) }

// copySpellings returns the names an editor's copy named c may be a copy
// of (editorOriginals, twice: a copy of a copy).
func copySpellings(c string) []string {
	var out []string
	for _, o := range editorOriginals(c) {
		out = append(out, o)
		out = append(out, editorOriginals(o)...)
	}
	return out
}
