package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// env is a workspace with a tracker and a sibling directory outside it.
type env struct {
	root, out string
	ws        *jail.Workspace
	tr        *jail.ReadTracker
	k         *tools.Toolkit
}

// newEnv builds the workspace from a tree spec: "d/" a directory,
// "f=text" a file, "a => target" a symlink ($OUT is the outside dir).
func newEnv(t *testing.T, tree []string, opts ...jail.Option) *env {
	t.Helper()
	base := t.TempDir()
	base, err := filepath.EvalSymlinks(base)
	require.NoError(t, err)
	e := &env{root: filepath.Join(base, "ws"), out: filepath.Join(base, "out")}
	require.NoError(t, os.MkdirAll(e.root, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(e.out, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.out, "secret"), []byte("SECRET match\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.out, "sub", "deep.go"), []byte("SECRET match\n"), 0o644))
	for _, l := range tree {
		l = strings.ReplaceAll(l, "$OUT", e.out)
		p := filepath.Join(e.root, l)
		switch {
		case strings.Contains(l, " => "):
			name, target, _ := strings.Cut(l, " => ")
			p = filepath.Join(e.root, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(target, p))
		case strings.HasSuffix(l, "/"):
			require.NoError(t, os.MkdirAll(p, 0o755))
		default:
			name, body, _ := strings.Cut(l, "=")
			p = filepath.Join(e.root, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		}
	}
	e.tr = jail.NewReadTracker()
	e.ws, err = jail.New(e.root, append([]jail.Option{jail.WithReadTracker(e.tr)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { e.ws.Close() })
	e.k = &tools.Toolkit{WS: e.ws, Tracker: e.tr}
	return e
}

func (e *env) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, name))
	require.NoError(t, err)
	return string(b)
}

// assertToolErr checks that err is a tools.Error wrapping want, whose
// message holds every hint.
func assertToolErr(t *testing.T, err error, want error, hints ...string) {
	t.Helper()
	var te *tools.Error
	if !assert.ErrorAs(t, err, &te) {
		return
	}
	assert.ErrorIs(t, err, want)
	for _, h := range hints {
		assert.Contains(t, err.Error(), h)
	}
}

func TestReadFile(t *testing.T) {
	var long strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	e := newEnv(t, []string{
		"a.txt=one\ntwo\r\nthree", "empty=", "long.txt=" + long.String(),
		"wide.txt=" + strings.Repeat("x", 50) + "\nshort\n",
		"bin=ab\x00cd", "dir/", "out => $OUT/secret",
	})
	k := e.k
	k.Limits = tools.Limits{ReadLines: 10, LineBytes: 20}

	r, err := k.ReadFile(tools.ReadFileArgs{Path: "a.txt"})
	require.NoError(t, err)
	assert.Equal(t, "     1\tone\n     2\ttwo\n     3\tthree\n", r.Content)
	assert.Equal(t, 3, r.TotalLines)
	assert.EqualValues(t, 14, r.Bytes)
	assert.False(t, r.Truncated)
	assert.Contains(t, r.String(), "lines 1-3 of 3, 14 bytes")

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "long.txt", Offset: 5, Limit: 3})
	require.NoError(t, err)
	assert.Equal(t, "     5\tline 5\n     6\tline 6\n     7\tline 7\n", r.Content)
	assert.True(t, r.Truncated)
	assert.Equal(t, 30, r.TotalLines)
	assert.Contains(t, r.String(), "offset=8")

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "long.txt"})
	require.NoError(t, err)
	assert.Equal(t, 10, r.LastLine, "the default limit is Limits.ReadLines")
	assert.True(t, r.Truncated)

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "long.txt", Offset: 99})
	require.NoError(t, err)
	assert.Contains(t, r.String(), "no line at that offset")

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "wide.txt"})
	require.NoError(t, err)
	assert.Equal(t, "     1\t"+strings.Repeat("x", 20)+" … [line cut: 30 more bytes]\n     2\tshort\n", r.Content)
	assert.Equal(t, 1, r.CutLines)

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "empty"})
	require.NoError(t, err)
	assert.Contains(t, r.String(), "is empty (0 bytes)")

	r, err = k.ReadFile(tools.ReadFileArgs{Path: "bin"})
	require.NoError(t, err)
	assert.True(t, r.Binary)
	assert.Empty(t, r.Content)
	assert.Equal(t, "[bin is a binary file (5 bytes); contents not shown]", r.String())

	_, err = k.ReadFile(tools.ReadFileArgs{Path: "dir"})
	assertToolErr(t, err, syscall.EISDIR, `read_file "dir"`, "list_directory")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "missing"})
	assertToolErr(t, err, os.ErrNotExist, "no such file")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "out"})
	assertToolErr(t, err, jail.ErrOutsideWorkspace, "outside the workspace", e.root)
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "a.txt", Offset: -1})
	assertToolErr(t, err, tools.ErrInvalidArgs)

	// A FIFO must not hang the call.
	require.NoError(t, syscall.Mkfifo(filepath.Join(e.root, "fifo"), 0o644))
	done := make(chan error, 1)
	go func() { _, err := k.ReadFile(tools.ReadFileArgs{Path: "fifo"}); done <- err }()
	select {
	case err := <-done:
		assertToolErr(t, err, tools.ErrNotRegular, "named pipe")
	case <-time.After(5 * time.Second):
		t.Fatal("read_file blocked on a FIFO")
	}
}

