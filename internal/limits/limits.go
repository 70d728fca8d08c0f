// Package limits bounds what one confined run may consume — processes and
// threads, memory, CPU bandwidth, file size, open files — so that a runaway
// command (a fork bomb, a leak, a spinner, a disk filler) cannot take the
// host down, and tears the run down totally afterwards: every process it
// left, daemons that called setsid and ignore SIGTERM included.
//
// One Run per command: Start creates a control group for it (named
// landjail-<pidns>-<pid>-<starttime>-<seq> under a landjail parent in
// each hierarchy) and writes the limits; the spawner places the child there
// before it executes anything (Run.CgroupFD for CLONE_INTO_CGROUP on
// cgroup v2, Run.JoinThread on cgroup v1: see exec.Cmd.Cgroup, or Run.Start
// for an os/exec.Cmd); Close kills what is left through the group
// (cgroup.kill on v2, freeze–kill–thaw on v1), reads the statistics and
// removes the group. Groups left by a landjail killed with SIGKILL (their
// owner pid is gone or was reused) are emptied and removed by the next
// Start in any landjail process.
//
// Mechanisms, per limit (Mechanism, reported in Result.Limits):
//
//   - cgroup v2 (unified mode, /sys/fs/cgroup is cgroup2), as root or in
//     a delegated subtree given as Options.Parent: pids.max, memory.max
//     with memory.swap.max 0 (swap not allowed), cpu.max. Placement by
//     CLONE_INTO_CGROUP (Linux 5.7), kill by cgroup.kill (Linux 5.14).
//   - cgroup v1 (legacy or hybrid hosts), as root: pids.max,
//     memory.limit_in_bytes with memory.memsw.limit_in_bytes equal to it
//     (no swap beyond the limit; when the kernel has no swap accounting
//     the limit is RAM only and the Limit's Note says so), cpu.cfs_quota_us
//     over a 100 ms cpu.cfs_period_us. Placement by moving the spawning
//     thread into each hierarchy's tasks file (children inherit it). Kill
//     through the freezer hierarchy when mounted.
//   - rlimit: the file-size (RLIMIT_FSIZE: writes past it fail with EFBIG)
//     and open-file (RLIMIT_NOFILE) limits are always per-process rlimits
//     the spawner sets in the child before execve (Run.Rlimits,
//     exec.Cmd.Rlimits). Without CAP_SYS_RESOURCE only the soft limit is
//     set, which the command could raise again; the Limit's Note says so.
//   - not enforced: without a usable cgroup, pids, memory and cpus are not
//     enforced. Their rlimit look-alikes are not substitutes and are not
//     used: RLIMIT_NPROC counts every process of the real user id, not of
//     the run, and does not bind root; RLIMIT_AS bounds address space,
//     not RAM (a Go or Java runtime reserves gigabytes it never touches);
//     RLIMIT_CPU is total CPU seconds, not bandwidth. Start then returns a
//     Run whose Result says so; with Options.Strict it fails with
//     ErrNotEnforced instead.
//
// Defaults: DefaultSpec limits processes and threads to DefaultPids, so a
// fork bomb under default flags is contained; every other limit is off.
//
// What a pids limit counts: every process and thread of the run, and on
// cgroup v1 also the spawning thread while it forks; with a PID namespace
// its init (exec's PID 1) when it was forked from a placed thread.
//
// Statistics (Result): on v1 the memory and cpuacct hierarchies are
// joined only for a memory or CPU limit, or with Options.Stats (each
// hierarchy is a mkdir and an rmdir per run); without them PeakMemory and
// CPUTimeUsec are nil. pids.peak exists on v1 since Linux 6.13.
//
// Containers: a container usually has a cgroup namespace and a read-only
// /sys/fs/cgroup; Available reports both. In Kubernetes the pod's own
// limits still hold; for per-run limits inside a pod the container needs a
// writable, delegated cgroup2 subtree (privileged, or a runtime that
// delegates: see docs/limits.md) passed as Options.Parent.
//
// Placement on cgroup v2 needs clone3 (CLONE_INTO_CGROUP); where a
// seccomp profile refuses clone3 (Docker's default returns ENOSYS) the
// cgroup limits are NotEnforced rather than applied after the child
// started.
//
// Does not protect against: disk usage by many files each under the size
// limit (use a quota or a size-limited tmpfs), I/O bandwidth, kernel
// memory outside the memory controller's accounting, a run whose limits
// Result reports as not enforced.
package limits

