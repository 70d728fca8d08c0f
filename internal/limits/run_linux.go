package limits

import (
	"errors"
	"fmt"
	"github.com/landjail/landjail/internal/selfproc"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"

	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/procstat"
)

// Options choose where a Run's group goes.
type Options struct {
	// Parent is an existing cgroup v2 directory the caller may write (a
	// delegated subtree: cgroup.procs, cgroup.subtree_control and the
	// controllers' files writable by the caller); the run's group is made
	// in it. "" means the default: as root, a "landjail" group under the
	// cgroup v2 root (unified mode) or under each v1 hierarchy.
	Parent string
	// Strict makes Start fail with ErrNotEnforced when a limit of the
	// Spec cannot be enforced, instead of reporting it NotEnforced.
	Strict bool
	// Stats makes a cgroup v1 run join the memory and cpuacct
	// hierarchies even without a memory or CPU limit, so that
	// Result.PeakMemory and CPUTimeUsec are available; it costs about
	// 0.3 ms more per run on a loaded 2-vCPU host (BenchmarkRun). Without
	// it they are nil unless the limit is set. cgroup v2 always has them.
	Stats bool
}

// Run is one run's control group. Its methods are safe for concurrent
// use; Close ends it.
type Run struct {
	spec   Spec
	limits []Limit
	g      group // nil without a cgroup

	mu     sync.Mutex
	closed bool
	res    *Result
	// frozen: a Freeze that no Thaw (or Close) ended yet; JoinThread
	// waits on thawed (L is &mu) while it is set.
	frozen bool
	thawed *sync.Cond
}

// thawedCond returns r.thawed, made on first use (r.mu held).
func (r *Run) thawedCond() *sync.Cond {
	if r.thawed == nil {
		r.thawed = sync.NewCond(&r.mu)
	}
	return r.thawed
}

// setFrozen records whether the group is frozen (r.mu held), waking the
// JoinThreads waiting for a thaw.
func (r *Run) setFrozen(on bool) {
	r.frozen = on
	if !on {
		r.thawedCond().Broadcast()
	}
}

// group is one cgroup version's implementation.
type group interface {
	// path is the group's directory (v1: in the first hierarchy).
	path() string
	// cloneFD is a v2 directory descriptor for CLONE_INTO_CGROUP, or -1.
	cloneFD() int
	// joinThread moves the calling thread into the group.
	joinThread() error
	// joinProcess moves the calling process into the group.
	joinProcess() error
	// stats fills the statistics of r.
	stats(r *Result)
	// kill kills every process in the group and waits until it is empty;
	// it returns how many it killed.
	kill() (int, error)
	// freeze freezes (true) or thaws (false) the group, without waiting
	// for the transition.
	freeze(on bool) error
	// procs is the file listing the group's members for Freeze's check
	// (v2 cgroup.procs; v1 the freezer hierarchy's tasks, every thread),
	// "" when it cannot be frozen.
	procs() string
	// remove removes the group's directories and closes descriptors.
	remove() error
}

// seq numbers the groups of this process.
var seq atomic.Uint64

// selfStart is this process's start time in clock ticks since boot
// (/proc/self/stat field 22): with the pid it names the owner of a
// group, so that a reused pid is not mistaken for the owner.
func selfStart() uint64 {
	st, _ := procstat.SelfStartTime()
	return st
}

// startTime returns /proc/PID/stat's starttime, or 0 when the process
// does not exist.
func startTime(pid int) uint64 {
	st, _ := procstat.StartTime(pid)
	return st
}

// selfPIDNS is the inode number of this process's PID namespace: pids
// in group names are only meaningful there.
var selfPIDNS = sync.OnceValue(func() uint64 {
	if ino := selfproc.PIDNamespace(); ino != 0 {
		return ino // read by internal/prenet/early's goroutine
	}
	var st unix.Stat_t
	if unix.Stat("/proc/self/ns/pid", &st) != nil {
		return 0
	}
	return st.Ino
})

// groupName is the name of this process's next group:
// landjail-PIDNS-PID-START-SEQ.
func groupName() string {
	return "landjail-" + strconv.FormatUint(selfPIDNS(), 10) + "-" + strconv.Itoa(os.Getpid()) + "-" +
		strconv.FormatUint(selfStart(), 10) + "-" + strconv.FormatUint(seq.Add(1), 10)
}

