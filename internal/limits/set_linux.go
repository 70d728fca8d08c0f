package limits

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strconv"
)

// controlWrite is one value written into a control file of a group.
type controlWrite struct {
	ctrl, file, value string
	// missingOK: the file may not exist (memory.swap.max without swap
	// accounting), and then nothing is written.
	missingOK bool
}

// v1Writes are the control files spec's limits are written to in a new
// cgroup v1 group, in order: pids.max; memory.limit_in_bytes, then, when
// swap is accounted (swap: memory.memsw exists), memory.memsw.limit_in_bytes
// equal to it (no swap beyond the limit; a new group's limits are
// unlimited, and the kernel keeps memory+swap at least memory, hence the
// order), then memory.kmem.tcp.limit_in_bytes equal to it where it
// exists (socket buffers); cpu.cfs_period_us, then cpu.cfs_quota_us. The
// same files and values as runc's cgroup library (opencontainers/cgroups
// fs) writes for those Resources on a new group, which this package used
// before (TestSetWritesLikeRunc compares them), and the socket buffers'
// limit, which the library no longer sets.
func v1Writes(spec Spec, swap bool) []controlWrite {
	var w []controlWrite
	if spec.Pids > 0 {
		w = append(w, controlWrite{ctrl: "pids", file: "pids.max", value: strconv.FormatInt(spec.Pids, 10)})
	}
	if spec.Memory > 0 {
		m := strconv.FormatInt(spec.Memory, 10)
		w = append(w, controlWrite{ctrl: "memory", file: "memory.limit_in_bytes", value: m})
		if swap {
			w = append(w, controlWrite{ctrl: "memory", file: "memory.memsw.limit_in_bytes", value: m})
		}
		// v1 charges socket buffers (TCP's and UDP's) to a group only
		// once its TCP limit is set (tcpmem_active): without it a command
		// held 524 MiB of TCP and 1,856 MiB of UDP buffers at --memory
		// 64M, bounded only by the host-wide tcp_mem and udp_mem (red
		// team round 24, R24b-4). v2 charges them to memory.max.
		w = append(w, controlWrite{ctrl: "memory", file: "memory.kmem.tcp.limit_in_bytes", value: m, missingOK: true})
	}
	if spec.CPUs > 0 {
		w = append(w, controlWrite{ctrl: "cpu", file: "cpu.cfs_period_us", value: strconv.Itoa(cpuPeriodUs)},
			controlWrite{ctrl: "cpu", file: "cpu.cfs_quota_us", value: strconv.FormatInt(cpuQuotaUs(spec.CPUs), 10)})
	}
	return w
}

// v2Writes are the files spec's limits are written to in a new cgroup v2
// group, for the controllers ctrls has (the others are reported
// NotEnforced), in order: pids.max; memory.swap.max 0 (no swap; skipped
// where the kernel accounts no swap), then memory.max; cpu.max as
// "QUOTA PERIOD". As runc's library (fs2) writes them; see v1Writes.
func v2Writes(ctrls map[string]bool, spec Spec) []controlWrite {
	var w []controlWrite
	if spec.Pids > 0 && ctrls["pids"] {
		w = append(w, controlWrite{ctrl: "pids", file: "pids.max", value: strconv.FormatInt(spec.Pids, 10)})
	}
	if spec.Memory > 0 && ctrls["memory"] {
		w = append(w, controlWrite{ctrl: "memory", file: "memory.swap.max", value: "0", missingOK: true},
			controlWrite{ctrl: "memory", file: "memory.max", value: strconv.FormatInt(spec.Memory, 10)})
	}
	if spec.CPUs > 0 && ctrls["cpu"] {
		w = append(w, controlWrite{ctrl: "cpu", file: "cpu.max",
			value: strconv.FormatInt(cpuQuotaUs(spec.CPUs), 10) + " " + strconv.Itoa(cpuPeriodUs)})
	}
	return w
}

// cpuQuotaUs is the CFS quota for cpus CPUs per cpuPeriodUs.
func cpuQuotaUs(cpus float64) int64 { return int64(cpus*cpuPeriodUs + 0.5) }

// applyWrites writes ws, each into dir(ctrl); errors are writeFile's.
func applyWrites(ws []controlWrite, dir func(ctrl string) string) error {
	for _, w := range ws {
		err := writeFile(filepath.Join(dir(w.ctrl), w.file), w.value)
		if err != nil && !(w.missingOK && errors.Is(err, fs.ErrNotExist)) {
			return err
		}
	}
	return nil
}
