package tools

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nearestScan is nearest before red team round 25 (R25c-9): want
// compared at every start, the nearest to at kept (the earlier of two
// as near).
func nearestScan(src, want []string, at int) int {
	if len(want) == 0 {
		return -1
	}
	best := -1
	for s := 0; s+len(want) <= len(src); s++ {
		if slices.Equal(src[s:s+len(want)], want) && (best < 0 || abs(s-at) < abs(best-at)) {
			best = s
		}
	}
	return best
}

// TestNearestMatchesScan: the rolling-hash nearest answers what the scan
// answered, on random files of few distinct lines (many repeats, many
// equal distances), hunks cut from them or not, and any stated line.
func TestNearestMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 9))
	lines := []string{"a", "b", "c", ""}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = lines[rng.IntN(len(lines))]
		}
		return out
	}
	for i := range 20_000 {
		src := pick(rng.IntN(30))
		var want []string
		if len(src) > 0 && rng.IntN(2) == 0 {
			s := rng.IntN(len(src))
			want = slices.Clone(src[s : s+rng.IntN(len(src)-s+1)])
		} else {
			want = pick(rng.IntN(5))
		}
		at := rng.IntN(40) - 5
		require.Equal(t, nearestScan(src, want, at), nearest(src, want, at), "case %d: %q in %q at %d", i, want, src, at)
	}
}

// TestNearestLinear: a hunk of 100,000 identical lines whose last one
// differs, against a file of 200,000 of them (red team round 25,
// R25c-9: past 20 s, the scan's 10^10 line comparisons) is answered,
// and a hunk that does occur is found. The 10 s bound is a hang guard.
func TestNearestLinear(t *testing.T) {
	src := strings.Split(strings.Repeat("a\n", 200_000), "\n")
	want := append(slices.Repeat([]string{"a"}, 99_999), "b")
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.Equal(t, -1, nearest(src, want, 5))
		assert.Equal(t, 7, nearest(src, want[:99_999], 7))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("nearest did not answer in 10 s")
	}
}

// TestCallCanceled: a file tool's call returns ErrCanceled once its
// context ends, while the tool still runs (red team round 25, R25c-3,
// -4, -9: a tool that ran long held landjail-mcp past SIGTERM, until the
// client's SIGKILL skipped the last sweep). Control: uncanceled, the
// call waits for the tool's answer.
func TestCallCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	callEndsWhen(t, &Toolkit{}, ctx, cancel)
}

// TestCallEndsWithSession: a call whose own context goes on (the MCP
// SDK derives it from the request alone) returns ErrCanceled once the
// Toolkit's Session ends (landjail-mcp's SIGTERM; red team round 25,
// R25d-4: a grep still ran 150 s after SIGTERM). Control: while the
// Session goes on, the call waits for its tool.
func TestCallEndsWithSession(t *testing.T) {
	session, end := context.WithCancel(context.Background())
	callEndsWhen(t, &Toolkit{Session: session}, context.Background(), end)
}

// callEndsWhen calls a tool of k that blocks until the test ends, with
// ctx: the call must still wait 200 ms later (control), then return
// ErrCanceled within 10 s of end.
func callEndsWhen(t *testing.T, k *Toolkit, ctx context.Context, end func()) {
	t.Helper()
	release := make(chan struct{})
	callers["slow_tool_for_test"] = func(context.Context, *Toolkit, string, json.RawMessage) (Result, error) {
		<-release
		return nil, nil
	}
	defer delete(callers, "slow_tool_for_test")
	defer close(release)
	done := make(chan error, 1)
	go func() {
		_, err := k.Call(ctx, "slow_tool_for_test", nil)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("control: the call returned before the tool (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	end()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrCanceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the call went on after its context or session ended")
	}
}