func TestReadFileOutputCap(t *testing.T) {
	e := newEnv(t, []string{"f=" + strings.Repeat("0123456789\n", 100)})
	e.k.Limits = tools.Limits{ReadBytes: 100}
	r, err := e.k.ReadFile(tools.ReadFileArgs{Path: "f"})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(r.Content), 100)
	assert.True(t, r.Truncated)
	assert.Equal(t, 5, r.LastLine) // 18 bytes per numbered line
}

func TestWriteFile(t *testing.T) {
	e := newEnv(t, []string{"old.txt=old\n", "link => $OUT/new"})
	k := e.k

	r, err := k.WriteFile(tools.WriteFileArgs{Path: "new/dir/f.txt", Content: "a\nb\nc"})
	require.NoError(t, err)
	assert.Equal(t, "Created new/dir/f.txt: 3 lines, 5 bytes", r.String())
	assert.Equal(t, "a\nb\nc", e.read(t, "new/dir/f.txt"))

	// Overwrite needs a read first, of the current version.
	_, err = k.WriteFile(tools.WriteFileArgs{Path: "old.txt", Content: "x"})
	assertToolErr(t, err, jail.ErrNotRead, "call read_file on it first")
	assert.Equal(t, "old\n", e.read(t, "old.txt"))
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "old.txt"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "old.txt"), []byte("changed behind\n"), 0o644))
	_, err = k.WriteFile(tools.WriteFileArgs{Path: "old.txt", Content: "x"})
	assertToolErr(t, err, jail.ErrStale, "changed on disk")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "old.txt"})
	require.NoError(t, err)
	r, err = k.WriteFile(tools.WriteFileArgs{Path: "old.txt", Content: "new\n"})
	require.NoError(t, err)
	assert.False(t, r.Created)
	assert.Equal(t, "new\n", e.read(t, "old.txt"))

	// Escapes: nothing is created outside, not even a parent directory.
	for _, p := range []string{"../out/x", e.out + "/x", "link", "../out/made/x"} {
		_, err = k.WriteFile(tools.WriteFileArgs{Path: p, Content: "pwned"})
		assertToolErr(t, err, jail.ErrOutsideWorkspace, "refused")
	}
	ents, err := os.ReadDir(e.out)
	require.NoError(t, err)
	assert.Len(t, ents, 2, "outside dir changed")
}

