package openat_test

import (
	"os"
	"slices"
	"testing"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

// FuzzRootOpen: on a fixed tree with symlinks in and out
// (attacktest.FuzzCase), whatever Root.Open (or OpenFile with O_CREAT when
// create is set) opens is, by the kernel's own account
// (readlink /proc/self/fd/N), inside the root; nothing is ever created in
// $OUT or $ROOT-evil; nothing panics. The mechanism alternates with the
// input's length so both openat2 and the O_NOFOLLOW walk are fuzzed.
// Seeds: every input of testdata/attacks.toml, plus
// testdata/fuzz/FuzzRootOpen.
func FuzzRootOpen(f *testing.F) {
	c := attacktest.FuzzCase
	e := attacktest.Build(f, &c)
	r, err := openat.OpenRoot(e.Root)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { r.Close() })
	for _, in := range attacktest.SeedInputs(f, e, attacksFile) {
		f.Add(in, false)
		f.Add(in, true)
	}
	list := func(dir string) []string {
		ents, err := os.ReadDir(dir)
		if err != nil {
			f.Fatal(err)
		}
		var n []string
		for _, d := range ents {
			n = append(n, d.Name())
		}
		return n
	}
	outBefore, evilBefore := list(e.Out), list(e.Evil)
	f.Fuzz(func(t *testing.T, name string, create bool) {
		if len(name)%2 == 1 {
			defer openat.SetForceFallback(true)()
		}
		var fl *os.File
		var err error
		if create {
			fl, err = r.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0o644)
		} else {
			fl, err = r.Open(name)
		}
		if err == nil {
			real := attacktest.FDPath(t, fl)
			fl.Close()
			if !attacktest.Within(real, e.Root) {
				t.Fatalf("%s: Open(%q, create=%v) opened %q, outside the root", openat.Mechanism(), name, create, real)
			}
		} else if fl != nil {
			t.Fatalf("Open(%q) returned a file and %v", name, err)
		}
		if create {
			if got := list(e.Out); !slices.Equal(got, outBefore) {
				t.Fatalf("Open(%q, O_CREAT) changed $OUT: %v", name, got)
			}
			if got := list(e.Evil); !slices.Equal(got, evilBefore) {
				t.Fatalf("Open(%q, O_CREAT) changed $ROOT-evil: %v", name, got)
			}
		}
	})
}
