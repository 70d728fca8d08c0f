package tools_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// TestBashPlanningCanceled: a bash call canceled while its Ruleset is
// planned returns ErrCanceled at once (red team round 25, R25a-5: the
// walk of a workspace a command filled with directories held
// landjail-mcp tens of seconds past SIGTERM), and the Ruleset planned
// after that goes to Discard (the call's proxy freed), never to Network.
// Control: before the cancel, the call waits for its planning.
func TestBashPlanningCanceled(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	e := newEnv(t, []string{"a.txt="})
	release := make(chan struct{})
	var discarded, networked atomic.Bool
	e.k.Compile = func() (*landlock.Ruleset, error) {
		<-release
		return landlock.Compile(e.ws, landlock.Options{})
	}
	e.k.Discard = func(*landlock.Ruleset) { discarded.Store(true) }
	e.k.Network = func(*landlock.Ruleset, *exec.Cmd) (func() error, func() []string, error) {
		networked.Store(true)
		return func() error { return nil }, func() []string { return nil }, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := e.k.Bash(ctx, tools.BashArgs{Command: "true"})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("control: the call returned before its planning (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		assertToolErr(t, err, tools.ErrCanceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the canceled call waited for its planning")
	}
	close(release)
	require.Eventually(t, discarded.Load, 10*time.Second, 10*time.Millisecond, "the late Ruleset was not discarded")
	assert.False(t, networked.Load(), "a canceled call's Ruleset went to Network")
}