// parseGroupName splits landjail-PIDNS-PID-START-SEQ.
func parseGroupName(name string) (pidns uint64, pid int, start uint64, ok bool) {
	f := strings.Split(name, "-")
	if len(f) != 5 || f[0] != "landjail" {
		return 0, 0, 0, false
	}
	ns, err0 := strconv.ParseUint(f[1], 10, 64)
	p, err1 := strconv.Atoi(f[2])
	s, err2 := strconv.ParseUint(f[3], 10, 64)
	_, err3 := strconv.ParseUint(f[4], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil || err3 != nil || p <= 0 {
		return 0, 0, 0, false
	}
	return ns, p, s, true
}

// ownerGone reports whether the landjail process that made group name is
// gone (no such pid, or a pid reused by another process). A group made
// in another PID namespace (another container sharing the cgroup file
// system) is never judged: its pid means nothing here.
func ownerGone(name string) bool {
	ns, pid, start, ok := parseGroupName(name)
	if !ok || ns != selfPIDNS() || ns == 0 {
		return false // not ours to judge: leave it alone
	}
	return startTime(pid) != start
}

// Start makes the run's control group with spec's limits, after removing
// stale groups of dead landjail processes (once per process; on cgroup
// v1 a quick check of the pids hierarchy, every hierarchy when it finds
// one or every 10 s at most: cleanDefault). Without a
// usable cgroup the cgroup limits are NotEnforced (Result.Limits says
// why), or with opts.Strict Start fails with ErrNotEnforced. Errors:
// ErrInvalid (spec), ErrNotEnforced, and the file system's errors
// (*fs.PathError) when a group could not be made or written. Cost: see
// BenchmarkRun (create, place, kill, remove).
func Start(spec Spec, opts Options) (*Run, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	cleanStaleOnce(opts.Parent)
	return start(spec, opts)
}

// start is Start after the sweep (spec valid).
func start(spec Spec, opts Options) (*Run, error) {
	r := &Run{spec: spec}
	var (
		mech   = NotEnforced
		reason string
		g      group
		err    error
	)
	p := usable()
	v2 := opts.Parent != "" || p.Mechanism == CgroupV2
	switch {
	case v2 && clone3Refused() != nil:
		reason = "clone3 refused here (" + clone3Refused().Error() + ", a seccomp profile?): without CLONE_INTO_CGROUP " +
			"a child cannot start in a cgroup v2 group (a thread cannot join one alone)"
	case opts.Parent != "":
		mech = CgroupV2
		g, err = newV2(opts.Parent, spec)
	case p.Mechanism == CgroupV2:
		mech = CgroupV2
		g, err = newV2(p.v2Root, spec)
	case p.Mechanism == CgroupV1:
		mech = CgroupV1
		g, err = newV1(p.v1, spec, opts.Stats)
	default:
		reason = p.Reason
	}
	if err != nil {
		return nil, err
	}
	r.g = g
	r.limits = r.describe(mech, reason)
	if opts.Strict {
		var bad []string
		for _, l := range r.limits {
			if l.Mechanism == NotEnforced {
				bad = append(bad, l.Name+" ("+l.Note+")")
			}
		}
		if len(bad) > 0 {
			if g != nil {
				g.remove()
			}
			return nil, fmt.Errorf("%w: %s", ErrNotEnforced, strings.Join(bad, ", "))
		}
	}
	return r, nil
}

// describe lists the Spec's limits with their mechanism.
func (r *Run) describe(mech Mechanism, reason string) []Limit {
	s := r.spec
	var out []Limit
	cg := func(name string, v float64, ctrl string) {
		l := Limit{Name: name, Value: v, Mechanism: mech, Note: reason}
		if mech != NotEnforced {
			l.Note = ""
			if n, ok := r.g.(noter); ok {
				l.Mechanism, l.Note = n.note(ctrl, l.Mechanism)
			}
		}
		out = append(out, l)
	}
	if s.Pids > 0 {
		cg("pids", float64(s.Pids), "pids")
	}
	if s.Memory > 0 {
		cg("memory", float64(s.Memory), "memory")
	}
	if s.CPUs > 0 {
		cg("cpus", s.CPUs, "cpu")
	}
	var soft string
	if (s.FileSize > 0 || s.NoFile > 0) && !hasCapSysResource() {
		soft = "soft limit only (no CAP_SYS_RESOURCE to restore the caller's hard limit): the command may raise it"
	}
	if s.FileSize > 0 {
		out = append(out, Limit{Name: "file_size", Value: float64(s.FileSize), Mechanism: Rlimit, Note: soft})
	}
	if s.NoFile > 0 {
		out = append(out, Limit{Name: "nofile", Value: float64(s.NoFile), Mechanism: Rlimit, Note: soft})
	}
	return out
}

// noter is implemented by groups that refine a controller's mechanism
// (a missing swap accounting file, ...).
type noter interface {
	note(ctrl string, m Mechanism) (Mechanism, string)
}

// RlimitsHard records that the process forking the command sets Rlimits
// soft and hard whatever landjail's own capabilities (the user-namespace
// stage: nsinit.Spec.Rlimits): the notes that the file-size and
// open-files limits are soft only are dropped from Limits.
func (r *Run) RlimitsHard() {
	for i := range r.limits {
		if r.limits[i].Mechanism == Rlimit {
			r.limits[i].Note = ""
		}
	}
}

// Limits returns the Spec's limits and how each is enforced.
func (r *Run) Limits() []Limit { return append([]Limit(nil), r.limits...) }

// Path returns the run's group directory (on v1 the one in the pids
// hierarchy, else the first made), or "" when the run has none.
func (r *Run) Path() string {
	if r.g == nil {
		return ""
	}
	return r.g.path()
}

// CgroupFD returns a descriptor of the run's cgroup v2 directory, for
// syscall.SysProcAttr.CgroupFD with UseCgroupFD (clone3's
// CLONE_INTO_CGROUP, Linux 5.7): the child then starts in the group. It
// returns -1 on cgroup v1 (use JoinThread) and without a group. The
// descriptor belongs to the Run (closed by Close).
func (r *Run) CgroupFD() int {
	if r.g == nil {
		return -1
	}
	return r.g.cloneFD()
}

// JoinThread moves the calling OS thread, alone, into the run's group
// (cgroup v1: its thread id written to each hierarchy's tasks file,
// through descriptors opened by Start, so it works inside a mount
// namespace where /sys is masked or read-only, and under Landlock): every
// process it forks afterwards starts there. The caller must be on a
// locked thread that is destroyed afterwards (osthread.Run), or the
// runtime would run other goroutines limited. On cgroup v2 (a thread
// cannot join a domain group alone) and without a group it does nothing;
// use CgroupFD there. Safe to call from a thread confined by Landlock and
// without capabilities (the files were opened before), provided it still
// has the uid of Start's caller. While the group is frozen (Freeze) it
// waits for Thaw or Close; ErrClosed once the run is closed.
func (r *Run) JoinThread() error {
	if r.g == nil || r.g.cloneFD() >= 0 {
		return nil
	}
	// Under r.mu, and never into a frozen group: Freeze checks that no
	// thread of this process is in the group and then freezes it, and a
	// thread joining between the two, or after, was frozen (red team
	// round 25, R25a-4: a spawning thread of landjail seen in a FROZEN
	// group; a frozen thread of a Go program can stop all of it at the
	// next garbage collection). The spawn waits for the thaw instead.
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.frozen && !r.closed {
		r.thawedCond().Wait()
	}
	if r.closed {
		return ErrClosed
	}
	return r.g.joinThread()
}

// JoinProcess moves the whole calling process (every thread) into the
// run's group, for a caller about to replace itself with the command
// (exec.Cmd.Exec: execve keeps the group). Nobody is left to Close the
// run then: when the command has exited, the next landjail's Start
// (CleanStale) kills what it left and removes the group, as for a
// landjail killed with SIGKILL (the owner's pid and start time are the
// command's until it exits). Writes the pid to cgroup.procs (v1: of each
// hierarchy; v2: of the group, allowed for a whole process). Without a
// group it does nothing.
func (r *Run) JoinProcess() error {
	if r.g == nil {
		return nil
	}
	return r.g.joinProcess()
}

// ChildRlimit is one resource limit for the child: setrlimit(Resource,
// {Cur, Max}) before execve.
type ChildRlimit struct {
	Resource int // unix.RLIMIT_*
	Cur, Max uint64
}

// Rlimits returns the per-process limits of the Spec (RLIMIT_FSIZE,
// RLIMIT_NOFILE, soft = hard so that the child cannot raise them), to be
// set in the child before execve (exec.Cmd.Rlimits, which sets only the
// soft ones without CAP_SYS_RESOURCE: the Limit's Note then says so).
func (r *Run) Rlimits() []ChildRlimit {
	var out []ChildRlimit
	if r.spec.FileSize > 0 {
		v := uint64(r.spec.FileSize)
		out = append(out, ChildRlimit{Resource: unix.RLIMIT_FSIZE, Cur: v, Max: v})
	}
	if r.spec.NoFile > 0 {
		out = append(out, ChildRlimit{Resource: unix.RLIMIT_NOFILE, Cur: r.spec.NoFile, Max: r.spec.NoFile})
	}
	return out
}

// Start starts c (an os/exec.Cmd) in the run's group: on a fresh locked
// thread that joins the group (v1), or cloned into it (v2, setting
// c.SysProcAttr's CgroupFD). The thread is destroyed afterwards. The
// Spec's rlimits are not applied (os/exec cannot set them in the child):
// use exec.Cmd for those.
func (r *Run) Start(c *osexec.Cmd) error {
	if fd := r.CgroupFD(); fd >= 0 {
		if c.SysProcAttr == nil {
			c.SysProcAttr = &syscall.SysProcAttr{}
		}
		c.SysProcAttr.UseCgroupFD, c.SysProcAttr.CgroupFD = true, fd
		return c.Start()
	}
	return osthread.Run(func() error {
		if err := r.JoinThread(); err != nil {
			return err
		}
		return c.Start()
	})
}

// Kill kills every process in the run's group now (SIGKILL; v2
// cgroup.kill, v1 freeze, kill, thaw) and waits until the group is empty
// (at most 5 s). Processes that left the group cannot leave it without
// the right to write a cgroup.procs file elsewhere. It returns how many
// processes it killed.
func (r *Run) Kill() (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, ErrClosed
	}
	if r.g == nil {
		return 0, nil
	}
	return r.g.kill()
}

