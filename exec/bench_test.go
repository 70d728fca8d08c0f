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
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// extraRules returns n read-only rules on fresh directories outside the
// workspace.
func extraRules(tb testing.TB, f *fixture, n int) []landlock.Rule {
	extra := make([]landlock.Rule, n)
	for i := range extra {
		d := filepath.Join(f.outside, fmt.Sprintf("d%04d", i))
		require.NoError(tb, os.Mkdir(d, 0o755))
		extra[i] = landlock.Rule{Path: d, Access: landlock.RightsRead}
	}
	return extra
}

// ruledFixture is a fixture and its Ruleset with n extra rules (see
// extraRules); it skips the benchmark without Landlock. The Ruleset's
// spawner threads are released when the benchmark ends.
func ruledFixture(b *testing.B, n int) (*fixture, *landlock.Ruleset) {
	f := newFixture(b)
	rs := f.compile(b, landlock.Options{Extra: extraRules(b, f, n)})
	if !rs.Enforced() {
		b.Skip("no Landlock")
	}
	return f, rs
}

// BenchmarkSpawn compares a spawn of /bin/true through plain os/exec with
// one through exec, pooled (the default: a spawner thread confined once
// per Ruleset) and with FreshThread (thread creation, capability drop and
// Landlock domain per spawn), with 1, 10, 100 and 1000 extra rules on top
// of the workspace and the system preset: the per-spawn cost must stay
// flat.
//
//	go test -run '^$' -bench 'BenchmarkSpawn$' -benchtime 2000x ./exec/
func BenchmarkSpawn(b *testing.B) {
	b.Run("osexec", func(b *testing.B) {
		for b.Loop() {
			if err := osexec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, fresh := range []bool{false, true} {
		for _, n := range []int{1, 10, 100, 1000} {
			b.Run(fmt.Sprintf("%s/rules=%d", pathName(fresh), n), func(b *testing.B) {
				f, rs := ruledFixture(b, n)
				ctx := context.Background()
				for b.Loop() {
					c := exec.CommandContext(ctx, f.ws, rs, "/bin/true")
					c.FreshThread = fresh
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func pathName(fresh bool) string {
	if fresh {
		return "fresh"
	}
	return "pooled"
}

// BenchmarkCompile measures building a ruleset of 1000 extra rules (the
// cost paid once per policy, not per spawn).
func BenchmarkCompile(b *testing.B) {
	f := newFixture(b)
	extra := extraRules(b, f, 1000)
	for b.Loop() {
		rs, err := landlock.Compile(f.ws, landlock.Options{System: true, Extra: extra})
		if err != nil {
			b.Fatal(err)
		}
		rs.Close()
	}
}

// BenchmarkSpawnRatio alternates a plain os/exec spawn of /bin/true, a
// pooled confined one and a FreshThread confined one, so that all three
// see the same machine load, and reports the median of each
// ("osexec-ns", "pooled-ns", "fresh-ns") and the ratios to os/exec
// ("pooled-ratio", target <= 1.10; "fresh-ratio"), for 1, 10, 100 and
// 1000 extra rules.
//
//	go test -run '^$' -bench BenchmarkSpawnRatio -benchtime 2000x ./exec/
func BenchmarkSpawnRatio(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			f, rs := ruledFixture(b, n)
			ctx := context.Background()
			reportAlternating(b,
				spawner{"osexec", func() error { return osexec.Command("/bin/true").Run() }},
				spawner{"pooled", func() error { return exec.CommandContext(ctx, f.ws, rs, "/bin/true").Run() }},
				spawner{"fresh", func() error {
					c := exec.CommandContext(ctx, f.ws, rs, "/bin/true")
					c.FreshThread = true
					return c.Run()
				}})
		})
	}
}

// spawner is one way to spawn /bin/true, named for its metrics.
type spawner struct {
	name string
	run  func() error
}

// reportAlternating runs every spawner in turn on each b.Loop iteration,
// so that all see the same machine load, and reports the median of each
// ("<name>-ns") and, for all but the first, the ratio of its median to
// the first one's ("<name>-ratio").
func reportAlternating(b *testing.B, spawners ...spawner) {
	took := make([][]time.Duration, len(spawners))
	for b.Loop() {
		for i, s := range spawners {
			start := time.Now()
			if err := s.run(); err != nil {
				b.Fatal(err)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	medians := make([]time.Duration, len(spawners))
	for i, s := range spawners {
		medians[i] = median(took[i])
		b.ReportMetric(float64(medians[i].Nanoseconds()), s.name+"-ns")
	}
	for i, s := range spawners[1:] {
		b.ReportMetric(float64(medians[i+1])/float64(medians[0]), s.name+"-ratio")
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkSpawnNamespaces alternates a plain os/exec spawn of /bin/true,
// a pooled confined one without the namespace layer and a pooled one with
// it (a .env masked, --deny-secrets), so that all three see the same
// load, and reports the medians and the ratios to os/exec. The view is
// entered once per worker, so the pooled per-spawn cost should not move.
//
//	go test -run '^$' -bench BenchmarkSpawnNamespaces -benchtime 2000x ./exec/
func BenchmarkSpawnNamespaces(b *testing.B) {
	f := newFixture(b)
	require.NoError(b, os.WriteFile(filepath.Join(f.root, ".env"), []byte("S=1\n"), 0o600))
	ws, err := jail.New(f.root, jail.WithDenySecrets())
	require.NoError(b, err)
	defer ws.Close()
	f.ws = ws
	plainRS := f.compile(b, landlock.Options{})
	nsRS := f.compile(b, landlock.Options{Namespaces: true})
	if !plainRS.Enforced() || nsRS.Report().Layer != landlock.LayerNamespaces {
		b.Skip("no Landlock or no namespace layer")
	}
	ctx := context.Background()
	reportAlternating(b,
		spawner{"osexec", func() error { return osexec.Command("/bin/true").Run() }},
		spawner{"landlock", func() error { return exec.CommandContext(ctx, ws, plainRS, "/bin/true").Run() }},
		spawner{"namespaces", func() error { return exec.CommandContext(ctx, ws, nsRS, "/bin/true").Run() }})
}
