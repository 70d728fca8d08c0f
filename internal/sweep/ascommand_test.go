package sweep_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/jail"
)

// TestSweepReadsAsCommand (red team round 31, R31c-5): what a
// repository the command made names (core.fsmonitor, include.path) is
// read by the sweep only where the command could read it itself. A
// file outside the policy that runs Python decided, read by landjail,
// whether the command's yaml.py was quarantined (a one-bit oracle on
// files it is denied); a FIFO named by include.path was opened, and
// its blocked writer released. Now: no quarantine for the outside
// file, the writer stays blocked; control: the same reference to a
// file inside the workspace quarantines; and a Snapshot of Take (no
// command given) still reads the outside file (the oracle the test
// would see).
func TestSweepReadsAsCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	write := func(p, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	write(secret, "PRE_COMMIT\n")
	fifo := filepath.Join(outside, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	released := make(chan struct{})
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		close(released)
	}()
	t.Cleanup(func() { // release the writer at the end
		if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			<-released
			r.Close()
		}
	})

	for _, c := range []struct {
		name      string
		asCommand bool
		outsideQ  bool // sub/yaml.py (naming the outside file) quarantined
	}{
		{"as-command", true, false},
		{"landjail-own", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(filepath.Join(root, "hooks/pc"), "#!/bin/sh\npython3 -m pre_commit\n")
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			var snap *sweep.Snapshot
			if c.asCommand {
				snap, err = sweep.TakeAs(ws, 0, nil)
			} else {
				snap, err = sweep.Take(ws, 0)
			}
			require.NoError(t, err)
			defer snap.Close()
			// What the command does: two repositories, one naming the
			// outside file (and the FIFO), one a file of the workspace.
			write(filepath.Join(root, "sub/.git/HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(root, "sub/.git/config"), "[core]\n\tfsmonitor = "+secret+"\n[include]\n\tpath = "+fifo+"\n")
			write(filepath.Join(root, "sub/yaml.py"), "print(1)\n")
			write(filepath.Join(root, "sub2/.git/HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(root, "sub2/.git/config"), "[core]\n\tfsmonitor = "+filepath.Join(root, "hooks/pc")+"\n")
			write(filepath.Join(root, "sub2/yaml.py"), "print(1)\n")
			q, err := snap.Sweep()
			require.NoError(t, err)
			got := map[string]bool{}
			for _, e := range q {
				got[e.Path] = true
			}
			assert.Equal(t, c.outsideQ, got["sub/yaml.py"], "sub/yaml.py quarantined")
			assert.True(t, got["sub2/yaml.py"], "control: a reference inside the workspace is read: %v", got)
			select {
			case <-released:
				t.Fatal("the FIFO's writer was released: the sweep opened it")
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}
