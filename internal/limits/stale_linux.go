package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

var (
	staleMu   sync.Mutex
	staleDone = map[string]bool{}
)

// cleanStaleOnce runs cleanDefault, and CleanStale for parent when not
// "", once per process each.
func cleanStaleOnce(parent string) {
	staleMu.Lock()
	defer staleMu.Unlock()
	cleanStaleLocked(parent, nil)
}

// cleanStaleLocked is cleanStaleOnce with staleMu held; named, when not
// nil, is called once before the stale groups are removed: after they
// are found by the quick check of cgroup v1, before the full sweep
// (which finds and removes them in one) otherwise (cleanDefault).
func cleanStaleLocked(parent string, named func()) {
	if !staleDone[""] {
		staleDone[""] = true
		cleanDefault(time.Now(), named)
	}
	if parent != "" && !staleDone[parent] {
		staleDone[parent] = true
		CleanStale(parent)
	}
}

// staleEvery is how long a start may skip the sweep of every cgroup v1
// hierarchy when the quick check (cleanDefault) found no stale group.
const staleEvery = 10 * time.Second

// cleanDefault is Start's sweep of the default parents. On cgroup v2 (one
// directory) and without a pids or freezer hierarchy it is CleanStale("").
// On cgroup v1 every run has a group in the pids and the freezer
// hierarchy (v1Wanted), so a landjail killed with SIGKILL leaves one
// there: the quick check reads that one "landjail" directory and removes
// the stale groups it names from every hierarchy (an execve'd run leaves
// its group for the next start: JoinProcess); CleanStale("") (every
// hierarchy's directory read) runs when the last full sweep is staleEvery
// old or more, for what a partial removal left in another hierarchy
// alone. The time of the last full sweep is the atime of that directory:
// kernfs keeps what utimes sets (only its owner, root, can set it) and
// neither reads nor child groups change it, while its mtime follows every
// group made or removed once set; an atime in the future counts as old.
// Where it cannot be read or set, every start sweeps everything, as
// before. The quick check costs one directory read and one /proc/PID/stat read per group,
// against one per hierarchy and group for the full sweep.
func cleanDefault(now time.Time, named func()) {
	if named == nil {
		named = func() {}
	}
	p := probe()
	if p.Mechanism != CgroupV1 {
		named()
		CleanStale("")
		return
	}
	var dir string
	for _, c := range []string{"pids", "freezer"} {
		if mnt, ok := p.v1[c]; ok {
			dir = filepath.Join(mnt, "landjail")
			break
		}
	}
	if dir != "" && !sweepDue(dir, now) {
		names := map[string]bool{}
		for _, name := range staleNames(dir) {
			names[name] = true
		}
		named()
		cleanV1(p, names)
		return
	}
	named()
	CleanStale("")
	if dir != "" {
		os.Chtimes(dir, now, time.Time{}) // atime; best effort: unset, the next start sweeps again
	}
}

// sweepDue reports whether the full sweep stamped on dir's atime is
// staleEvery old or more, in the future, or unreadable.
func sweepDue(dir string, now time.Time) bool {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return true
	}
	m := time.Unix(st.Atim.Unix())
	return now.Sub(m) >= staleEvery || m.After(now.Add(time.Second))
}

// CleanStale kills the processes of, and removes, every group named
// landjail-PIDNS-PID-START-SEQ whose owner (the landjail process PID,
// in this process's PID namespace PIDNS, started at START) is gone: those
// a landjail killed with SIGKILL left behind. Groups of other PID
// namespaces are left alone.
// parent "" means the default parents (each hierarchy's "landjail"
// group); else a cgroup v2 directory (Options.Parent). Groups of live
// landjail processes and directories of other names are left alone. It
// returns how many groups it removed; errors are joined, one per group
// that could not be removed. Start calls it once per process for Options.Parent,
// and for the default parents as cleanDefault says (on cgroup v1 every
// 10 s at most; the stale groups the pids hierarchy names at every start).
func CleanStale(parent string) (int, error) {
	p := probe()
	var errs []error
	n := 0
	if parent != "" || p.Mechanism == CgroupV2 {
		dir := parent
		if dir == "" {
			dir = filepath.Join(p.v2Root, "landjail")
		}
		for _, name := range staleNames(dir) {
			g := filepath.Join(dir, name)
			_, err := killV2(g)
			if err == nil {
				err = rmdirRetry(g)
			}
			if err == nil {
				n++
			}
			errs = append(errs, err)
		}
		return n, errors.Join(errs...)
	}
	if p.Mechanism != CgroupV1 {
		return 0, nil
	}
	names := map[string]bool{}
	for _, c := range v1Controllers {
		if mnt, ok := p.v1[c]; ok {
			for _, name := range staleNames(filepath.Join(mnt, "landjail")) {
				names[name] = true
			}
		}
	}
	return cleanV1(p, names)
}

// cleanV1 kills the processes of, and removes, the cgroup v1 groups named
// names (stale ones) in every hierarchy that has them; as CleanStale.
func cleanV1(p Probe, names map[string]bool) (int, error) {
	var errs []error
	n := 0
	for name := range names {
		// killV1 freezes through fz only when the group is there (a
		// write to its freezer.state fails otherwise).
		var fz, cpu string
		if mnt, ok := p.v1["freezer"]; ok {
			fz = filepath.Join(mnt, "landjail", name)
		}
		if mnt, ok := p.v1["cpu"]; ok {
			cpu = filepath.Join(mnt, "landjail", name)
		}
		var err error
		done := map[string]bool{}
		for _, c := range v1Controllers {
			mnt, ok := p.v1[c]
			if !ok || done[mnt] {
				continue
			}
			done[mnt] = true
			g := filepath.Join(mnt, "landjail", name)
			// The usual stale group is empty (its command exited): one
			// rmdir removes it, where the kernel refuses (EBUSY) while a
			// process is left in it. Not there (ENOENT): nothing to do.
			rerr := unix.Rmdir(g)
			if rerr == nil || errors.Is(rerr, unix.ENOENT) {
				continue
			}
			_, kerr := killV1(g, fz, cpu)
			err = errors.Join(err, kerr, rmdirRetry(g))
		}
		if err == nil {
			n++
		}
		errs = append(errs, err)
	}
	return n, errors.Join(errs...)
}

// staleNames lists the groups in dir whose owner is gone.
func staleNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && ownerGone(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
