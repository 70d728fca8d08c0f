package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetV2Files: the cgroup v2 limits as files, written through the
// library into a fake cgroupfs directory (opencontainers/cgroups'
// TestMode, its own test approach: this host's cgroup v2 has no pids,
// memory or cpu controller, and a private cgroup2 mount cannot enable
// controllers that v1 hierarchies hold). Memory disables swap
// (memory.swap.max 0); controllers the group lacks are not written.
func TestSetV2Files(t *testing.T) {
	cgroups.TestMode = true
	t.Cleanup(func() { cgroups.TestMode = false })
	for _, tc := range []struct {
		name  string
		ctrls string
		spec  Spec
		want  map[string]string
	}{
		{"all", "pids memory cpu", Spec{Pids: 40, Memory: 64 << 20, CPUs: 0.25},
			map[string]string{"pids.max": "40", "memory.max": "67108864", "memory.swap.max": "0", "cpu.max": "25000 100000"}},
		{"two cpus", "cpu", Spec{CPUs: 2}, map[string]string{"cpu.max": "200000 100000"}},
		{"no pids controller", "memory", Spec{Pids: 40, Memory: 8 << 20},
			map[string]string{"memory.max": "8388608", "memory.swap.max": "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(tc.ctrls+"\n"), 0o644))
			ctrls := map[string]bool{}
			for _, c := range strings.Fields(tc.ctrls) {
				ctrls[c] = true
			}
			require.NoError(t, setV2(dir, ctrls, tc.spec))
			for f, v := range tc.want {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if assert.NoError(t, err, f) {
					assert.Equal(t, v, strings.TrimSpace(string(b)), f)
				}
			}
			if !ctrls["pids"] {
				assert.NoFileExists(t, filepath.Join(dir, "pids.max"))
			}
		})
	}
}