func TestEditFile(t *testing.T) {
	e := newEnv(t, []string{"f.go=package f\n\nfunc A() {}\nfunc B() {}\n// A\n"})
	k := e.k
	args := tools.EditFileArgs{Path: "f.go", OldString: "func B() {}", NewString: "func B() { return }"}

	_, err := k.EditFile(args)
	assertToolErr(t, err, jail.ErrNotRead, "read_file")
	_, err = k.ReadFile(tools.ReadFileArgs{Path: "f.go"})
	require.NoError(t, err)

	r, err := k.EditFile(args)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Replacements)
	assert.Equal(t, "package f\n\nfunc A() {}\nfunc B() { return }\n// A\n", e.read(t, "f.go"))
	assert.Contains(t, r.String(), "Replaced 1 occurrence in f.go")
	assert.Contains(t, r.Snippet, "     4\tfunc B() { return }\n")

	// edit_file's own write counts as the latest version: a second edit
	// needs no new read.
	_, err = k.EditFile(tools.EditFileArgs{Path: "f.go", OldString: "A", NewString: "Z"})
	assertToolErr(t, err, tools.ErrAmbiguous, "occurs 2 times", "replace_all")
	r, err = k.EditFile(tools.EditFileArgs{Path: "f.go", OldString: "A", NewString: "Z", ReplaceAll: true})
	require.NoError(t, err)
	assert.Equal(t, 2, r.Replacements)
	assert.Contains(t, r.String(), "Replaced 2 occurrences")

	_, err = k.EditFile(tools.EditFileArgs{Path: "f.go", OldString: "nope", NewString: "x"})
	assertToolErr(t, err, tools.ErrNoMatch)
	_, err = k.EditFile(tools.EditFileArgs{Path: "f.go", OldString: "", NewString: "x"})
	assertToolErr(t, err, tools.ErrInvalidArgs, "write_file")

	// Changed behind the model's back: stale, and the file is untouched.
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "f.go"), []byte("func Z() {}\n"), 0o644))
	_, err = k.EditFile(tools.EditFileArgs{Path: "f.go", OldString: "Z", NewString: "Y"})
	assertToolErr(t, err, jail.ErrStale, "read_file again")
	assert.Equal(t, "func Z() {}\n", e.read(t, "f.go"))

	_, err = k.EditFile(tools.EditFileArgs{Path: "../out/secret", OldString: "SECRET", NewString: "x"})
	assertToolErr(t, err, jail.ErrOutsideWorkspace)
	_, err = k.EditFile(tools.EditFileArgs{Path: "missing", OldString: "a", NewString: "b"})
	assertToolErr(t, err, os.ErrNotExist)
}

func TestListDirectory(t *testing.T) {
	e := newEnv(t, []string{"b.txt=12345", "a/", ".env=KEY", "out => $OUT", "c/"}, jail.WithDeny(".env"))
	r, err := e.k.ListDirectory(tools.ListDirectoryArgs{})
	require.NoError(t, err)
	assert.Equal(t, "d a/\nf b.txt (5 bytes)\nd c/\nl out@\n[.: 4 entries]", r.String())

	e.k.Limits.ListEntries = 2
	r, err = e.k.ListDirectory(tools.ListDirectoryArgs{Path: "."})
	require.NoError(t, err)
	assert.True(t, r.Truncated)
	assert.Contains(t, r.String(), "[.: 4 entries; only the first 2 shown]")

	for _, p := range []string{"out", "..", "/etc", "out/sub"} {
		_, err = e.k.ListDirectory(tools.ListDirectoryArgs{Path: p})
		assertToolErr(t, err, jail.ErrOutsideWorkspace)
	}
	_, err = e.k.ListDirectory(tools.ListDirectoryArgs{Path: "b.txt"})
	assertToolErr(t, err, syscall.ENOTDIR)
}

