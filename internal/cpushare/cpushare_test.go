package cpushare

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// spin burns the calling thread's CPU for d.
func spin(d time.Duration) {
	for end := ProcessCPU() + d; ProcessCPU() < end; {
	}
}

// TestShareBoundsWork: work units of 5 ms of CPU done in a loop for
// 1.5 s under a share of 0.2 CPU use at most 0.2 CPU of it (×1.2, one
// Period's quota of burst and the last unit's 5 ms), the rest held.
// Control: the same loop without a Share uses more than twice that, or
// the case is inconclusive on this (loaded) host and logs so.
func TestShareBoundsWork(t *testing.T) {
	loop := func(s *Share) (cpu, held time.Duration) {
		start := ProcessCPU()
		for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
			s.Do(func() { spin(5 * time.Millisecond) }, func(d time.Duration) {
				held += d
				time.Sleep(d)
			})
		}
		return ProcessCPU() - start, held
	}
	free, _ := loop(nil)
	used, held := loop(New(0.2))
	bound := time.Duration(0.2*1.2*1.5*float64(time.Second)) + 20*time.Millisecond + 5*time.Millisecond
	t.Logf("1.5 s of work units: %v of CPU without a share, %v with 0.2 CPU (held %v, bound %v)", free, used, held, bound)
	assert.LessOrEqual(t, used, bound, "the share's rate")
	assert.Positive(t, held, "held")
	if free <= 2*bound {
		t.Logf("inconclusive control: the loop got only %v of CPU here", free)
	}
}

// TestShareCharge: work longer than a Period that charges as it goes is
// held while it works, not only after: a 300 ms piece of work at 0.5
// CPU (50 ms of burst), charging every 10 ms, owes up to 200 ms (less
// when the host is loaded: the work's wall time fills the share too),
// and most of what it is held comes before it ends.
func TestShareCharge(t *testing.T) {
	s := New(0.5)
	var held time.Duration
	hold := func(d time.Duration) { held += d; time.Sleep(d) }
	var during time.Duration
	s.Do(func() {
		for range 30 {
			spin(10 * time.Millisecond)
			s.Charge(hold)
		}
		during = held
	}, hold)
	t.Logf("held %v while working, %v in all", during, held)
	assert.Positive(t, during)
	assert.GreaterOrEqual(t, during, held*3/4)
	assert.Less(t, held, 400*time.Millisecond)
}

// TestNilShare: a nil Share runs the work and never holds.
func TestNilShare(t *testing.T) {
	var s *Share
	ran := false
	s.Do(func() { ran = true }, func(time.Duration) { t.Fatal("held") })
	s.Charge(func(time.Duration) { t.Fatal("held") })
	assert.True(t, ran)
	assert.Nil(t, New(0))
	assert.Zero(t, s.Quota())
	assert.Equal(t, 10*time.Millisecond, New(0.1).Quota())
}
