package exec

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/osthread"
)

// TestStageLingers: as uid 65534 with DeferNamespaceEnd, once the
// command exited and left nothing in its namespace, Wait returns with
// the status the user-namespace stage reported (WaitStatus: exited with
// the command's code, 128+9 for SIGKILL; ProcessState nil; a non-zero
// code as a *StageExitError) while the stage is still this process's
// live child: it lingers until this process exits (closing the
// keep-alive pipe here ends it, as the exit would, and it is then
// reaped). With a background process left the stage is reaped by Wait
// as without DeferNamespaceEnd (the namespace ends with the command),
// and the control without DeferNamespaceEnd always reaps it; prestarted
// stages and stages cloned at Start alike. Shown able to fail: with
// Spec.Linger never set (stageSpec) the six lingering rows failed (a
// reaped stage, ProcessState set) and the four others passed.
func TestStageLingers(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestStageLingers")
		return
	}
	ws, rs := prestageRuleset(t)
	for _, tc := range []struct {
		name, script string
		deferEnd     bool
		code         int
		linger       bool
	}{
		{"exit 0", "exit 0", true, 0, true},
		{"exit 3", "exit 3", true, 3, true},
		{"killed", "kill -9 $$", true, 128 + 9, true},
		{"a background process left", "sleep 30 & exit 4", true, 4, false},
		{"control: exit 3 without DeferNamespaceEnd", "exit 3", false, 3, false},
	} {
		for _, prestart := range []bool{false, true} {
			t.Run(tc.name+"/prestart="+strconv.FormatBool(prestart), func(t *testing.T) {
				if prestart {
					PrestartUserStage(true)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				outR, outW, err := os.Pipe()
				require.NoError(t, err)
				defer outR.Close()
				c := CommandContext(ctx, ws, rs, "/bin/sh", "-c", "echo started; "+tc.script)
				c.Stdout = outW
				c.DeferNamespaceEnd = tc.deferEnd
				err = c.Start()
				outW.Close()
				require.NoError(t, err)
				out, _ := io.ReadAll(outR)
				assert.Equal(t, "started\n", string(out))
				stage := c.Process.Pid
				start := time.Now()
				err = c.Wait()
				assert.Less(t, time.Since(start), 10*time.Second, "Wait waited for the background process")
				wst, ok := c.WaitStatus()
				require.True(t, ok)
				assert.True(t, wst.Exited())
				assert.Equal(t, tc.code, wst.ExitStatus())
				if tc.linger {
					assert.Nil(t, c.ProcessState, "the stage was reaped")
					assert.True(t, isChild(stage), "the stage did not linger")
					var se *StageExitError
					if tc.code == 0 {
						assert.NoError(t, err)
					} else if assert.True(t, errors.As(err, &se), "%v", err) {
						assert.Equal(t, tc.code, se.Code)
						assert.Equal(t, "exit status "+strconv.Itoa(tc.code), err.Error())
					}
					// What this process's exit does: close the
					// keep-alive pipe; the stage then exits.
					lingeringStages.mu.Lock()
					for _, k := range lingeringStages.keeps {
						k.Close()
					}
					lingeringStages.keeps = nil
					lingeringStages.mu.Unlock()
				} else {
					require.NotNil(t, c.ProcessState)
					assert.Equal(t, tc.code, c.ProcessState.ExitCode())
					assert.False(t, isChild(stage), "the stage was not reaped")
				}
				waitNoChildren(t)
				if tc.name == "a background process left" {
					// The namespace ended with its init: no sleep left
					// among this uid's processes started by the test.
					assert.False(t, sleepAlive(), "the background process outlived the stage")
				}
			})
		}
	}
}

// sleepAlive reports whether a "sleep 30" runs as this process's uid.
func sleepAlive() bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || string(b) != "sleep\x0030\x00" {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err == nil && strings.Contains(string(st), "\nUid:\t"+strconv.Itoa(os.Getuid())+"\t") {
			st2, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if i := strings.LastIndexByte(string(st2), ')'); i > 0 && i+2 < len(st2) && st2[i+2] != 'Z' {
				return true
			}
		}
	}
	return false
}

// TestStageTakesMountTable: a prestarted stage checks its view's mounts
// against the mount table this process read (nsview.LastMountTable, sent
// with the view) instead of reading its own: with a table as long as
// fs.mount-max kept here the stage refuses the view (the mount limit,
// before anything is built) and Start fails; control: with Compile's
// real table the command runs. Shown red: with the stage ignoring the
// table (nsview.KeepMountTable not called) the first case ran.
func TestStageTakesMountTable(t *testing.T) {
	if os.Getenv(envPrestage) == "" {
		asNobody(t, "TestStageTakesMountTable")
		return
	}
	ws, rs := prestageRuleset(t) // Compile read the real table
	real, max := nsview.LastMountTable()
	require.NotEmpty(t, real)
	require.Positive(t, max)
	full := make([]string, max)
	for i := range full {
		full[i] = "/m" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name  string
		table []string
		ok    bool
	}{
		{"a table at fs.mount-max", full, false},
		{"control: the real table", real, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, osthread.Run(func() error {
				nsview.KeepMountTable(tc.table, 0) // what LastMountTable returns next (with MountBudget's limit)
				return nil
			}))
			PrestartUserStage(true)
			before := prestageTaken.Load()
			c := CommandContext(context.Background(), ws, rs, "/bin/true")
			err := c.Start()
			if tc.ok {
				require.NoError(t, err)
				require.NoError(t, c.Wait())
				assert.EqualValues(t, 1, prestageTaken.Load()-before)
			} else {
				require.Error(t, err)
				assert.ErrorContains(t, err, "fs.mount-max")
			}
			waitNoChildren(t)
		})
	}
}