func TestGlob(t *testing.T) {
	e := newEnv(t, []string{
		"a.go=", "src/b.go=", "src/deep/c.go=", "src/x.txt=", "out => $OUT", "src/up => ..",
		".env=", "secrets/k.go=",
	}, jail.WithDeny(".env", "secrets/"))
	r, err := e.k.Glob(tools.GlobArgs{Pattern: "**/*.go"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go", "src/b.go", "src/deep/c.go"}, r.Matches,
		"out/sub/deep.go (symlink out), src/up/... (loop) and secrets/ must not appear")
	assert.Contains(t, r.String(), "3 matches")

	r, err = e.k.Glob(tools.GlobArgs{Pattern: "*", Path: "src"})
	require.NoError(t, err)
	assert.Equal(t, []string{"src/b.go", "src/deep/", "src/up", "src/x.txt"}, r.Matches)

	r, err = e.k.Glob(tools.GlobArgs{Pattern: "**"})
	require.NoError(t, err)
	for _, m := range r.Matches {
		assert.NotContains(t, m, "secret", "denied or outside entry listed")
		assert.NotContains(t, m, ".env")
	}

	e.k.Limits.GlobResults = 2
	r, err = e.k.Glob(tools.GlobArgs{Pattern: "**/*.go"})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 2)
	assert.True(t, r.Truncated)
	assert.Contains(t, r.String(), "truncated at 2 matches")

	for _, p := range []string{"out", "..", e.out} {
		_, err = e.k.Glob(tools.GlobArgs{Pattern: "*", Path: p})
		assertToolErr(t, err, jail.ErrOutsideWorkspace)
	}
	for _, pat := range []string{"../out/*", "/etc/*", "src/../../*", "[", ""} {
		_, err = e.k.Glob(tools.GlobArgs{Pattern: pat})
		assertToolErr(t, err, tools.ErrInvalidArgs)
	}
	// A literal symlink prefix is refused by the Workspace, not followed.
	r, err = e.k.Glob(tools.GlobArgs{Pattern: "out/*"})
	require.NoError(t, err)
	assert.Empty(t, r.Matches)
}