// Freeze freezes every process of the run's group until Thaw: the
// command is held while landjail works off what it owes its CPU share
// (cpushare; red team round 22, R22c-2). It uses cgroup v2's
// cgroup.freeze (Linux 5.2) or the cgroup v1 freezer hierarchy's
// freezer.state (Documentation/admin-guide/cgroup-v1/freezer-subsystem.rst)
// and does not wait for the group to be frozen. A Close meanwhile kills
// the group frozen (Close thaws on v1; cgroup.kill reaches frozen tasks
// on v2). It never freezes a group that holds one of this process's own
// threads: a frozen thread of a Go program can stop all of it at the
// next garbage collection. A spawning thread that joined it alone
// (Start, cgroup v1) leaves it as it exits, which may be just after
// Start returned: Freeze waits up to 1 s for that. Errors: ErrClosed;
// ErrNotEnforced without a group, without a freezer (v1 without the
// freezer hierarchy), or with this process in the group (the main or
// calling thread, or another still there after 1 s); the file system's.
func (r *Run) Freeze() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.g == nil || r.g.procs() == "" {
		return ErrNotEnforced
	}
	if err := r.waitOwnThreadsLeft(); err != nil {
		return err
	}
	if err := r.g.freeze(true); err != nil {
		return err
	}
	r.setFrozen(true)
	return nil
}

