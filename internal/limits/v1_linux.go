package limits

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// v1Group is a run's group in each cgroup v1 hierarchy it uses: the
// limits written as v1Writes says, placement, statistics, kill and
// removal.
type v1Group struct {
	dirs  []string          // one per distinct hierarchy, pids first
	ctrl  map[string]string // controller → the group's directory there
	tasks []int             // each dir's tasks file, open for writing (raw: no poller)
	swap  bool              // memory.memsw exists: swap is limited too
}

// v1Controllers are the hierarchies a run may join: pids for the limit
// and to find the run's processes, freezer to kill them, memory for a
// memory limit, cpu for a CPU limit, cpuacct for the CPU time; memory
// and cpuacct also for statistics alone with Options.Stats.
var v1Controllers = []string{"pids", "memory", "cpuacct", "cpu", "freezer"}

// v1Wanted reports whether a run joins hierarchy c. Each hierarchy costs
// a mkdir and an rmdir per run, 0.1 to 0.35 ms each here on a loaded
// 2-vCPU host (memory the dearest), so only what the Spec uses is
// joined; on v2 one directory serves every controller.
func v1Wanted(c string, spec Spec, stats bool) bool {
	switch c {
	case "memory":
		return spec.Memory > 0 || stats
	case "cpuacct":
		return spec.CPUs > 0 || stats
	case "cpu":
		return spec.CPUs > 0
	}
	return true
}

func newV1(mounts map[string]string, spec Spec, stats bool) (_ *v1Group, err error) {
	name := groupName()
	g := &v1Group{ctrl: map[string]string{}}
	defer func() {
		if err != nil {
			g.remove()
		}
	}()
	seen := map[string]string{}
	for _, c := range v1Controllers {
		mnt, ok := mounts[c]
		if !ok || !v1Wanted(c, spec, stats) {
			continue
		}
		if d, ok := seen[mnt]; ok { // co-mounted (cpu,cpuacct)
			g.ctrl[c] = d
			continue
		}
		parent := filepath.Join(mnt, "landjail")
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		d := filepath.Join(parent, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
		seen[mnt], g.ctrl[c] = d, d
		g.dirs = append(g.dirs, d)
		tp := filepath.Join(d, "tasks")
		t, err := unix.Open(tp, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: tp, Err: err}
		}
		g.tasks = append(g.tasks, t)
	}
	if d, ok := g.ctrl["memory"]; ok {
		_, err := os.Stat(filepath.Join(d, "memory.memsw.limit_in_bytes"))
		g.swap = err == nil
	}
	if err := applyWrites(v1Writes(spec, g.swap), func(c string) string { return g.ctrl[c] }); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *v1Group) note(ctrl string, m Mechanism) (Mechanism, string) {
	if _, ok := g.ctrl[ctrl]; !ok {
		return NotEnforced, "no cgroup v1 " + ctrl + " hierarchy"
	}
	if ctrl == "memory" && !g.swap {
		return m, "RAM only: no swap accounting (memory.memsw), the run may also use swap"
	}
	return m, ""
}

func (g *v1Group) path() string {
	if len(g.dirs) == 0 {
		return ""
	}
	return g.dirs[0]
}

func (g *v1Group) cloneFD() int { return -1 }

// joinThread writes "0" (the writing thread itself), not the thread's
// id: for pid 0 the kernel skips the global cgroup_threadgroup_rwsem
// (cgroup_procs_write_start: a thread moving itself cannot exit or exec
// under it, Linux 6.0), whose write lock waits for an RCU grace period
// when it was not taken in the last one: 11.4 ms median (p90 15 ms) per
// run for the id on this 2-vCPU host, 23 µs for "0" (a throwaway program
// joining a fresh group every 60 ms, 25 rounds each). The thread that
// joins is the same either way.
func (g *v1Group) joinThread() error {
	self := []byte("0")
	for i, t := range g.tasks {
		_, err := unix.Write(t, self)
		for errors.Is(err, unix.EINTR) {
			_, err = unix.Write(t, self)
		}
		if err != nil {
			return &fs.PathError{Op: "write", Path: filepath.Join(g.dirs[i], "tasks"), Err: err}
		}
	}
	return nil
}

func (g *v1Group) joinProcess() error {
	for _, d := range g.dirs {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), itoa(os.Getpid())); err != nil {
			return err
		}
	}
	return nil
}

