package limits

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/mountinfo"
	"github.com/landjail/landjail/internal/procstat"
	"github.com/landjail/landjail/internal/selfproc"
)

// Probe is what Available found: which mechanism Start uses for the
// cgroup limits (pids, memory, cpus) and why not a better one. The file
// limits are always Rlimit.
type Probe struct {
	// Mechanism is CgroupV2, CgroupV1 or NotEnforced.
	Mechanism Mechanism `json:"mechanism"`
	// Reason says why cgroup v2 (and v1) is not used, empty when v2 is.
	Reason string `json:"reason,omitempty"`
	// Controllers are the usable controllers of Mechanism's hierarchy
	// (among pids, memory, cpu, cpuacct, freezer).
	Controllers []string `json:"controllers,omitempty"`
	// CgroupNamespace is true when this process is not in the initial
	// cgroup namespace (a container, usually).
	CgroupNamespace bool `json:"cgroup_namespace"`
	// ReadOnly is true when the cgroup file system is mounted read-only
	// here (a container without cgroup delegation).
	ReadOnly bool `json:"read_only"`
	// Systemd says whether systemd runs here ("running": per-user
	// delegation through systemd-run --user --scope could give a
	// non-root caller a cgroup v2 subtree; this package does not ask it
	// and expects the subtree as Options.Parent), or "absent".
	Systemd string `json:"systemd"`

	v2Root string            // cgroup2 mount in unified mode
	v1     map[string]string // v1 controller → mount point
}

// initCgroupNSIno is the initial cgroup namespace's inode number
// (PROC_CGROUP_INIT_INO, include/linux/proc_ns.h).
const initCgroupNSIno = 0xEFFFFFFB

// Available probes, once per process, which mechanism enforces the
// cgroup limits here: cgroup v2 in unified mode as root with the pids,
// memory and cpu controllers; else cgroup v1 as root with at least the
// pids hierarchy mounted; else NotEnforced. For landjail doctor.
//
// The file-system facts are read once; whether clone3 (needed to place a
// child in a v2 group) is refused is asked on every call, since a seccomp
// filter may come later.
func Available() Probe {
	p := usable()
	p.Systemd, p.CgroupNamespace = systemdState(), inCgroupNamespace()
	return p
}

// usable is Available without Systemd and CgroupNamespace, which only
// the report needs (Start does not: two system calls fewer per run).
func usable() Probe {
	p := probe()
	if p.Mechanism == CgroupV2 {
		if err := clone3Refused(); err != nil {
			p.Mechanism = NotEnforced
			p.Reason = "clone3 refused (" + err.Error() + "): no CLONE_INTO_CGROUP"
		}
	}
	return p
}

// systemdState is Probe.Systemd: "running" when /run/systemd/system is
// a directory (sd_booted(3)), else "absent".
var systemdState = sync.OnceValue(func() string {
	if st, err := os.Stat("/run/systemd/system"); err == nil && st.IsDir() {
		return "running"
	}
	return "absent"
})

// inCgroupNamespace is Probe.CgroupNamespace.
var inCgroupNamespace = sync.OnceValue(func() bool {
	l, err := os.Readlink("/proc/self/ns/cgroup")
	return err == nil && l != "cgroup:["+strconv.FormatUint(initCgroupNSIno, 10)+"]"
})

// probe reads the mount table once: the facts of Probe but Systemd and
// CgroupNamespace (see Available).
var probe = sync.OnceValue(func() Probe {
	p := Probe{v1: map[string]string{}}
	var v2mnt string
	var roV1, roV2 bool
	mi, err := selfproc.MountInfo(), error(nil) // read by internal/prenet/early's goroutine
	if mi == nil {
		mi, err = procstat.ReadFileSize("/proc/self/mountinfo", 8192)
	}
	if err != nil {
		p.Reason = "cannot read /proc/self/mountinfo: " + err.Error()
		return p
	}
	for line := range strings.Lines(string(mi)) {
		// id parent maj:min root mountpoint options [optional...] - fstype source superopts
		left, right, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 6 || len(rf) < 3 {
			continue
		}
		mnt, ro := mountinfo.Unescape(lf[4]), slices.Contains(strings.Split(lf[5], ","), "ro")
		switch rf[0] {
		case "cgroup2":
			if mnt == "/sys/fs/cgroup" {
				v2mnt, roV2 = mnt, ro
			}
		case "cgroup":
			for _, o := range strings.Split(rf[2], ",") {
				switch o {
				case "pids", "memory", "cpu", "cpuacct", "freezer":
					if _, dup := p.v1[o]; !dup {
						p.v1[o] = mnt
						roV1 = roV1 || ro
					}
				}
			}
		}
	}
	root := unix.Geteuid() == 0
	if v2mnt != "" {
		ctrls, _ := os.ReadFile(filepath.Join(v2mnt, "cgroup.controllers"))
		for _, c := range strings.Fields(string(ctrls)) {
			if c == "pids" || c == "memory" || c == "cpu" {
				p.Controllers = append(p.Controllers, c)
			}
		}
		switch {
		case roV2:
			p.ReadOnly = true
			p.Reason = "cgroup2 at /sys/fs/cgroup is mounted read-only (a container without cgroup delegation?)"
		case !root:
			p.Reason = "not root: cgroup v2 needs a delegated subtree given as Options.Parent (systemd " + systemdState() + ")"
		case !slices.Contains(p.Controllers, "pids"):
			p.Reason = "the cgroup v2 root offers no pids controller"
		default:
			p.Mechanism, p.v2Root = CgroupV2, v2mnt
		}
		return p
	}
	p.Reason = "no cgroup2 mount at /sys/fs/cgroup (legacy or hybrid layout)"
	p.Controllers = nil
	for _, c := range []string{"pids", "memory", "cpu", "cpuacct", "freezer"} {
		if _, ok := p.v1[c]; ok {
			p.Controllers = append(p.Controllers, c)
		}
	}
	switch {
	case len(p.v1) == 0:
		p.Reason += "; no cgroup v1 hierarchy of pids, memory or cpu either"
	case roV1:
		p.ReadOnly = true
		p.Reason += "; the cgroup v1 hierarchies are mounted read-only"
	case !root:
		p.Reason += "; cgroup v1 needs root"
	case p.v1["pids"] == "":
		p.Reason += "; no cgroup v1 pids hierarchy"
	default:
		p.Mechanism = CgroupV1
	}
	return p
})