// ownThreadWait bounds how long Freeze waits for a spawning thread of
// this process to leave the group.
const ownThreadWait = time.Second

// waitOwnThreadsLeft waits until no thread of this process is in the
// group (r.mu held). Only a spawning thread joins it (JoinThread, on a
// locked thread the runtime destroys once the spawn returned): right
// after Start it may still be listed, exiting, and answering
// ErrNotEnforced then left a --cpus hold undone (the CI's
// TestHeldRunsEnd). It returns ErrNotEnforced at once for the main
// thread or the calling thread, which never leave, and after
// ownThreadWait for any other. v1's tasks file lists each thread;
// cgroup.procs would list only a thread group's leader (red team round
// 23).
func (r *Run) waitOwnThreadsLeft() error {
	deadline := time.Now().Add(ownThreadWait)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 10*time.Millisecond) {
		ids, err := readPids(r.g.procs())
		if err != nil {
			return err
		}
		own := false
		for _, id := range ids {
			if id == os.Getpid() || id == unix.Gettid() {
				return ErrNotEnforced
			}
			if unix.Access(fmt.Sprintf("/proc/self/task/%d", id), unix.F_OK) == nil {
				own = true
			}
		}
		if !own {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrNotEnforced
		}
		time.Sleep(delay)
	}
}

