package sandbox

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cpushare"
)

// TestChargeOutput: under --cpus a call's output is copied through a
// writer charged to the call's share (red team round 24, R24b-1), one
// writer for stdout and stderr when they were one (os/exec then keeps a
// single pipe); a copy that costs 2 ms of CPU a write, 100 writes, at
// 0.1 CPU takes at least 1.5 s (the share's first period of credit
// aside); without --cpus nothing is wrapped. Red without chargeOutput:
// the writer is the buffer itself, 0.2 s.
func TestChargeOutput(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	c := &exec.Cmd{Stdout: &buf, Stderr: &buf}
	(&Plan{}).chargeOutput(c)
	assert.Same(t, &buf, c.Stdout, "without --cpus: as it was")

	p := &Plan{}
	p.spec.CPUs = 0.1
	p.chargeOutput(c)
	require.IsType(t, &chargedWriter{}, c.Stdout)
	assert.Same(t, c.Stdout, c.Stderr, "one writer for both")
	burn := &burner{w: &buf}
	c.Stdout.(*chargedWriter).w = burn
	start := time.Now()
	for range 100 {
		_, err := c.Stdout.Write([]byte("x"))
		require.NoError(t, err)
	}
	wall := time.Since(start)
	t.Logf("100 writes of 2 ms of CPU in %v at --cpus 0.1", wall)
	assert.GreaterOrEqual(t, wall, 1500*time.Millisecond, "the copy waited for the share")
	assert.Equal(t, 100, buf.Len())
}

// burner spends 2 ms of the process's CPU on each write.
type burner struct{ w *bytes.Buffer }

func (b *burner) Write(p []byte) (int, error) {
	for start := cpushare.ProcessCPU(); cpushare.ProcessCPU()-start < 2*time.Millisecond; {
	}
	return b.w.Write(p)
}
