package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

func benchKit(b *testing.B) (*tools.Toolkit, string) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	body := strings.Repeat("some ordinary line of source code here\n", 1000)
	for d := range 10 {
		for f := range 20 {
			p := filepath.Join(root, fmt.Sprintf("d%d/f%d.go", d, f))
			require.NoError(b, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(b, os.WriteFile(p, []byte(body), 0o644))
		}
	}
	tr := jail.NewReadTracker()
	ws, err := jail.New(root, jail.WithReadTracker(tr))
	require.NoError(b, err)
	b.Cleanup(func() { ws.Close() })
	return &tools.Toolkit{WS: ws, Tracker: tr}, root
}

// BenchmarkReadFile: a 1000-line (39 KB) file, numbered.
func BenchmarkReadFile(b *testing.B) {
	k, _ := benchKit(b)
	for b.Loop() {
		if _, err := k.ReadFile(tools.ReadFileArgs{Path: "d3/f7.go"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallReadFile: BenchmarkReadFile's call through Toolkit.Call,
// as landjail-mcp makes it: the arguments decoded, the call on a
// goroutine of its own, run on a fresh thread holding CAP_CHOWN alone
// (threadcaps, red team round 27, R27c-1). The difference with
// BenchmarkReadFile is what a call costs beyond the tool.
func BenchmarkCallReadFile(b *testing.B) {
	k, _ := benchKit(b)
	ctx := context.Background()
	args := []byte(`{"path":"d3/f7.go"}`)
	for b.Loop() {
		if _, err := k.Call(ctx, tools.ToolReadFile, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGrep: 200 files, 7.8 MB, one match per file.
func BenchmarkGrep(b *testing.B) {
	k, root := benchKit(b)
	for d := range 10 {
		for f := range 20 {
			p := filepath.Join(root, fmt.Sprintf("d%d/f%d.go", d, f))
			data, _ := os.ReadFile(p)
			require.NoError(b, os.WriteFile(p, append(data, "needle\n"...), 0o644))
		}
	}
	for b.Loop() {
		r, err := k.Grep(tools.GrepArgs{Pattern: "needle"})
		if err != nil || len(r.Matches) != 200 {
			b.Fatal(err, r)
		}
	}
}

// BenchmarkGlob: "**/*.go" over 200 files in 10 directories.
func BenchmarkGlob(b *testing.B) {
	k, _ := benchKit(b)
	for b.Loop() {
		if r, err := k.Glob(tools.GlobArgs{Pattern: "**/*.go"}); err != nil || len(r.Matches) != 200 {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashTrue: one confined "bash -c true".
func BenchmarkBashTrue(b *testing.B) {
	k, _ := benchKit(b)
	rs, err := landlock.Compile(k.WS, landlock.Options{System: true})
	require.NoError(b, err)
	defer rs.Close()
	k.Ruleset = rs
	for b.Loop() {
		if r, err := k.Bash(context.Background(), tools.BashArgs{Command: "true"}); err != nil || r.ExitCode != 0 {
			b.Fatal(err)
		}
	}
}