// TestGlobSkipsGitLikeGrep: glob and grep agree on git's internals. grep
// does not search .git directories; "**/*" listed every object and hook
// of them. A pattern naming .git, or .git as the path, still lists them;
// a file named .git (a worktree's pointer) is listed.
func TestGlobSkipsGitLikeGrep(t *testing.T) {
	e := newEnv(t, []string{
		"a.go=needle\n", ".git/HEAD=needle\n", ".git/hooks/pre-commit=needle\n",
		"sub/.git/config=needle\n", "sub/b.go=needle\n", "wt/.git=gitdir: x\n",
	})
	g, err := e.k.Grep(tools.GrepArgs{Pattern: "needle"})
	require.NoError(t, err)
	var grepped []string
	for _, m := range g.Matches {
		grepped = append(grepped, m.Path)
	}
	assert.ElementsMatch(t, []string{"a.go", "sub/b.go"}, grepped, "grep (the reference)")

	r, err := e.k.Glob(tools.GlobArgs{Pattern: "**/*"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go", "sub/", "sub/b.go", "wt/", "wt/.git"}, r.Matches)
	assert.Equal(t, 2, r.SkippedGitDirs)
	assert.Contains(t, r.String(), "2 .git directories not listed")

	r, err = e.k.Glob(tools.GlobArgs{Pattern: ".git/**"})
	require.NoError(t, err)
	assert.Contains(t, r.Matches, ".git/hooks/pre-commit", "a pattern naming .git lists it")
	r, err = e.k.Glob(tools.GlobArgs{Pattern: "*", Path: "sub/.git"})
	require.NoError(t, err)
	assert.Equal(t, []string{"sub/.git/config"}, r.Matches, "a .git path lists it")
}

func TestGrep(t *testing.T) {
	e := newEnv(t, []string{
		".gitignore=ignored/\n*.log\n",
		"a.go=package a\n// match here\n", "b.log=match\n", "ignored/c.go=match\n",
		"src/.gitignore=gen.go\n", "src/gen.go=match\n", "src/d.go=no\nmatch 2\nMATCH 3\n",
		"src/sub/e.go=match\n", "bin.go=match\x00\n", ".git/config=match\n",
		"out => $OUT", "sec => $OUT/secret", "long.go=match " + strings.Repeat("y", 400) + "\n",
	})
	k := e.k
	r, err := k.Grep(tools.GrepArgs{Pattern: "match"})
	require.NoError(t, err)
	var got []string
	for _, m := range r.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	assert.Equal(t, []string{"a.go:2", "long.go:1", "src/d.go:2", "src/sub/e.go:1"}, got)
	assert.Equal(t, 1, r.SkippedBinary)
	assert.Contains(t, r.String(), "a.go:2:// match here\n")
	assert.Contains(t, r.String(), "1 binary files skipped")
	assert.Contains(t, r.Matches[1].Text, "[line cut]")
	assert.Less(t, len(r.Matches[1].Text), 320)

	// Searching a subdirectory still honours the root's .gitignore.
	r, err = k.Grep(tools.GrepArgs{Pattern: "(?i)match", Path: "src", Include: "*.go"})
	require.NoError(t, err)
	got = nil
	for _, m := range r.Matches {
		got = append(got, fmt.Sprintf("%s:%d", m.Path, m.Line))
	}
	assert.Equal(t, []string{"src/d.go:2", "src/d.go:3", "src/sub/e.go:1"}, got)

	r, err = k.Grep(tools.GrepArgs{Pattern: "match", IgnoreCase: true, Include: "src/*.go"})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 2)

	r, err = k.Grep(tools.GrepArgs{Pattern: "match", Path: "src/d.go"})
	require.NoError(t, err)
	assert.Equal(t, "src/d.go", r.Matches[0].Path)

	r, err = k.Grep(tools.GrepArgs{Pattern: "match", MaxResults: 2})
	require.NoError(t, err)
	assert.Len(t, r.Matches, 2)
	assert.True(t, r.Truncated)
	assert.Contains(t, r.String(), "truncated at the result cap")

	// Symlinks out are neither followed nor searched; paths out refused.
	r, err = k.Grep(tools.GrepArgs{Pattern: "SECRET"})
	require.NoError(t, err)
	assert.Empty(t, r.Matches)
	for _, p := range []string{"out", "sec", "../out", e.out} {
		_, err = k.Grep(tools.GrepArgs{Pattern: "SECRET", Path: p})
		assertToolErr(t, err, jail.ErrOutsideWorkspace)
	}
	_, err = k.Grep(tools.GrepArgs{Pattern: "("})
	assertToolErr(t, err, tools.ErrInvalidArgs, "regular expression")

	// grep does not count as reading: overwriting still needs read_file.
	_, err = k.WriteFile(tools.WriteFileArgs{Path: "a.go", Content: "x"})
	assertToolErr(t, err, jail.ErrNotRead)
}

func TestCallAndDefinitions(t *testing.T) {
	e := newEnv(t, []string{"f=hello\n"})
	defs := e.k.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(d.InputSchema, &schema), d.Name)
		assert.Equal(t, "object", schema["type"], d.Name)
		assert.NotEmpty(t, d.Description)
		assert.NotZero(t, d.Access)
		props := schema["properties"].(map[string]any)
		for _, p := range d.PathArgs {
			assert.Equal(t, "path", props[p].(map[string]any)["format"], "%s.%s", d.Name, p)
		}
	}
	assert.Equal(t, []string{"read_file", "write_file", "edit_file", "patch", "list_directory", "glob", "grep", "bash"}, names)

	ctx := context.Background()
	r, err := e.k.Call(ctx, "read_file", json.RawMessage(`{"path":"f"}`))
	require.NoError(t, err)
	assert.Contains(t, r.String(), "     1\thello\n")
	_, err = e.k.Call(ctx, "read_file", json.RawMessage(`{"path":"f","bogus":1}`))
	assertToolErr(t, err, tools.ErrInvalidArgs, "bogus")
	_, err = e.k.Call(ctx, "read_file", json.RawMessage(`{"path":7}`))
	assertToolErr(t, err, tools.ErrInvalidArgs)
	_, err = e.k.Call(ctx, "read_file", nil)
	assertToolErr(t, err, tools.ErrInvalidArgs, "path is required")
	_, err = e.k.Call(ctx, "rm_rf", nil)
	assertToolErr(t, err, tools.ErrUnknownTool)
	r, err = e.k.Call(ctx, "list_directory", nil)
	require.NoError(t, err)
	assert.Contains(t, r.String(), "f f (6 bytes)")
}

