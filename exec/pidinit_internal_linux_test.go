package exec

import (
	"context"
	"os"
	"runtime"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/internal/wstest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// TestPIDInitBothWays runs a child in a PID namespace through each init
// this architecture has: the assembly one (CLONE_VM, amd64) and the
// forked copy (the only one elsewhere), from a pooled worker and from a
// fresh thread. Each must give the namespace its fresh /proc, readable
// (the shell sees itself, PID 2; PID 1, the init, is hidden), kill a leftover when the
// child exits (the unconfined control: the same background sleep
// outlives a plain sh), and a failure in the init's set-up (a procfs
// type the kernel does not know: ENODEV) must come back as Start's error
// naming the step, with nothing run.
func TestPIDInitBothWays(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	kerneltest.RequireNamespaces(t, nsview.Probe())
	d := wstest.New(t)
	ws, err := jail.New(d.Root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true, Namespaces: true})
	require.NoError(t, err)
	t.Cleanup(func() { Release(rs); rs.Close() })
	require.Equal(t, landlock.LayerNamespaces, rs.Report().Layer)

	control := osexec.Command("/bin/sh", "-c", "(exec sleep 302 </dev/null >/dev/null 2>&1) & echo started")
	control.Dir = d.Root
	out, err := control.Output()
	require.NoError(t, err, "%s", out)
	pid := proctest.HostPid(t, d.Root, "sleep 302")
	assert.NotZero(t, pid, "control: the leftover outlives a plain sh")
	proctest.Kill(pid)

	ways := []bool{false}
	if haveCloneVM {
		ways = append(ways, true)
	}
	defer func(v bool) { useCloneVM = v }(useCloneVM)
	for _, vm := range ways {
		name := "fork"
		if vm {
			name = "clone_vm"
		}
		t.Run(name, func(t *testing.T) {
			useCloneVM = vm
			for _, fresh := range []bool{false, true} {
				c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", `for p in /proc/[0-9]*; do echo ${p#/proc/}; done; (exec sleep 302 </dev/null >/dev/null 2>&1) & echo started`)
				c.FreshThread = fresh
				c.Timeout = time.Minute
				out, err := c.Output()
				require.NoError(t, err, "%s", out)
				lines := strings.Fields(string(out))
				assert.Equal(t, []string{"2", "started"}, lines, "PID 1 hidden (hidepid=4); fresh thread %v", fresh)
				assert.Zero(t, proctest.HostPid(t, d.Root, "sleep 302"), "the leftover died with the namespace")

				procFS = "nosuchfs"
				c = CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "echo ran")
				c.FreshThread = fresh
				out, err = c.Output()
				procFS = "proc"
				require.Error(t, err)
				assert.ErrorIs(t, err, unix.ENODEV)
				assert.Contains(t, err.Error(), "mount(proc, /proc)")
				assert.Empty(t, out)
			}
		})
	}
}

// TestPIDInitNoLeak: 100 pooled and fresh-thread spawns with a PID
// namespace each leave this process as they found it: no descriptor
// (pidfds, keep-alive pipes, rulesets), no child (inits are reaped), and
// no init still running.
func TestPIDInitNoLeak(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	kerneltest.RequireNamespaces(t, nsview.Probe())
	d := wstest.New(t)
	ws, err := jail.New(d.Root)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	rs, err := landlock.Compile(ws, landlock.Options{System: true, Namespaces: true})
	require.NoError(t, err)
	t.Cleanup(func() { Release(rs); rs.Close() })
	run := func(fresh bool) {
		c := CommandContext(context.Background(), ws, rs, "/bin/sh", "-c", "(exec sleep 303 </dev/null >/dev/null 2>&1) & :")
		c.FreshThread = fresh
		require.NoError(t, c.Run())
	}
	run(false) // the pool's worker and the view exist from here on,
	run(true)  // and what the fresh-thread path opens once
	fds := func() int {
		runtime.GC() // files other tests dropped are closed by finalizers first
		ents, err := os.ReadDir("/proc/self/fd")
		require.NoError(t, err)
		return len(ents)
	}
	before := fds()
	for i := range 100 {
		run(i%2 == 0)
	}
	// A leak would be one or more per spawn (100); a file another test
	// dropped may still be closed meanwhile.
	assert.LessOrEqual(t, fds(), before+2, "descriptors (before: %d)", before)
	kids, err := reaper.Children()
	require.NoError(t, err)
	assert.Empty(t, kids, "children left (an unreaped init or child)")
	assert.Zero(t, proctest.HostPid(t, d.Root, "sleep 303"), "a leftover outlived its namespace")
}
