package exec_test

import (
	"context"
	osexec "os/exec"
	"testing"
	"time"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/landlock"
)

// BenchmarkSpawnPIDNamespace alternates, under the same load, a plain
// os/exec spawn of /bin/true, a pooled confined spawn in the namespace
// view without a PID namespace (NoPIDNamespace) and one with the init
// stage (the default), and reports the medians and the ratios to os/exec.
//
//	go test -run '^$' -bench BenchmarkSpawnPIDNamespace -benchtime 1000x -count 6 ./exec/
func BenchmarkSpawnPIDNamespace(b *testing.B) {
	f := newFixture(b)
	rs := f.compile(b, landlock.Options{Namespaces: true})
	if in, why := exec.PIDNamespace(rs, nil); !in {
		b.Skip("no PID namespace: " + why)
	}
	ctx := context.Background()
	var plain, view, pidns []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := osexec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		c := exec.CommandContext(ctx, f.ws, rs, "/bin/true")
		c.NoPIDNamespace = true
		if err := c.Run(); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := exec.CommandContext(ctx, f.ws, rs, "/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, t1.Sub(t0))
		view = append(view, t2.Sub(t1))
		pidns = append(pidns, time.Since(t2))
	}
	mp, mv, mn := median(plain), median(view), median(pidns)
	b.ReportMetric(float64(mp.Nanoseconds()), "osexec-ns")
	b.ReportMetric(float64(mv.Nanoseconds()), "view-ns")
	b.ReportMetric(float64(mn.Nanoseconds()), "pidns-ns")
	b.ReportMetric(float64(mv)/float64(mp), "view-ratio")
	b.ReportMetric(float64(mn)/float64(mp), "pidns-ratio")
}