func TestNarrow(t *testing.T) {
	e := newEnv(t, []string{"a/f=A\n", "b/g=B\n", "a/tob => ../b", "top=T\n"})
	n, skipped := e.k.Narrow(filepath.Join(e.root, "a"), e.out, "top", "missing")
	require.Len(t, skipped, 3)
	assert.ErrorIs(t, skipped[0], jail.ErrOutsideWorkspace)
	assert.ErrorIs(t, skipped[1], tools.ErrInvalidArgs)
	assert.ErrorIs(t, skipped[2], os.ErrNotExist)
	roots, scoped := n.Scope()
	assert.True(t, scoped)
	assert.Equal(t, []string{filepath.Join(e.root, "a")}, roots)

	_, err := n.ReadFile(tools.ReadFileArgs{Path: "a/f"})
	require.NoError(t, err)
	for _, p := range []string{"b/g", "a/tob/g", "top", "a/../b/g"} {
		_, err = n.ReadFile(tools.ReadFileArgs{Path: p})
		assertToolErr(t, err, tools.ErrOutsideScope, "client's roots", filepath.Join(e.root, "a"))
	}
	_, err = n.ReadFile(tools.ReadFileArgs{Path: "../out/secret"})
	assertToolErr(t, err, jail.ErrOutsideWorkspace, "outside the workspace")
	_, err = n.WriteFile(tools.WriteFileArgs{Path: "b/new", Content: "x"})
	assertToolErr(t, err, tools.ErrOutsideScope)
	assert.NoFileExists(t, filepath.Join(e.root, "b", "new"))

	// Defaults become the first root.
	r, err := n.ListDirectory(tools.ListDirectoryArgs{})
	require.NoError(t, err)
	assert.Equal(t, "a", r.Path)
	g, err := n.Glob(tools.GlobArgs{Pattern: "**"})
	require.NoError(t, err)
	assert.Equal(t, []string{"a/f", "a/tob"}, g.Matches)

	// Narrowing twice only narrows.
	n2, skipped := n.Narrow(filepath.Join(e.root, "b"))
	require.Len(t, skipped, 1)
	assert.ErrorIs(t, skipped[0], tools.ErrOutsideScope)
	_, err = n2.ReadFile(tools.ReadFileArgs{Path: "a/f"})
	assertToolErr(t, err, tools.ErrOutsideScope, "no path is allowed")
	_, err = n2.ListDirectory(tools.ListDirectoryArgs{})
	assertToolErr(t, err, tools.ErrOutsideScope)

	// The original is unchanged.
	_, err = e.k.ReadFile(tools.ReadFileArgs{Path: "b/g"})
	require.NoError(t, err)
	assert.False(t, errors.Is(err, tools.ErrOutsideScope))
}

// TestGlobBounded: a glob pattern whose walk has no bound is refused
// before any walk (red team round 25, R25c-4: 12 "**" components on a
// 15-deep tree, or "{a,b}" 40 times on an empty workspace, never
// answered and kept landjail-mcp past SIGTERM): more than three "**"
// components, more than 256 alternatives; grep's include is held to the
// same bounds. Consecutive "**" are collapsed: the reviewer's twelve in a
// row answer. Controls: three "**", 256 alternatives answer, with the
// right matches.
func TestGlobBounded(t *testing.T) {
	e := newEnv(t, []string{"a/b/c/d/e.go=", "x.go="})
	for _, pat := range []string{
		strings.Repeat("**/a/", 4) + "zz",
		strings.Repeat("{a,b}", 40),
		"{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b}",
	} {
		_, err := e.k.Glob(tools.GlobArgs{Pattern: pat})
		assertToolErr(t, err, tools.ErrInvalidArgs)
		_, err = e.k.Grep(tools.GrepArgs{Pattern: "x", Include: pat})
		assertToolErr(t, err, tools.ErrInvalidArgs)
	}
	for pat, want := range map[string][]string{
		"**/**/**/**/*.go":                     {"a/b/c/d/e.go", "x.go"},
		strings.Repeat("**/", 12) + "zz":       nil, // the reviewer's 12: one after collapsing
		"**/b/**/d/**/*.go":                    {"a/b/c/d/e.go"},
		"{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}": nil,
		"{x,y}.go":                             {"x.go"},
	} {
		r, err := e.k.Glob(tools.GlobArgs{Pattern: pat})
		require.NoError(t, err, pat)
		assert.Equal(t, want, r.Matches, pat)
	}
}