import (
	"errors"
	"fmt"
)

// DefaultPids is the processes-and-threads limit of DefaultSpec: enough
// for a parallel build (make -j, a JVM, a language server) and far below
// kernel.pid_max (32768 by default), so a fork bomb stops long before the
// host runs out of pids.
const DefaultPids = 4096

// cpuPeriodUs is the CFS period for Spec.CPUs: 100 ms, the kernel's
// default cpu.cfs_period_us and cpu.max period.
const cpuPeriodUs = 100_000

// Spec is what one run may use. The zero value limits nothing; DefaultSpec
// is the default of landjail's flags.
type Spec struct {
	// Pids bounds the run's processes plus threads (pids controller);
	// 0 means no limit.
	Pids int64 `json:"pids,omitempty"`
	// Memory bounds the run's RAM in bytes (memory controller: anonymous
	// memory, page cache and kernel memory the controller charges); swap
	// is not allowed beyond it. When exceeded the kernel's OOM killer
	// kills a process of the run. 0 means no limit.
	Memory int64 `json:"memory_bytes,omitempty"`
	// CPUs bounds the run's CPU bandwidth in CPUs (0.5: half of one CPU
	// per period; 2: two full CPUs); 0 means no limit.
	CPUs float64 `json:"cpus,omitempty"`
	// FileSize bounds the size in bytes of any file a process of the run
	// writes (RLIMIT_FSIZE: a write past it fails with EFBIG; SIGXFSZ is
	// raised and kills a process that does not ignore it); 0 means no
	// limit.
	FileSize int64 `json:"file_size_bytes,omitempty"`
	// NoFile bounds the number of open files per process (RLIMIT_NOFILE);
	// 0 means the inherited limit.
	NoFile uint64 `json:"nofile,omitempty"`
}

// DefaultSpec is the Spec of landjail's default flags: Pids DefaultPids,
// nothing else.
func DefaultSpec() Spec { return Spec{Pids: DefaultPids} }

// Validate checks s: no negative value, no NaN, CPUs at least 0.01 when
// set (the kernel's smallest quota, 1 ms, per 100 ms period), Memory at
// least MinMemory when set. Errors wrap ErrInvalid.
func (s Spec) Validate() error {
	switch {
	case s.Pids < 0:
		return fmt.Errorf("limits: pids %d: %w", s.Pids, ErrInvalid)
	case s.Memory < 0 || (s.Memory > 0 && s.Memory < MinMemory):
		return fmt.Errorf("limits: memory %d bytes (minimum %d): %w", s.Memory, MinMemory, ErrInvalid)
	case s.CPUs < 0 || (s.CPUs > 0 && s.CPUs*cpuPeriodUs < 1000) || s.CPUs != s.CPUs:
		return fmt.Errorf("limits: cpus %g (minimum 0.01): %w", s.CPUs, ErrInvalid)
	case s.FileSize < 0:
		return fmt.Errorf("limits: file size %d: %w", s.FileSize, ErrInvalid)
	}
	return nil
}

// MinMemory is the smallest Spec.Memory accepted: 4 MiB. Below that a
// process cannot even execute a shell, and the limit is more likely a
// unit mistake (--memory 64 meant 64M).
const MinMemory = 4 << 20

// Mechanism says how a limit is enforced. The zero value is NotEnforced.
type Mechanism uint8

