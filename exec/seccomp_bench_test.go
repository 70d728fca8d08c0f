package exec_test

import (
	"context"
	"testing"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// BenchmarkSpawnSeccomp: a spawn of /bin/true with the default seccomp
// layer of `landjail run` (network restricted), pooled and on a fresh
// thread; "supervised" adds a granted bind port, so every filter instance
// (one per spawner thread, so one per spawn with FreshThread) gets a
// listener and a supervisor goroutine.
//
//	go test -run '^$' -bench 'BenchmarkSpawnSeccomp' -count 10 ./exec/
func BenchmarkSpawnSeccomp(b *testing.B) {
	for _, tc := range []struct {
		name string
		opt  seccomp.Options
	}{
		{"default", seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true}},
		{"supervised", seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true, BindTCP: []uint16{8080}}},
	} {
		for _, fresh := range []bool{false, true} {
			b.Run(tc.name+"/"+pathName(fresh), func(b *testing.B) {
				filter, err := seccomp.Build(tc.opt)
				if err != nil {
					b.Skip(err)
				}
				f := newFixture(b)
				rs := f.compile(b, landlock.Options{BindTCP: tc.opt.BindTCP})
				if !rs.Enforced() {
					b.Skip("no Landlock")
				}
				defer exec.Release(rs)
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					c := exec.CommandContext(ctx, f.ws, rs, "/bin/true")
					c.FreshThread = fresh
					c.Seccomp = filter
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
