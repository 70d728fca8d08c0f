package main

import (
	"fmt"
	osexec "os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkRunTrue measures "landjail run --workspace WS -- /bin/true"
// (confine self, execve; no extra process) against execbaseline, a Go
// binary that only execve's /bin/true: the same Go start-up plus one
// execve, so the difference is landjail's own work (flags, policy,
// ruleset, confinement). The two are spawned alternately, b.N times each;
// the metrics are the medians and their ratio (target ≤ 1.25).
//
//	go test -run '^$' -bench RunTrue -benchtime 300x ./cmd/landjail
func BenchmarkRunTrue(b *testing.B) {
	lj := buildCLI(b, ".")
	base := buildCLI(b, "./testdata/execbaseline")
	ws := b.TempDir()
	ljArgs := []string{"run", "--workspace", ws, "--", "/bin/true"}
	spawn := func(bin string, args ...string) time.Duration {
		start := time.Now()
		if out, err := osexec.Command(bin, args...).CombinedOutput(); err != nil {
			b.Fatalf("%s %q: %v: %s", bin, args, err, out)
		}
		return time.Since(start)
	}
	// Warm the page cache and the workspace TMPDIR.
	spawn(lj, ljArgs...)
	spawn(base, "/bin/true")

	var tl, tb []time.Duration
	b.ResetTimer()
	for b.Loop() {
		tl = append(tl, spawn(lj, ljArgs...))
		tb = append(tb, spawn(base, "/bin/true"))
	}
	b.StopTimer()
	ml, mb := median(tl), median(tb)
	b.ReportMetric(float64(ml.Microseconds()), "landjail-µs")
	b.ReportMetric(float64(mb.Microseconds()), "baseline-µs")
	b.ReportMetric(float64(ml)/float64(mb), "ratio")
	b.Log(fmt.Sprintf("median landjail run -- /bin/true %v, execbaseline %v, ratio %.3f (n=%d)", ml, mb, float64(ml)/float64(mb), len(tl)))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
