package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	} {
		for i := range 6 {
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
	names := []string{tools.ToolReadFile, tools.ToolWriteFile, tools.ToolEditFile, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep}
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
