package nsview

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompileMatchesQuadratic: compile (sets, one walk up per path) plans
// exactly what the list-scanning version it replaced planned, on random
// views over a small tree where masks, read-only paths and writable roots
// nest in every way (below one another, equal, under /tmp, duplicated).
// Shown able to fail: dropping the seen-set early stop's condition or the
// read-only ancestor check in pins makes it red.
func TestCompileMatchesQuadratic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	comps := []string{"a", "b", "tmp", "c"}
	randPath := func() string {
		n := 1 + rng.IntN(5)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = comps[rng.IntN(len(comps))]
		}
		return "/" + strings.Join(parts, "/")
	}
	some := func(max int) []string {
		out := make([]string, rng.IntN(max+1))
		for i := range out {
			out[i] = randPath()
		}
		return out
	}
	for i := range 20_000 {
		v := New().Writable(some(3)...).ReadOnly(some(3)...).Mask(some(12)...)
		if rng.IntN(2) == 0 {
			v = v.PrivateTmp()
		}
		want, werr := v.compileQuadratic()
		got, gerr := v.compile()
		require.Equal(t, werr, gerr, "case %d: %+v", i, v)
		require.Equal(t, want, got, "case %d: %+v", i, v)
	}
}

// compileQuadratic is compile as it was before BenchmarkMasks (each
// "below one of those" a scan of a list): the reference of
// TestCompileMatchesQuadratic.
func (v View) compileQuadratic() (plan, error) {
	var p plan
	byDepth := func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	}
	ws := slices.Clone(v.writable)
	for _, w := range ws {
		if err := checkPath("writable", w); err != nil {
			return plan{}, err
		}
		if v.privateTmp && slices.Contains(privateDirs, w) {
			return plan{}, &fs.PathError{Op: "writable", Path: w, Err: fmt.Errorf("%w: conflicts with PrivateTmp", ErrInvalidPath)}
		}
	}
	slices.SortFunc(ws, byDepth)
	ws = slices.Compact(ws)
	for _, w := range ws {
		if v.privateTmp && slices.ContainsFunc(privateDirs, func(d string) bool { return under(w, d) }) {
			p.late = append(p.late, w)
		} else {
			p.early = append(p.early, w)
		}
	}
	ros := slices.Clone(v.readOnly)
	for _, r := range ros {
		if err := checkPath("read-only", r); err != nil {
			return plan{}, err
		}
	}
	slices.SortFunc(ros, byDepth)
	ros = slices.Compact(ros)
	for _, r := range ros {
		hidden := v.privateTmp && slices.ContainsFunc(privateDirs, func(d string) bool { return under(r, d) })
		if hidden && !slices.ContainsFunc(p.late, func(w string) bool { return under(r, w) }) {
			p.ndrops++
			continue
		}
		p.ro = append(p.ro, r)
	}
	ms := slices.Clone(v.masks)
	for _, m := range ms {
		if err := checkPath("mask", m); err != nil {
			return plan{}, err
		}
	}
	slices.SortFunc(ms, byDepth)
	ms = slices.Compact(ms)
	for _, m := range ms {
		hidden := v.privateTmp && slices.ContainsFunc(privateDirs, func(d string) bool { return under(m, d) })
		if hidden && !slices.ContainsFunc(p.late, func(w string) bool { return under(m, w) }) {
			p.ndrops++
			continue
		}
		// Below another mask: that one can only be a directory, now
		// empty, so there is nothing left to cover.
		if slices.ContainsFunc(p.masks, func(o string) bool { return under(m, o) }) {
			p.ndrops++
			continue
		}
		p.masks = append(p.masks, m)
	}
	p.pins = pinsQuadratic(ws, p.ro, p.masks)
	if v.privateTmp {
		p.tmpfs = privateDirs
		if v.shm != "" {
			if err := checkPath("shared-memory", v.shm); err != nil {
				return plan{}, err
			}
			p.tmpfs, p.shm = []string{"/tmp"}, v.shm
		}
	}
	p.netns = v.noNetwork
	return p, nil
}

// pinsQuadratic is pins before BenchmarkMasks.
func pinsQuadratic(writable, ro, masks []string) []string {
	var out []string
	for _, m := range append(slices.Clone(ro), masks...) {
		root := ""
		for _, w := range writable {
			if w != m && under(m, w) && len(w) > len(root) {
				root = w
			}
		}
		if root == "" {
			continue
		}
		for d := filepath.Dir(m); d != root && under(d, root); d = filepath.Dir(d) {
			mounted := slices.Contains(writable, d) || slices.Contains(masks, d) ||
				slices.ContainsFunc(ro, func(r string) bool { return under(d, r) })
			if !mounted {
				out = append(out, d)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		if d := strings.Count(a, "/") - strings.Count(b, "/"); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}