const (
	// NotEnforced: the limit was asked for but nothing enforces it here.
	NotEnforced Mechanism = iota
	// CgroupV2 is a cgroup v2 (unified hierarchy) controller.
	CgroupV2
	// CgroupV1 is a cgroup v1 hierarchy's controller.
	CgroupV1
	// Rlimit is a per-process resource limit set in the child before
	// execve (setrlimit(2)).
	Rlimit
)

var mechanismNames = [...]string{"not-enforced", "cgroup-v2", "cgroup-v1", "rlimit"}

// String returns "not-enforced", "cgroup-v2", "cgroup-v1" or "rlimit".
func (m Mechanism) String() string {
	if int(m) < len(mechanismNames) {
		return mechanismNames[m]
	}
	return fmt.Sprintf("Mechanism(%d)", m)
}

// MarshalText is String, for JSON.
func (m Mechanism) MarshalText() ([]byte, error) {
	if int(m) >= len(mechanismNames) {
		return nil, fmt.Errorf("limits: unknown Mechanism %d", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText parses String's output.
func (m *Mechanism) UnmarshalText(b []byte) error {
	for i, n := range mechanismNames {
		if n == string(b) {
			*m = Mechanism(i)
			return nil
		}
	}
	return fmt.Errorf("limits: unknown mechanism %q", b)
}

// Limit is one requested limit and how it is enforced.
type Limit struct {
	// Name is "pids", "memory", "cpus", "file_size" or "nofile".
	Name string `json:"name"`
	// Value is the limit as given: a count, bytes, or CPUs.
	Value float64 `json:"value"`
	// Mechanism enforces it; NotEnforced with Note saying why.
	Mechanism Mechanism `json:"mechanism"`
	// Note says why it is not enforced, or a caveat (swap).
	Note string `json:"note,omitempty"`
}

// Result is what a run used and how its limits were enforced. A nil
// statistic is not available on this kernel or mechanism; zero is a
// measured zero.
type Result struct {
	// Limits lists each limit of the Spec (those set), in the order
	// pids, memory, cpus, file_size, nofile.
	Limits []Limit `json:"limits"`
	// Cgroup is the run's group directory (in the pids hierarchy on v1),
	// empty without one.
	Cgroup string `json:"cgroup,omitempty"`
	// PeakMemory is the largest memory usage in bytes (v1
	// memory.max_usage_in_bytes; v2 memory.peak, Linux 5.19).
	PeakMemory *uint64 `json:"peak_memory_bytes,omitempty"`
	// PeakPids is the largest number of processes plus threads
	// (pids.peak: v2 since Linux 6.1, v1 since 6.13; nil before).
	PeakPids *uint64 `json:"peak_pids,omitempty"`
	// CPUTime is the CPU time used in microseconds (v1 cpuacct.usage; v2
	// cpu.stat usage_usec).
	CPUTimeUsec *uint64 `json:"cpu_time_usec,omitempty"`
	// OOMKills counts processes the OOM killer killed in the run (v1
	// memory.oom_control oom_kill, Linux 4.13; v2 memory.events
	// oom_kill).
	OOMKills *uint64 `json:"oom_kills,omitempty"`
	// PidsRefused counts forks and clones refused by the pids limit (v1
	// and v2 pids.events max).
	PidsRefused *uint64 `json:"pids_refused,omitempty"`
	// Killed counts processes still alive at Close and killed then.
	Killed int `json:"killed"`
}

// Errors.
var (
	// ErrNotEnforced: a requested limit cannot be enforced here (no
	// usable cgroup); returned by Start with Options.Strict, wrapped in a
	// message naming the limits and why.
	ErrNotEnforced = errors.New("limits: not enforced")
	// ErrInvalid: a Spec or flag value is out of range or malformed.
	ErrInvalid = errors.New("limits: invalid value")
	// ErrClosed: the Run was closed.
	ErrClosed = errors.New("limits: run closed")
)
