package jail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/landjail/landjail/internal/attacktest"
)

// FuzzResolve: on a fixed tree with symlinks in and out (attacktest.FuzzCase:
// workspace + read-only $OUT/ro, .env denied), whatever Resolve accepts is
// absolute, clean, inside the workspace or $OUT/ro on whole components,
// not denied, and, when it exists, already canonical (EvalSymlinks leaves
// it unchanged). Whatever Workspace.Open opens is, by the kernel's own
// account (/proc/self/fd), inside too. Nothing panics. Seeds: every input
// of testdata/attacks.toml and seeds.toml, plus testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	c := attacktest.FuzzCase
	e := attacktest.Build(f, &c)
	w := attacktest.NewWorkspace(f, e, &c)
	ro := filepath.Join(e.Out, "ro")
	for _, in := range attacktest.SeedInputs(f, e, attacksFile, seedsFile) {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, p string) {
		inside := func(q string) bool { return attacktest.Within(q, e.Root) || attacktest.Within(q, ro) }
		got, err := w.Resolve(p)
		if err == nil {
			if !inside(got) {
				t.Fatalf("Resolve(%q) = %q: outside every allowed root", p, got)
			}
			if filepath.Clean(got) != got {
				t.Fatalf("Resolve(%q) = %q: not clean", p, got)
			}
			if filepath.Base(got) == ".env" {
				t.Fatalf("Resolve(%q) = %q: denied name accepted", p, got)
			}
			if _, lerr := os.Lstat(got); lerr == nil {
				if real, rerr := filepath.EvalSymlinks(got); rerr == nil && real != got {
					t.Fatalf("Resolve(%q) = %q, not canonical: it is %q", p, got, real)
				}
			}
		} else if got != "" {
			t.Fatalf("Resolve(%q) returned %q with error %v", p, got, err)
		}
		if fl, err := w.Open(p); err == nil {
			real := attacktest.FDPath(t, fl)
			fl.Close()
			if !inside(real) {
				t.Fatalf("Open(%q) opened %q: outside every allowed root", p, real)
			}
			if filepath.Base(real) == ".env" {
				t.Fatalf("Open(%q) opened denied %q", p, real)
			}
		}
	})
}
