package learn

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/jail"
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

// BenchmarkClassify: one refused read outside every root classified
// against a policy built by cliopts with --deny-secrets and
// --protect-agent-config: the run's Workspace asked, then a probe policy
// built with the file's directory as a root (what each file-system
// refusal of a --learn run costs).
func BenchmarkClassify(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	ws, out := filepath.Join(root, "ws"), filepath.Join(root, "out")
	for _, d := range []string{ws, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	f := filepath.Join(out, "input")
	if err := os.WriteFile(f, []byte("data\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	o := &cliopts.Options{Workspace: ws, DenySecrets: true, ProtectAgentConfig: true}
	pw, err := o.Policy()
	if err != nil {
		b.Fatal(err)
	}
	defer pw.Close()
	c := PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) { return o.Policy(jail.WithAllowed(dir, jail.ReadOnly)) }}
	b.ReportAllocs()
	for b.Loop() {
		if bd, nl := c.Classify(f, Read); bd != "" || nl != "" {
			b.Fatal(bd, nl)
		}
	}
}

// BenchmarkRepositoryBelow: the search of a directory grant for a
// repository below it, over 99,001 entries (1,000 directories of 98
// files, just under maxRepoScan): the cost of a create grant of a large
// directory.
func BenchmarkRepositoryBelow(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a 99,001-entry tree")
	}
	root := b.TempDir()
	for d := range 1_000 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 98 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if why := repositoryBelow(root); why != "" {
			b.Fatal(why)
		}
	}
}
