package limits

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/opencontainers/cgroups"
	cgfs "github.com/opencontainers/cgroups/fs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestSetWritesLikeRunc: on this host's cgroup v1 hierarchies, a new
// group given spec's limits by v1Writes reads back as one given them by
// runc's cgroup library (opencontainers/cgroups fs Manager.Set, with the
// Resources newV1 built when it used the library): pids.max,
// memory.limit_in_bytes, memory.memsw.limit_in_bytes, cpu.cfs_period_us,
// cpu.cfs_quota_us. Shown able to fail: with memory.memsw left out of
// v1Writes the memory cases fail (the library limits swap too).
func TestSetWritesLikeRunc(t *testing.T) {
	p := probe()
	if p.Mechanism != CgroupV1 || os.Geteuid() != 0 {
		t.Skip("cgroup v1 as root only (v2: TestSetV2Files)")
	}
	for _, c := range []string{"pids", "memory", "cpu"} {
		if _, ok := p.v1[c]; !ok {
			t.Skipf("no cgroup v1 %s hierarchy", c)
		}
	}
	files := map[string][]string{
		"pids":   {"pids.max"},
		"memory": {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"},
		"cpu":    {"cpu.cfs_period_us", "cpu.cfs_quota_us"},
	}
	n := 0
	group := func() map[string]string {
		n++
		g := map[string]string{}
		for c := range files {
			d := filepath.Join(p.v1[c], "landjail-settest-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(n))
			require.NoError(t, os.Mkdir(d, 0o755))
			t.Cleanup(func() { unix.Rmdir(d) })
			g[c] = d
		}
		return g
	}
	read := func(g map[string]string) map[string]string {
		out := map[string]string{}
		for c, fs := range files {
			for _, f := range fs {
				b, err := os.ReadFile(filepath.Join(g[c], f))
				if err == nil {
					out[f] = string(b)
				}
			}
		}
		return out
	}
	for _, spec := range []Spec{
		{Pids: 4096},
		{Pids: 1},
		{Memory: 64 << 20},
		{CPUs: 0.5},
		{CPUs: 2},
		{Pids: 100, Memory: 1 << 30, CPUs: 1.25},
	} {
		ours := group()
		_, err := os.Stat(filepath.Join(ours["memory"], "memory.memsw.limit_in_bytes"))
		swap := err == nil
		require.NoError(t, applyWrites(v1Writes(spec, swap), func(c string) string { return ours[c] }), "%+v", spec)

		theirs := group()
		res := &cgroups.Resources{SkipDevices: true}
		if spec.Pids > 0 {
			pids := spec.Pids
			res.PidsLimit = &pids
		}
		if spec.Memory > 0 {
			res.Memory = spec.Memory
			if swap {
				res.MemorySwap = spec.Memory
			}
		}
		if spec.CPUs > 0 {
			res.CpuPeriod = cpuPeriodUs
			res.CpuQuota = int64(spec.CPUs*cpuPeriodUs + 0.5)
		}
		m, err := cgfs.NewManager(&cgroups.Cgroup{Resources: res}, theirs)
		require.NoError(t, err)
		require.NoError(t, m.Set(res), "%+v", spec)

		assert.Equal(t, read(theirs), read(ours), "%+v", spec)
	}
}
