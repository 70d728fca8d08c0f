package egressns

import (
	"testing"
	"time"
)

// BenchmarkSetup measures what transparent egress adds to a run's
// spawner thread: the route (one rtnetlink round trip), the DNS socket
// and two listeners (80, 443). Each iteration needs a fresh network
// namespace, whose making is not counted (reported as setup-ns/op).
func BenchmarkSetup(b *testing.B) {
	requireNetns(b)
	var total time.Duration
	for b.Loop() {
		err := InNewNamespace(func() error {
			start := time.Now()
			s, err := Setup([]uint16{80, 443})
			total += time.Since(start)
			if err == nil {
				s.Close()
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "setup-ns/op")
}
