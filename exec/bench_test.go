package exec_test

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/landlock"
)

// BenchmarkSpawn compares a spawn of /bin/true through plain os/exec with
// one through exec (fresh thread, capability drop, Landlock domain from a
// reused ruleset), with 1, 10, 100 and 1000 extra rules on top of the
// workspace and the system preset: the per-spawn cost must stay flat.
//
//	go test -run '^$' -bench BenchmarkSpawn -benchtime 2000x ./exec/
func BenchmarkSpawn(b *testing.B) {
	b.Run("osexec", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("landjail/rules=%d", n), func(b *testing.B) {
			f := newFixture(b)
			extra := make([]landlock.Rule, n)
			for i := range extra {
				d := filepath.Join(f.outside, fmt.Sprintf("d%04d", i))
				require.NoError(b, os.Mkdir(d, 0o755))
				extra[i] = landlock.Rule{Path: d, Access: landlock.RightsRead}
			}
			rs := f.compile(b, landlock.Options{Extra: extra})
			if !rs.Enforced() {
				b.Skip("no Landlock")
			}
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if err := exec.CommandContext(ctx, f.ws, rs, "/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompile measures building a ruleset of 1000 extra rules (the
// cost paid once per policy, not per spawn).
func BenchmarkCompile(b *testing.B) {
	f := newFixture(b)
	extra := make([]landlock.Rule, 1000)
	for i := range extra {
		d := filepath.Join(f.outside, fmt.Sprintf("d%04d", i))
		require.NoError(b, os.Mkdir(d, 0o755))
		extra[i] = landlock.Rule{Path: d, Access: landlock.RightsRead}
	}
	for b.Loop() {
		rs, err := landlock.Compile(f.ws, landlock.Options{System: true, Extra: extra})
		if err != nil {
			b.Fatal(err)
		}
		rs.Close()
	}
}

// BenchmarkSpawnRatio alternates a plain os/exec spawn of /bin/true and a
// confined one, so that both see the same machine load, and reports the
// median of each ("osexec-ns", "landjail-ns") and their ratio
// ("ratio", target <= 1.10), for 1, 10, 100 and 1000 extra rules.
//
//	go test -run '^$' -bench BenchmarkSpawnRatio -benchtime 2000x ./exec/
func BenchmarkSpawnRatio(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			f := newFixture(b)
			extra := make([]landlock.Rule, n)
			for i := range extra {
				d := filepath.Join(f.outside, fmt.Sprintf("d%04d", i))
				require.NoError(b, os.Mkdir(d, 0o755))
				extra[i] = landlock.Rule{Path: d, Access: landlock.RightsRead}
			}
			rs := f.compile(b, landlock.Options{Extra: extra})
			if !rs.Enforced() {
				b.Skip("no Landlock")
			}
			ctx := context.Background()
			var plain, jailed []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if err := osexec.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := exec.CommandContext(ctx, f.ws, rs, "/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				plain = append(plain, t1.Sub(t0))
				jailed = append(jailed, time.Since(t1))
			}
			mp, mj := median(plain), median(jailed)
			b.ReportMetric(float64(mp.Nanoseconds()), "osexec-ns")
			b.ReportMetric(float64(mj.Nanoseconds()), "landjail-ns")
			b.ReportMetric(float64(mj)/float64(mp), "ratio")
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
