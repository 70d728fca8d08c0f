package exec

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/stagestart"
)

// TestEarlyStageAdopted: as uid 65534, a stage cloned by
// stagestart.StartEarly (what cmd/landjail's package initialization
// does) is adopted by PrestartUserStage for the same network and runs the
// command as a stage exec cloned itself does (its PID namespace, the
// view, stdout and the ExtraFile in place), with no second stage cloned;
// one for the other network is discarded (reaped) and exec clones its
// own. Control: without StartEarly nothing is adopted. Shown able to
// fail: with the network comparison dropped from prestartUserStage the
// mismatched row adopted the early stage (1, not 0).
func TestEarlyStageAdopted(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestEarlyStageAdopted")
		return
	}
	ws, rs := prestageRuleset(t)
	for _, tc := range []struct {
		name          string
		early         bool
		earlyNet, net bool
		adopted       int64
	}{
		{"same network", true, true, true, 1},
		{"other network", true, false, true, 0},
		{"control: no early stage", false, false, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.early {
				stagestart.ResetForTest()
				stagestart.StartEarly("/proc/self/exe", tc.earlyNet)
			}
			before := prestageAdopted.Load()
			PrestartUserStage(tc.net)
			stdout, extra, taken := runPrestageScript(t, ws, rs, nil)
			own, err := os.Readlink("/proc/self/ns/pid")
			require.NoError(t, err)
			ns, rest, _ := strings.Cut(stdout, "\n")
			assert.True(t, strings.HasPrefix(ns, "pid:["), stdout)
			assert.NotEqual(t, own, ns)
			assert.Equal(t, "etc=ro\n", rest)
			assert.Equal(t, "extra\n", extra)
			assert.EqualValues(t, 1, taken, "prestarted stages taken")
			assert.Equal(t, tc.adopted, prestageAdopted.Load()-before, "early stages adopted")
			waitNoChildren(t) // the discarded one too
		})
	}
}

// TestEarlyStageDiscarded: what Cmd.Exec does before replacing the
// process (discardPrestage) also ends and reaps a stage stagestart cloned
// that nothing adopted, and waits for the discard of one
// PrestartUserStage found for the other network: no child is left when
// it returns. Control: the early stage is this process's child before.
// Shown able to fail: without the stagestart.Take in discardPrestage the
// first row left the stage running (noChildren false). (The wait for a
// discard under way is not shown necessary here: without it the second
// row still passed, its own stage's discard taking longer.)
func TestEarlyStageDiscarded(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestEarlyStageDiscarded")
		return
	}
	for _, mismatched := range []bool{false, true} {
		t.Run("mismatched="+strconv.FormatBool(mismatched), func(t *testing.T) {
			stagestart.ResetForTest()
			stagestart.StartEarly("/proc/self/exe", true)
			stagestart.WaitEarly()
			require.False(t, noChildren(), "control: the early stage is a child")
			if mismatched {
				PrestartUserStage(false) // discards the early one, starts its own
			}
			discardPrestage(&Cmd{})
			assert.True(t, noChildren(), "a stage left when discardPrestage returned")
		})
	}
}

// TestEarlyStageSameClone: stagestart clones the stage exactly as exec
// does: the same marker, environment (nsinit.Env), argv, clone flags and
// ambient capabilities (its constants are written out to keep its
// imports light). Shown able to fail: with CAP_NET_ADMIN's number off by
// one the comparison failed.
func TestEarlyStageSameClone(t *testing.T) {
	for _, net := range []bool{false, true} {
		assert.Equal(t, stageMarker(3, 3, net), stagestart.Marker(3, 3, net))
		assert.Equal(t, nsinit.Env(stageMarker(3, 3, net)), stagestart.Env(stageMarker(3, 3, net)))
	}
	assert.Equal(t, stageSysProcAttr(), stagestart.SysProcAttr())
	assert.Equal(t, uintptr(nsview.UserNSFlags), stagestart.SysProcAttr().Cloneflags&uintptr(nsview.UserNSFlags))
	assert.Equal(t, []string{nsinit.Argv0}, stagestart.Args())
	assert.True(t, strings.HasPrefix(stagestart.Env("x")[0], nsinit.EnvMarker+"="))
}

// TestEarlyStageCanceled: a stage stagestart cloned with package syscall
// (sysclone: os/exec did not start it, its Cmd is built around the
// process) is canceled as one os/exec started: the context's end sends
// SIGTERM to the command (the trap runs, the command exits 0) and Wait
// reports context.Canceled as os/exec's Wait does for a command it
// interrupted that exited 0; a command that ignores SIGTERM is killed
// with its stage WaitDelay later (SIGKILL). Each row runs the early stage, the one
// PrestartUserStage starts with os/exec and the one Start clones, which
// must agree (the controls). Shown able to fail: without
// stagestart.Stage.WaitErr the early row of "trapped" returned nil;
// without its WaitDelay kill the early row of "ignored" waited for its
// sleep 100 (the deadline row failed).
func TestEarlyStageCanceled(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestEarlyStageCanceled")
		return
	}
	ws, rs := prestageRuleset(t)
	for _, tc := range []struct {
		name, script string
		out          string
		canceled     error  // Wait's error
		status       string // the stage's wait status
		// waitDelay: the trapped command's exit must come before it
		// under the race detector on a loaded runner (300 ms did not:
		// SIGKILL first); the ignored one is killed after it.
		waitDelay time.Duration
	}{
		{"trapped", `trap 'echo term; exit 0' TERM; echo ready; while :; do sleep 0.05; done`, "term\n", context.Canceled, "exit status 0", 10 * time.Second},
		{"ignored", `trap '' TERM; echo ready; exec sleep 100`, "", nil, "signal: killed", 300 * time.Millisecond},
	} {
		for _, how := range []string{"early", "prestart", "start"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				adopted := prestageAdopted.Load()
				switch how {
				case "early":
					stagestart.ResetForTest()
					stagestart.StartEarly("/proc/self/exe", true)
					PrestartUserStage(true)
				case "prestart":
					PrestartUserStage(true)
				}
				deadline, stop := context.WithTimeout(context.Background(), 20*time.Second)
				defer stop()
				ctx, cancel := context.WithCancel(deadline)
				defer cancel()
				outR, outW, err := os.Pipe()
				require.NoError(t, err)
				defer outR.Close()
				c := CommandContext(ctx, ws, rs, "/bin/sh", "-c", tc.script)
				c.Stdout = outW
				c.WaitDelay = tc.waitDelay
				err = c.Start()
				outW.Close()
				require.NoError(t, err)
				br := bufio.NewReader(outR)
				line, err := br.ReadString('\n')
				require.NoError(t, err)
				require.Equal(t, "ready\n", line)
				cancel()
				rest, _ := io.ReadAll(br)
				err = c.Wait()
				assert.Equal(t, tc.out, string(rest))
				assert.True(t, c.Canceled)
				if tc.canceled != nil {
					assert.ErrorIs(t, err, tc.canceled)
				} else {
					var ee *osexec.ExitError
					assert.True(t, errors.As(err, &ee), "%v", err)
				}
				require.NotNil(t, c.ProcessState)
				assert.Equal(t, tc.status, c.ProcessState.String())
				assert.NoError(t, deadline.Err(), "the command outlived the cancellation")
				want := int64(0)
				if how == "early" {
					want = 1
				}
				assert.Equal(t, want, prestageAdopted.Load()-adopted, "early stages adopted")
				waitNoChildren(t)
			})
		}
	}
}
