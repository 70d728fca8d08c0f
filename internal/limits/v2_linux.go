package limits

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// v2Group is a run's group in the cgroup v2 hierarchy: its directory,
// its descriptor for CLONE_INTO_CGROUP, the limits (v2Writes),
// cgroup.kill and removal.
type v2Group struct {
	dir   string
	fd    *os.File
	ctrls map[string]bool // controllers enabled in the group
}

// newV2 makes the group in parent. For the default root parent (the
// cgroup2 mount) the group goes into a "landjail" child of it, with the
// controllers enabled on the way down.
func newV2(parent string, spec Spec) (_ *v2Group, err error) {
	g := &v2Group{ctrls: map[string]bool{}}
	defer func() {
		if err != nil {
			g.remove()
		}
	}()
	want := []string{"pids", "memory", "cpu"}
	if parent == probe().v2Root {
		if err := enableControllers(parent, want); err != nil {
			return nil, err
		}
		parent = filepath.Join(parent, "landjail")
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	// In a delegated parent that holds processes the kernel refuses
	// (EBUSY: no internal processes); the limits are then not enforced
	// and note says why.
	enableControllers(parent, want)
	g.dir = filepath.Join(parent, groupName())
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(g.dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	for _, c := range strings.Fields(string(b)) {
		g.ctrls[c] = true
	}
	fd, err := unix.Open(g.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: g.dir, Err: err}
	}
	g.fd = os.NewFile(uintptr(fd), g.dir)
	if err := setV2(g.dir, g.ctrls, spec); err != nil {
		return nil, err
	}
	return g, nil
}

// setV2 writes spec's limits into dir, for the controllers ctrls has
// (v2Writes).
func setV2(dir string, ctrls map[string]bool, spec Spec) error {
	return applyWrites(v2Writes(ctrls, spec), func(string) string { return dir })
}

// enableControllers enables those of want that dir offers in its
// children (cgroup.subtree_control).
func enableControllers(dir string, want []string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return err
	}
	have := strings.Fields(string(b))
	on, _ := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	var add []string
	for _, c := range want {
		if contains(have, c) && !contains(strings.Fields(string(on)), c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return writeFile(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(add, " "))
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func (g *v2Group) note(ctrl string, m Mechanism) (Mechanism, string) {
	if !g.ctrls[ctrl] {
		return NotEnforced, "no cgroup v2 " + ctrl + " controller in " + filepath.Dir(g.dir)
	}
	return m, ""
}

func (g *v2Group) path() string { return g.dir }

func (g *v2Group) cloneFD() int {
	if g.fd == nil {
		return -1
	}
	return int(g.fd.Fd())
}

func (g *v2Group) joinThread() error { return nil }

func (g *v2Group) joinProcess() error {
	return writeFile(filepath.Join(g.dir, "cgroup.procs"), strconv.Itoa(os.Getpid()))
}

func (g *v2Group) stats(r *Result) {
	r.PeakMemory = ptr(readUint(filepath.Join(g.dir, "memory.peak")))
	r.PeakPids = ptr(readUint(filepath.Join(g.dir, "pids.peak")))
	r.CPUTimeUsec = ptr(readKey(filepath.Join(g.dir, "cpu.stat"), "usage_usec"))
	r.OOMKills = ptr(readKey(filepath.Join(g.dir, "memory.events"), "oom_kill"))
	r.PidsRefused = ptr(readKey(filepath.Join(g.dir, "pids.events"), "max"))
}

func (g *v2Group) kill() (int, error) { return killV2(g.dir) }

// killV2 kills every process in dir's group by cgroup.kill (Linux 5.14;
// before it: freeze, kill each, thaw) and waits until it is empty.
func killV2(dir string) (int, error) {
	procs := filepath.Join(dir, "cgroup.procs")
	pids, err := readPids(procs)
	if err != nil || len(pids) == 0 {
		return 0, err
	}
	kill := func(pids []int) {
		for _, p := range pids {
			unix.Kill(p, unix.SIGKILL)
		}
	}
	// Once every process has its SIGKILL, cpu.max is lifted: a killed
	// task only exits, which --cpus otherwise throttled (killV1, R30b-1).
	unthrottle := func() { writeFile(filepath.Join(dir, "cpu.max"), "max") } // best effort; absent without the cpu controller
	if err := writeFile(filepath.Join(dir, "cgroup.kill"), "1"); err != nil {
		if ferr := writeFile(filepath.Join(dir, "cgroup.freeze"), "1"); ferr == nil {
			if p, err := readPids(procs); err == nil {
				kill(p)
			}
			unthrottle()
			writeFile(filepath.Join(dir, "cgroup.freeze"), "0")
		} else {
			kill(pids)
			unthrottle()
		}
	} else {
		unthrottle()
	}
	return len(pids), waitEmpty(procs, 5*time.Second, kill, 0)
}

func (g *v2Group) procs() string { return filepath.Join(g.dir, "cgroup.procs") }

func (g *v2Group) freeze(on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	return writeFile(filepath.Join(g.dir, "cgroup.freeze"), v)
}

func (g *v2Group) remove() error {
	if g.fd != nil {
		g.fd.Close()
		g.fd = nil
	}
	if g.dir == "" {
		return nil
	}
	err := rmdirRetry(g.dir)
	g.dir = ""
	return err
}
