package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkUpdate: one learn step of a large run: 500 refused reads of
// existing files and 50 refused creates merged into a config that already
// lists 500 entries (every path lstat'd and realpath'd, the text scanned
// and decoded twice).
func BenchmarkUpdate(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	var have strings.Builder
	have.WriteString("ro = [\n")
	var refs []Refusal
	for i := range 500 {
		p := filepath.Join(root, fmt.Sprintf("f%03d", i))
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&have, "  %s, # mine\n", Quote(filepath.Join(root, fmt.Sprintf("old%03d", i))))
		refs = append(refs, Refusal{Path: p, Right: Read})
	}
	have.WriteString("]\n")
	for i := range 50 {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i))
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
		refs = append(refs, Refusal{Path: filepath.Join(d, "new.o"), Right: Create})
	}
	text := []byte(have.String())
	b.ReportAllocs()
	for b.Loop() {
		if _, p, err := Update(text, root, refs); err != nil || len(p.Add) != 550 {
			b.Fatal(err, len(p.Add))
		}
	}
}
