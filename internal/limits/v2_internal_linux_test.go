package limits

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/fs2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSetV2Files: the cgroup v2 limits as files, written by setV2 into a
// fake group directory holding the control files of its controllers (this
// host's cgroup v2 has no pids, memory or cpu controller, and a private
// cgroup2 mount cannot enable controllers that v1 hierarchies hold).
// Memory disables swap (memory.swap.max 0); controllers the group lacks
// are not written. Each case also goes through runc's cgroup library
// (opencontainers/cgroups fs2 Manager.Set in its TestMode, with the
// Resources setV2 gave it when it used the library): the same files and
// values. Shown able to fail: with cpu.max's period dropped from
// v2Writes, "all" and "two cpus" fail against both.
func TestSetV2Files(t *testing.T) {
	files := map[string][]string{"pids": {"pids.max"}, "memory": {"memory.max", "memory.swap.max"}, "cpu": {"cpu.max"}}
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
			for c := range ctrls {
				for _, f := range files[c] {
					require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("max\n"), 0o644))
				}
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

			runc := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(runc, "cgroup.controllers"), []byte(tc.ctrls+"\n"), 0o644))
			require.NoError(t, runcSetV2(runc, ctrls, tc.spec))
			ents, err := os.ReadDir(runc)
			require.NoError(t, err)
			for _, e := range ents {
				if e.Name() == "cgroup.controllers" {
					continue
				}
				want, err := os.ReadFile(filepath.Join(runc, e.Name()))
				require.NoError(t, err)
				got, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if assert.NoError(t, err, "runc wrote %s", e.Name()) {
					assert.Equal(t, strings.TrimSpace(string(want)), strings.TrimSpace(string(got)), e.Name())
				}
			}
		})
	}
}

// runcSetV2 is what setV2 did with runc's library, in its TestMode (files
// created in a plain directory).
func runcSetV2(dir string, ctrls map[string]bool, spec Spec) error {
	cgroups.TestMode = true
	defer func() { cgroups.TestMode = false }()
	res := &cgroups.Resources{SkipDevices: true}
	if spec.Pids > 0 && ctrls["pids"] {
		res.PidsLimit = &spec.Pids
	}
	if spec.Memory > 0 && ctrls["memory"] {
		res.Memory, res.MemorySwap = spec.Memory, spec.Memory
	}
	if spec.CPUs > 0 && ctrls["cpu"] {
		res.CpuPeriod = cpuPeriodUs
		res.CpuQuota = int64(spec.CPUs*cpuPeriodUs + 0.5)
	}
	m, err := fs2.NewManager(&cgroups.Cgroup{Resources: res}, dir)
	if err != nil {
		return err
	}
	return m.Set(res)
}