// Closed reports whether Close was called.
func (r *Run) Closed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// Thaw ends a Freeze. Errors: the file system's; none once the run is
// closed (Close killed it) or without a group.
func (r *Run) Thaw() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.g == nil || r.g.procs() == "" {
		return nil
	}
	err := r.g.freeze(false)
	if err == nil {
		r.setFrozen(false)
	}
	return err
}

// Close reads the statistics, kills what is left of the run (as Kill),
// removes its group and returns the Result. A second Close returns the
// same Result and error-free. Errors: the kill's or the removal's (the
// Result is returned in any case).
func (r *Run) Close() (*Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.res, nil
	}
	r.closed = true
	r.setFrozen(false) // a JoinThread waiting returns ErrClosed
	res := &Result{Limits: r.limits}
	r.res = res
	if r.g == nil {
		return res, nil
	}
	res.Cgroup = r.g.path()
	n, kerr := r.g.kill()
	res.Killed = n
	r.g.stats(res)
	rerr := r.g.remove()
	return res, errors.Join(kerr, rerr)
}

// Stats reads the statistics so far, without ending the run.
func (r *Run) Stats() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := Result{Limits: r.limits}
	if r.g != nil && !r.closed {
		res.Cgroup = r.g.path()
		r.g.stats(&res)
	}
	return res
}

// readUint reads a file holding one unsigned number ("max" is not one).
func readUint(path string) (uint64, bool) {
	b, err := procstat.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// readKey reads "key value" lines and returns key's value.
func readKey(path, key string) (uint64, bool) {
	b, err := procstat.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func ptr(v uint64, ok bool) *uint64 {
	if !ok {
		return nil
	}
	return &v
}

// readPids reads a cgroup.procs file.
func readPids(path string) ([]int, error) {
	b, err := procstat.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// rmdirRetry removes an (empty) cgroup directory: the kernel refuses with
// EBUSY for a short while after the last process exited (its css is
// still being released), so it retries for up to 2 s.
func rmdirRetry(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for delay := 100 * time.Microsecond; ; delay *= 2 {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return &fs.PathError{Op: "rmdir", Path: dir, Err: err}
		}
		time.Sleep(min(delay, 50*time.Millisecond))
	}
}

// writeFile writes s to an existing control file (no *os.File: see
// procstat.ReadFile). Errors are *fs.PathError{Op: "write"} wrapping the
// errno of the open or the write.
func writeFile(path, s string) error {
	const flags = unix.O_WRONLY | unix.O_TRUNC | unix.O_CLOEXEC // as runc's library opens them
	fd, err := unix.Open(path, flags, 0)
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Open(path, flags, 0)
	}
	if err == nil {
		_, err = unix.Write(fd, []byte(s))
		for errors.Is(err, unix.EINTR) {
			_, err = unix.Write(fd, []byte(s))
		}
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// waitEmpty polls procsFile until it lists no process (but skip, when not
// 0) or timeout passes, calling each with the list (to kill newcomers)
// before each new poll.
func waitEmpty(procsFile string, timeout time.Duration, each func([]int), skip int) error {
	deadline := time.Now().Add(timeout)
	for delay := 50 * time.Microsecond; ; delay *= 2 {
		pids, err := readPids(procsFile)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if len(pids) == 0 || (skip != 0 && !slices.Contains(pids, skip)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("limits: %d processes still in %s after %v", len(pids), filepath.Dir(procsFile), timeout)
		}
		if each != nil {
			each(pids)
		}
		time.Sleep(min(delay, 10*time.Millisecond))
	}
}

// hasCapSysResource reports whether the calling thread has
// CAP_SYS_RESOURCE effective: then exec.Cmd.Rlimits sets hard limits
// (exec.HardRlimits).
func hasCapSysResource() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if unix.Capget(&hdr, &data[0]) != nil {
		return false
	}
	return data[unix.CAP_SYS_RESOURCE/32].Effective&(1<<(unix.CAP_SYS_RESOURCE%32)) != 0
}

// clone3Refused returns nil when clone3(2) is available (Linux 5.3; a
// call with a nil argument fails with EINVAL), else its errno: ENOSYS
// from an old kernel or, as in Docker's default profile, from seccomp.
// Not cached: a filter may be installed later in the process's life.
func clone3Refused() error {
	_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
	if e == unix.EINVAL || e == unix.EFAULT {
		return nil
	}
	return e
}
