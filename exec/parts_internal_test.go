package exec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// BenchmarkParts times the pieces of a spawn: a fresh locked thread, the
// capability drop, applying a ruleset of ~30 and ~1030 rules (the kernel
// copies the rules into the new domain), the round trip to a pooled
// spawner thread, opening /dev/null, marking fds close-on-exec, and the
// parent-side preparation with and without a PATH lookup.
//
//	go test -run '^$' -bench BenchmarkParts -benchtime 2000x ./exec/
func BenchmarkParts(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	ws, _ := jail.New(dir)
	var extra []landlock.Rule
	for i := range 1000 {
		d := filepath.Join(dir, "..", fmt.Sprintf("x%d", i))
		os.Mkdir(d, 0o755)
		extra = append(extra, landlock.Rule{Path: filepath.Clean(d), Access: landlock.RightsRead})
	}
	rs1, _ := landlock.Compile(ws, landlock.Options{System: true})
	rs1000, _ := landlock.Compile(ws, landlock.Options{System: true, Extra: extra})
	b.Run("thread", func(b *testing.B) {
		for b.Loop() {
			onFreshThread(func() error { return nil })
		}
	})
	b.Run("dropcaps", func(b *testing.B) {
		for b.Loop() {
			onFreshThread(dropCaps)
		}
	})
	b.Run("restrict1", func(b *testing.B) {
		for b.Loop() {
			onFreshThread(rs1.RestrictSelf)
		}
	})
	b.Run("restrict1000", func(b *testing.B) {
		for b.Loop() {
			onFreshThread(rs1000.RestrictSelf)
		}
	})
	b.Run("pool-handoff", func(b *testing.B) {
		defer Release(rs1000)
		for b.Loop() {
			spawnPooled(rs1000, poolKey{}, func() error { return nil })
		}
	})
	b.Run("devnull", func(b *testing.B) {
		for b.Loop() {
			f, _ := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			f.Close()
		}
	})
	b.Run("cloexec", func(b *testing.B) {
		for b.Loop() {
			markInheritedCloexec()
		}
	})
	b.Run("prepare", func(b *testing.B) {
		c := CommandContext(context.Background(), ws, rs1, "/bin/true")
		for b.Loop() {
			c.prepare()
		}
	})
	b.Run("prepare-lookpath", func(b *testing.B) {
		c := CommandContext(context.Background(), ws, rs1, "true")
		for b.Loop() {
			c.prepare()
		}
	})
}
