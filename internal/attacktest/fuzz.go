package attacktest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCase is the fixed tree the fuzz targets run in: symlinks in, out,
// dangling, looping, into /proc, into a read-only allowed root
// ($OUT/ro) and into the prefix sibling, plus a denied .env.
var FuzzCase = Case{
	Name: "fuzz",
	Tree: []string{
		"f=IN", ".env=KEY", "sub/x=SX", "sub/inner/", "sub/deep/er/",
		"link => sub/inner", "in => f", "inabs => $ROOT/sub",
		"out => $OUT", "outabs => $OUT/secret", "outrel => ../out/secret",
		"dang => $OUT/new", "dangin => newf", "loop => loop", "pair1 => pair2", "pair2 => pair1",
		"proc => /proc/self/root", "fd => /proc/self/fd/$OUTFD", "ro => $OUT/ro", "evil => $ROOT-evil",
		"up => ..", "sub/deep/er/climb => ../../../..", "envlink => .env",
	},
	Outside: []string{"secret=OUT", "ro/r=R", "ro/sub/", "d/"},
	Evil:    []string{"x=EVIL"},
	Policy: Policy{
		Allowed: []Allowed{{Path: "$OUT/ro", Mode: "ro"}},
		Deny:    []string{".env"},
	},
}

// SeedInputs returns the inputs of every case in the corpus files, with
// placeholders substituted for env, for f.Add.
func SeedInputs(t testing.TB, e *Env, files ...string) []string {
	var in []string
	for _, file := range files {
		for _, c := range Load(t, file) {
			in = append(in, e.Input(t, &c))
			if c.Input2 != "" {
				in = append(in, e.Sub(c.Input2))
			}
		}
	}
	return in
}

// Within reports whether p is dir or below it, comparing whole
// components (never a string prefix).
func Within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && filepath.IsAbs(p)
}

// FDPath returns the kernel's path of an open file (readlink of
// /proc/self/fd/N).
func FDPath(t testing.TB, f *os.File) string {
	t.Helper()
	p, err := os.Readlink("/proc/self/fd/" + itoa(int(f.Fd())))
	if err != nil {
		t.Fatalf("readlink /proc/self/fd: %v", err)
	}
	return p
}
