package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

var (
	staleMu   sync.Mutex
	staleDone = map[string]bool{}
)

// cleanStaleOnce runs CleanStale for the default parents, and for parent
// when not "", once per process each.
func cleanStaleOnce(parent string) {
	staleMu.Lock()
	defer staleMu.Unlock()
	if !staleDone[""] {
		staleDone[""] = true
		CleanStale("")
	}
	if parent != "" && !staleDone[parent] {
		staleDone[parent] = true
		CleanStale(parent)
	}
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
// that could not be removed. Start calls it once per process.
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
	for name := range names {
		var fz string
		if mnt, ok := p.v1["freezer"]; ok {
			if _, err := os.Stat(filepath.Join(mnt, "landjail", name)); err == nil {
				fz = filepath.Join(mnt, "landjail", name)
			}
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
			if _, serr := os.Stat(g); serr != nil {
				continue
			}
			_, kerr := killV1(g, fz)
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
