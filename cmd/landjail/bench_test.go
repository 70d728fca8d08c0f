package main

import (
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
// the metrics are the medians and their ratios (target ≤ 1.25). landjail
// is measured as "go build" makes it by default (cgo on: go-landlock pulls
// in libcap/psx, which links libc dynamically) and with CGO_ENABLED=0
// (static, like the baseline).
//
//	go test -run '^$' -bench RunTrue -benchtime 300x ./cmd/landjail
func BenchmarkRunTrue(b *testing.B) {
	lj := buildCLI(b, ".")
	lj0 := buildCLI(b, ".", "CGO_ENABLED=0")
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
	spawn(lj0, ljArgs...)
	spawn(base, "/bin/true")

	var tl, tl0, tb []time.Duration
	for b.Loop() {
		tl = append(tl, spawn(lj, ljArgs...))
		tl0 = append(tl0, spawn(lj0, ljArgs...))
		tb = append(tb, spawn(base, "/bin/true"))
	}
	ml, ml0, mb := median(tl), median(tl0), median(tb)
	b.ReportMetric(float64(mb.Microseconds()), "baseline-µs")
	b.ReportMetric(float64(ml.Microseconds()), "landjail-µs")
	b.ReportMetric(float64(ml0.Microseconds()), "landjail-nocgo-µs")
	b.ReportMetric(float64(ml)/float64(mb), "ratio")
	b.ReportMetric(float64(ml0)/float64(mb), "ratio-nocgo")
	b.Logf("medians (n=%d): execbaseline %v; landjail run -- /bin/true %v (x%.2f); CGO_ENABLED=0 %v (x%.2f)",
		len(tl), mb, ml, float64(ml)/float64(mb), ml0, float64(ml0)/float64(mb))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