func (g *v1Group) stats(r *Result) {
	if d, ok := g.ctrl["memory"]; ok {
		r.PeakMemory = ptr(readUint(filepath.Join(d, "memory.max_usage_in_bytes")))
		r.OOMKills = ptr(readKey(filepath.Join(d, "memory.oom_control"), "oom_kill"))
	}
	if d, ok := g.ctrl["cpuacct"]; ok {
		if ns, ok := readUint(filepath.Join(d, "cpuacct.usage")); ok {
			r.CPUTimeUsec = ptr(ns/1000, true)
		}
	}
	if d, ok := g.ctrl["pids"]; ok {
		r.PidsRefused = ptr(readKey(filepath.Join(d, "pids.events"), "max"))
		r.PeakPids = ptr(readUint(filepath.Join(d, "pids.peak"))) // Linux 6.13 on v1
	}
}

func (g *v1Group) kill() (int, error) {
	if len(g.dirs) == 0 {
		return 0, nil
	}
	return killV1(g.dirs[0], g.ctrl["freezer"], g.ctrl["cpu"])
}

// killV1 kills every process of the group whose cgroup.procs is in dir,
// freezing it first through the freezer directory fz (when not "") so
// that nothing forks between reading the list and the signal, and waits
// until dir is empty. Once every process has its SIGKILL, the CPU quota
// of its cpu directory (when not "") is lifted: a killed task runs no
// code of its own, only its exit, which --cpus otherwise throttled (red
// team round 30, R30b-1: 4,000 orphans under --cpus 0.05 were still
// dying when the 5 s wait ended, and landjail re-read and re-killed
// them every 10 ms meanwhile).
func killV1(dir, fz, cpu string) (int, error) {
	procs := filepath.Join(dir, "cgroup.procs")
	// A spawning thread of this process joined the group; it leaves as it
	// dies, right after its fork. Never freeze or kill ourselves.
	self := os.Getpid()
	pids, err := readPids(procs)
	if err != nil || len(pids) == 0 {
		return 0, err // the usual end: nothing left, nothing to freeze
	}
	if slices.Contains(pids, self) {
		waitEmpty(procs, time.Second, nil, self)
		if pids, err = readPids(procs); err != nil || len(pids) == 0 {
			return 0, err
		}
	}
	killed := map[int]bool{}
	kill := func(pids []int) {
		for _, p := range pids {
			if p != self && unix.Kill(p, unix.SIGKILL) == nil {
				killed[p] = true
			}
		}
	}
	unthrottle := func() {
		if cpu != "" {
			writeFile(filepath.Join(cpu, "cpu.cfs_quota_us"), "-1") // best effort: the wait below bounds it
		}
	}
	frozen := false
	if fz != "" {
		if err := writeFile(filepath.Join(fz, "freezer.state"), "FROZEN"); err == nil {
			frozen = true
			waitFrozen(fz)
			if pids, err := readPids(procs); err == nil {
				kill(pids)
			}
			unthrottle()
			writeFile(filepath.Join(fz, "freezer.state"), "THAWED")
		}
	}
	if !frozen {
		kill(pids)
		unthrottle()
	}
	err = waitEmpty(procs, 5*time.Second, kill, 0)
	return len(killed), err
}

func (g *v1Group) procs() string {
	if fz := g.ctrl["freezer"]; fz != "" {
		return filepath.Join(fz, "tasks")
	}
	return ""
}

func (g *v1Group) freeze(on bool) error {
	state := "THAWED"
	if on {
		state = "FROZEN"
	}
	return writeFile(filepath.Join(g.ctrl["freezer"], "freezer.state"), state)
}

// waitFrozen waits (up to 1 s) for freezer.state to read FROZEN: a task
// in an uninterruptible sleep freezes only when it wakes.
func waitFrozen(fz string) {
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(fz, "freezer.state"))
		if err != nil || string(b) == "FROZEN\n" {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func (g *v1Group) remove() error {
	for _, t := range g.tasks {
		unix.Close(t)
	}
	g.tasks = nil
	var errs []error
	for _, d := range g.dirs {
		errs = append(errs, rmdirRetry(d))
	}
	g.dirs = nil
	return errors.Join(errs...)
}
