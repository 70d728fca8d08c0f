package exec_test

import (
	"context"
	"os"
	osexec "os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// placement is a Cmd.Cgroup that places nothing (no group).
type placement struct{}

func (placement) CgroupFD() int     { return -1 }
func (placement) JoinThread() error { return nil }

// waitingPlacement also has work that Exec must let finish.
type waitingPlacement struct{ placement }

func (waitingPlacement) BeforeExec() { os.Stdout.WriteString("before-exec\n") }

// TestExecBeforeExec: Exec calls the Cgroup's BeforeExec (limits.Run
// waits there for the stale-group sweep StartPending left running) once,
// right before its execve: its output comes before the command's, on the
// same standard output; control: a placement without the method, only
// the command's. Shown able to fail: without the call in execConfined,
// no "before-exec". Cmd.BeforeExec (package sandbox waits there for the
// live marker) is called too, after the Cgroup's, once: "hook" mode.
// Shown able to fail: without its call in execConfined, no "hook" (red).
func TestExecBeforeExec(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if mode := os.Getenv("LANDJAIL_EXEC_BEFORE"); mode != "" {
		ws, err := jail.New(os.Getenv("LANDJAIL_EXEC_BEFORE_DIR"))
		if err == nil {
			var rs *landlock.Ruleset
			if rs, err = landlock.Compile(ws, landlock.Options{System: true}); err == nil {
				c := exec.CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "echo ran")
				c.Cgroup = placement{}
				if mode == "waiting" || mode == "hook" {
					c.Cgroup = waitingPlacement{}
				}
				if mode == "hook" {
					c.BeforeExec = func() { os.Stdout.WriteString("hook\n") }
				}
				err = c.Exec()
			}
		}
		os.Stdout.WriteString("error: " + err.Error() + "\n")
		os.Exit(3)
	}
	for mode, want := range map[string]string{"waiting": "before-exec\nran\n", "control": "ran\n", "hook": "before-exec\nhook\nran\n"} {
		c := osexec.Command(os.Args[0], "-test.run=^TestExecBeforeExec$")
		c.Env = append(os.Environ(), "LANDJAIL_EXEC_BEFORE="+mode, "LANDJAIL_EXEC_BEFORE_DIR="+t.TempDir())
		out, err := c.Output()
		require.NoError(t, err, "%s: %s", mode, out)
		assert.Equal(t, want, string(out), mode)
	}
}
