package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// FuzzCall sends arbitrary arguments to every file tool (not bash) in a
// tree with symlinks out, a denied file and a read-only allowed root:
// no panic, no outside content in any answer, nothing outside changed.
func FuzzCall(f *testing.F) {
	for _, s := range []string{
		`{"path":"../out/secret"}`, `{"path":"out/secret"}`, `{"path":"dang","content":"x"}`,
		`{"pattern":"**","path":"."}`, `{"pattern":"OUT","path":"sub"}`, `{"path":"f","old_string":"IN","new_string":"x"}`,
		`{"path":"/proc/self/root/etc/passwd"}`, `{"path":"ro/r"}`, `{"path":".env"}`, `{"pattern":"*","path":"up"}`,
		`{"path":"f","offset":-1,"limit":99999999}`, `{"pattern":"(?i)secret|out"}`, `{}`, `null`, `[]`, `{"path":"\u0000"}`,
		`{"patch":"--- a/outrel\n+++ b/outrel\n@@ -1 +1 @@\n-OUT\n+X\n"}`, `{"patch":"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-IN\n+X\n"}`,
	} {
		for i := range 7 {
			f.Add(uint8(i), s)
		}
	}
	c := attacktest.FuzzCase
	e := attacktest.Build(f, &c)
	opts := []jail.Option{jail.WithReadTracker(jail.NewReadTracker()), jail.WithAllowed(filepath.Join(e.Out, "ro"), jail.ReadOnly), jail.WithDeny(".env")}
	ws, err := jail.New(e.Root, opts...)
	if err != nil {
		f.Fatal(err)
	}
	defer ws.Close()
	k := &tools.Toolkit{WS: ws, Limits: tools.Limits{GrepMatches: 20, GlobResults: 50}}
	names := []string{tools.ToolReadFile, tools.ToolWriteFile, tools.ToolEditFile, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep, tools.ToolPatch}
	outside := func(tb testing.TB) map[string]string {
		m := attacktest.Snapshot(tb, e.Out)
		for k, v := range attacktest.Snapshot(tb, e.Evil) {
			m["evil/"+k] = v
		}
		return m
	}
	before := outside(f)
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		name := names[int(which)%len(names)]
		r, err := k.Call(context.Background(), name, []byte(args))
		if err == nil {
			text := r.String()
			// "OUT" is $OUT/secret's content; "EVIL" the prefix sibling's.
			for _, line := range strings.Split(text, "\n") {
				if strings.HasSuffix(line, "\tOUT") || strings.HasSuffix(line, ":OUT") || strings.Contains(line, "EVIL") {
					t.Fatalf("%s(%s) returned outside content: %q", name, args, text)
				}
			}
		}
		if after := outside(t); !mapsEqual(before, after) {
			t.Fatalf("%s(%s) changed the outside tree: %v -> %v", name, args, before, after)
		}
		// Restore what a successful write changed inside, so later
		// inputs see the same tree.
		_ = os.WriteFile(filepath.Join(e.Root, "f"), []byte("IN"), 0o644)
	})
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// FuzzPatch sends arbitrary diffs to patch (seeded with the diffs of
// testdata/patch_attacks.toml) in the fuzz tree, with f and sub/x read
// first: no panic; a refused patch leaves the whole tree ($ROOT, $OUT,
// $ROOT-evil) byte for byte unchanged; an applied one changes nothing
// outside $ROOT.
func FuzzPatch(f *testing.F) {
	seedEnv := attacktest.Build(f, &attacktest.FuzzCase)
	for _, c := range attacktest.LoadPatchCases(f, "../testdata/patch_attacks.toml") {
		if c.PatchRepeat == nil {
			f.Add(c.Diff(seedEnv))
		}
	}
	for _, s := range []string{
		"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-IN\n+X\n",
		"--- a/outrel\n+++ b/outrel\n@@ -1 +1 @@\n-OUT\n+X\n",
		"--- a/ro/r\n+++ b/ro/r\n@@ -1 +1 @@\n-R\n+X\n",
		"diff --git a/f b/out/f\nrename from f\nrename to out/f\n",
		"diff --git a/sub/x b/up/x\ncopy from sub/x\ncopy to up/x\n",
		"--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-KEY\n+X\n",
		"--- /dev/null\n+++ b/evil/n\n@@ -0,0 +1 @@\n+x\n",
	} {
		f.Add(s)
	}
	c := attacktest.FuzzCase
	f.Fuzz(func(t *testing.T, diff string) {
		e := attacktest.Build(t, &c)
		ws := attacktest.NewWorkspace(t, e, &c, jail.WithReadTracker(jail.NewReadTracker()))
		k := &tools.Toolkit{WS: ws, Limits: tools.Limits{FileBytes: 1 << 16}}
		for _, r := range []string{"f", "sub/x"} {
			_, err := k.ReadFile(tools.ReadFileArgs{Path: r})
			require.NoError(t, err)
		}
		before := attacktest.Snapshot(t, e.Base)
		_, err := k.Call(context.Background(), tools.ToolPatch, mustJSON(t, tools.PatchArgs{Patch: diff}))
		after := attacktest.Snapshot(t, e.Base)
		if err != nil {
			if !mapsEqual(before, after) {
				t.Fatalf("refused patch %q (%v) changed the tree", diff, err)
			}
			return
		}
		for name, v := range before {
			if strings.HasPrefix(name, "ws/") || name == "ws" {
				continue
			}
			if after[name] != v {
				t.Fatalf("patch %q changed %s outside the workspace", diff, name)
			}
		}
		for name := range after {
			if _, ok := before[name]; !ok && !strings.HasPrefix(name, "ws/") {
				t.Fatalf("patch %q created %s outside the workspace", diff, name)
			}
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
