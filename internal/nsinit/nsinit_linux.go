package nsinit

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
	"github.com/landjail/landjail/internal/nsview"
)

var (
	registered atomic.Bool
	exe        *os.File
)

// Main is the init stage's entry point. Call it first thing in main (or
// TestMain). In a process started by package exec as the init stage
// (EnvMarker set and the process is PID 1 of its namespace) it runs the
// stage and exits: the target's exit code, 128+n when a signal n killed
// it (PID 1 cannot re-raise a signal on itself: the kernel drops it), 125
// when the stage failed before the target ran (the parent then gets the
// error from the status pipe). Otherwise it opens /proc/self/exe
// (O_RDONLY|O_CLOEXEC; on failure the stage stays unregistered), marks
// the stage registered and returns.
//
// EnvMarker set in a process that is not PID 1 is refused: the process
// exits 125 with a message, so a stray variable cannot turn a program
// into something else.
func Main() {
	if v, ok := os.LookupEnv(EnvMarker); ok {
		if os.Getpid() != 1 {
			fmt.Fprintf(os.Stderr, "landjail: %s set outside a PID namespace init; refusing\n", EnvMarker)
			os.Exit(125)
		}
		os.Exit(runInit(v))
	}
	if registered.Load() {
		return
	}
	f := openExe()
	if f == nil {
		return
	}
	exe = f
	registered.Store(true)
}

// openExe opens /proc/self/exe (O_RDONLY|O_CLOEXEC, blocking) as an
// *os.File that is not registered with the runtime's network poller, or
// returns nil. os.OpenFile would try to register it: the poller's first
// use makes an epoll instance and an eventfd and takes four fcntl and two
// epoll_ctl calls (≈20 µs of every start here), only for epoll_ctl to
// refuse a regular file; the descriptor is only ever passed to a child
// (exec.Cmd.ExtraFiles), never read through the poller.
func openExe() *os.File {
	for {
		fd, err := unix.Open("/proc/self/exe", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == unix.EINTR {
			continue // as os.OpenFile retries
		}
		if err != nil {
			return nil
		}
		return os.NewFile(uintptr(fd), "/proc/self/exe")
	}
}

// Registered reports whether Main ran in this (ordinary) process and the
// init stage can be re-executed.
func Registered() bool { return registered.Load() }

// Exe returns the running binary opened by Main (nil when not
// Registered). Re-execute it as /proc/self/fd/N (execve of the opened
// inode): replacing or deleting the file on disk afterwards changes
// nothing, and writing to it in place fails with ETXTBSY while it runs.
func Exe() *os.File { return exe }

// forwarded are the signals passed on to the target's process group.
var forwarded = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT}

// runInit is the init stage: marker is "SPEC,STATUS[,net][,ids=UID:GID]"
// (parseMarker).
func runInit(marker string) int {
	runtime.LockOSThread() // the main thread stays locked: see forkTarget
	mk, err := parseMarker(marker)
	if err != nil {
		fmt.Fprintf(os.Stderr, "landjail: init: bad %s %q: %v\n", EnvMarker, marker, err)
		return 125
	}
	sfd, tfd := mk.spec, mk.status
	status := os.NewFile(uintptr(tfd), "status")
	unix.CloseOnExec(tfd)
	unix.CloseOnExec(sfd)
	fail := func(op string, err error) int {
		st := Status{Op: op, Msg: err.Error(), Errno: int(unix.EIO)}
		var en unix.Errno
		if errors.As(err, &en) {
			st.Errno = int(en)
		}
		json.NewEncoder(status).Encode(st)
		status.Close()
		return 125
	}
	// The uid and gid maps, when the stage was cloned without them
	// (exec clones it sharing its memory, CLONE_VM|CLONE_VFORK, and
	// cannot write them while suspended): first of all, before any
	// other thread runs (the view must be built with the ids mapped, and
	// its recursive read-only switch fails with EBUSY while a map file
	// is open for writing on the /proc it covers), and before
	// PR_SET_DUMPABLE below, which hands /proc/self to root.
	if mk.ids {
		if op, err := writeIDMaps(mk.uid, mk.gid); err != nil {
			return fail(op, err)
		}
	}
	// Nothing inside may read this process's memory, open its fds or
	// ptrace it through /proc/1 without CAP_SYS_PTRACE; nor may another
	// process of the caller's uid while the stage waits for its spec
	// (a prestarted stage waits for the CLI's planning). Before any
	// other goroutine starts: the one below may read the spec, with the
	// target's descriptors, as soon as it comes.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail("prctl(PR_SET_DUMPABLE)", err)
	}
	// "net": the view will want a network namespace of its own; make it
	// now, on another thread, while the spec is read
	// (nsview.PrepareNetwork).
	if mk.net {
		nsview.PrepareNetwork()
	}
	sigs := make(chan os.Signal, 32)
	notified := make(chan struct{}) // closed once sigs is registered
	// The target is forked from a thread of its own, locked for good
	// (the main thread stays locked above, so this goroutine gets
	// another), which nsview requires; it is confined and dies with the
	// stage. Made now, while the spec is read: it was on the path from
	// the spec to the target. On the socket that thread reads the view
	// sent ahead (woken by the kernel when it comes), builds it at once,
	// then reads the spec itself and forks the target: the main
	// goroutine, locked to the main thread, is not on that path (waking
	// it through the runtime took ≈0.3 ms between the view's reading
	// and the spec's, round 10 of issue 25); it only waits for the
	// target's pid. With the spec on a pipe of its own the main
	// goroutine reads it and hands it over (jobs).
	type job struct {
		sp    *Spec
		files []uintptr
	}
	type started struct {
		pid, listener int
		op            string
		err           error
		sp            *Spec
		passed        []int // descriptors that came with the spec (socket)
	}
	jobs := make(chan job, 1)
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		if sfd == tfd {
			vb, err := readFrame(sfd)
			if err != nil {
				ch <- started{op: "read view", err: err}
				return
			}
			var ah Ahead
			v := new(nsview.View)
			if err := ah.UnmarshalBinary(vb); err != nil {
				ch <- started{op: "decode view", err: err}
				return
			}
			if err := v.UnmarshalBinary(ah.View); err != nil {
				ch <- started{op: "decode view", err: err}
				return
			}
			// The parent's mount table (this namespace is a copy of
			// its): the view's mount-limit check needs no reading of
			// its own.
			nsview.KeepMountTable(ah.Mounts, ah.MountMax)
			viewErr := v.EnterOwnNamespaces()
			sp, files, passed, op, err := takeSpec(sfd, true, v)
			if err != nil {
				ch <- started{op: op, err: err, sp: sp, passed: passed}
				return
			}
			pid, listener, op, err := forkTarget(sp, files, true, viewErr, notified)
			ch <- started{pid, listener, op, err, sp, passed}
			return
		}
		j := <-jobs
		pid, listener, op, err := forkTarget(j.sp, j.files, false, nil, notified)
		ch <- started{pid, listener, op, err, j.sp, nil}
	}()
	// The first signal.Notify costs ≈0.5 ms here (the runtime starts
	// its signal-mask thread and makes a round trip to it per signal):
	// register on another goroutine while the view and the spec are
	// read; the target is forked only once it is done (forkTarget
	// waits), so no signal that should be forwarded can meet the default
	// action. Started last, it is the next to run (the processor's
	// runnext) when the main goroutine blocks: started before the view's
	// goroutine it finished last, ≈0.25 ms after the view thread was
	// ready to fork (round 10 of issue 25).
	go func() {
		signal.Notify(sigs, forwarded...)
		close(notified)
	}()
	if sfd != tfd {
		sp, files, _, op, err := takeSpec(sfd, false, nil)
		if err != nil {
			return fail(op, err)
		}
		jobs <- job{sp, files}
	}
	r := <-ch
	if r.err != nil {
		return fail(r.op, r.err)
	}
	sp, passed := r.sp, r.passed
	pid := r.pid
	status.Write(statusLine(r.listener))
	if !sp.Linger {
		status.Close()
		status = nil
	}
	// The init holds nothing the target could reach once it runs: the
	// target's descriptors (passed ones, and its own stdio, /dev/null),
	// its ruleset and the binary.
	if sp.Passed {
		for _, fd := range append(passed[:sp.NFiles:sp.NFiles], 0, 1, 2) {
			unix.Close(fd)
		}
	} else {
		for i := 0; i < sp.NFiles; i++ {
			unix.Close(i)
		}
	}
	for _, fd := range []int{sp.LandlockFD, sp.ExeFD} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	if sp.KeepFD >= 3 {
		// The parent (landjail) holds the write end until it reaped
		// this process: end of file means it died (SIGKILL, the OOM
		// killer). As PID 1, exiting makes the kernel kill every
		// process of the namespace.
		go func() {
			waitEOF(sp.KeepFD)
			os.Exit(128 + int(unix.SIGKILL))
		}()
	}
	code, empty := supervise(pid, sigs)
	if status != nil {
		// Linger: with nothing left in the namespace, report the
		// status and stay until the parent has gone (its exit closes
		// the keep-alive pipe; the goroutine above then exits too).
		if empty && sp.KeepFD >= 3 {
			if _, err := status.Write(exitLine(code)); err == nil {
				waitEOF(sp.KeepFD)
			}
		}
		status.Close()
	}
	return code
}

// takeSpec reads the spec from sfd (a socket: until end of file, with
// the descriptors passed; otherwise a pipe), decodes and checks it, with
// ahead, the view sent ahead on the socket, as its view, and marks every
// descriptor that must not reach the target close-on-exec. files are the
// target's descriptors 0..NFiles-1. On failure op names the step.
func takeSpec(sfd int, socket bool, ahead *nsview.View) (sp *Spec, files []uintptr, passed []int, op string, err error) {
	var b []byte
	if socket {
		if b, passed, err = readSpecSocket(sfd); err != nil {
			return nil, nil, passed, "read spec", err
		}
	} else {
		specFile := os.NewFile(uintptr(sfd), "spec")
		b, err = io.ReadAll(specFile)
		specFile.Close()
		if err != nil {
			return nil, nil, nil, "read spec", err
		}
	}
	sp = new(Spec)
	if err := sp.UnmarshalBinary(b); err != nil {
		return nil, nil, passed, "decode spec", err
	}
	if ahead != nil {
		if sp.View != nil {
			return nil, nil, passed, "spec", fmt.Errorf("a view both ahead and in the spec: %w", unix.EINVAL)
		}
		sp.View = ahead
	}
	if sp.NFiles < 3 {
		return nil, nil, passed, "spec", fmt.Errorf("nfiles %d: %w", sp.NFiles, unix.EINVAL)
	}
	// files are the target's descriptors 0..NFiles-1: the inherited
	// ones in place, or those passed with the spec (close-on-exec, as
	// received; the fork dup2s them into place, which clears the flag).
	files = make([]uintptr, sp.NFiles)
	for i := range files {
		files[i] = uintptr(i)
	}
	switch {
	case sp.Passed && len(passed) == sp.NFiles+1:
		for i := range files {
			files[i] = uintptr(passed[i])
		}
		sp.LandlockFD = passed[sp.NFiles]
	case sp.Passed || len(passed) > 0:
		return nil, nil, passed, "spec", fmt.Errorf("%d descriptors passed for %d files (passed %v): %w", len(passed), sp.NFiles, sp.Passed, unix.EINVAL)
	}
	// Only files reach the target: everything else this process
	// inherited (the spec, status and Landlock descriptors, the binary;
	// with passed descriptors its own stdio too) is marked close-on-exec
	// (Go's fork closes nothing by itself).
	from := uint(sp.NFiles)
	if sp.Passed {
		from = 0
	}
	if err := unix.CloseRange(from, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return nil, nil, passed, "close_range", err
	}
	if sp.View == nil || sp.LandlockFD < 0 {
		return nil, nil, passed, "spec", fmt.Errorf("no view or no Landlock ruleset: %w", unix.EINVAL)
	}
	return sp, files, passed, "", nil
}

// waitEOF reads fd until end of file or an error other than EINTR.
func waitEOF(fd int) {
	var b [1]byte
	for {
		n, err := unix.Read(fd, b[:])
		if n == 0 || (err != nil && err != unix.EINTR) {
			return
		}
	}
}

// marker is the parsed value of EnvMarker.
type marker struct {
	spec, status int  // the spec's and the status's descriptors (equal: one socket)
	net          bool // the view has a network namespace of its own
	ids          bool // uid and gid below are to be mapped (writeIDMaps)
	uid, gid     int
}

// parseMarker parses "SPEC,STATUS[,net][,ids=UID:GID]": two descriptor
// numbers from 3, then the optional fields in that order. Anything else
// is EINVAL.
func parseMarker(v string) (marker, error) {
	var m marker
	f := strings.Split(v, ",")
	// bad's error is made only for a bad marker: fmt's first use (its
	// printer state, %q) was ≈20 µs of every stage's CPU (round 9 of
	// issue 25).
	bad := func() error { return fmt.Errorf("marker %q: %w", v, unix.EINVAL) }
	if len(f) < 2 {
		return m, bad()
	}
	var err1, err2 error
	m.spec, err1 = strconv.Atoi(f[0])
	m.status, err2 = strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || m.spec < 3 || m.status < 3 {
		return m, bad()
	}
	f = f[2:]
	if len(f) > 0 && f[0] == "net" {
		m.net, f = true, f[1:]
	}
	if len(f) > 0 {
		ids, ok := strings.CutPrefix(f[0], "ids=")
		u, g, ok2 := strings.Cut(ids, ":")
		var err1, err2 error
		m.uid, err1 = strconv.Atoi(u)
		m.gid, err2 = strconv.Atoi(g)
		if !ok || !ok2 || err1 != nil || err2 != nil || m.uid < 0 || m.gid < 0 {
			return m, bad()
		}
		m.ids, f = true, f[1:]
	}
	if len(f) > 0 {
		return m, bad()
	}
	return m, nil
}

// writeIDMaps maps uid and gid (the caller's outside) to themselves in
// this process's user namespace, as an unprivileged process may map its
// own ids only: setgroups "deny" first (user_namespaces(7)), then
// uid_map and gid_map, each one line. It returns the failing file.
func writeIDMaps(uid, gid int) (string, error) {
	for _, w := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", strconv.Itoa(uid) + " " + strconv.Itoa(uid) + " 1\n"},
		{"/proc/self/gid_map", strconv.Itoa(gid) + " " + strconv.Itoa(gid) + " 1\n"},
	} {
		fd, err := unix.Open(w.file, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return "open " + w.file, err
		}
		n, err := unix.Write(fd, []byte(w.data))
		unix.Close(fd)
		if err == nil && n != len(w.data) {
			err = unix.EIO
		}
		if err != nil {
			return "write " + w.file, err
		}
	}
	return "", nil
}

// maxFrame bounds the view frame (the view's JSON): its paths are the
// policy's, far below this.
const maxFrame = 16 << 20

// readFrame reads one frame from the stream socket fd: a 4-byte
// little-endian length, then that many bytes. A descriptor passed with it
// (the parent passes them with the spec, after it) fails with EINVAL.
func readFrame(fd int) ([]byte, error) {
	read := func(b []byte) error {
		for len(b) > 0 {
			oob := make([]byte, unix.CmsgSpace(4))
			n, oobn, _, _, err := unix.Recvmsg(fd, b, oob, unix.MSG_CMSG_CLOEXEC)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return err
			}
			if oobn > 0 {
				if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
					for i := range msgs {
						if fds, err := unix.ParseUnixRights(&msgs[i]); err == nil {
							for _, f := range fds {
								unix.Close(f)
							}
						}
					}
				}
				return fmt.Errorf("descriptors passed with the view: %w", unix.EINVAL)
			}
			if n == 0 {
				return fmt.Errorf("end of file in the view frame: %w", unix.EPIPE)
			}
			b = b[n:]
		}
		return nil
	}
	var hdr [4]byte
	if err := read(hdr[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n > maxFrame {
		return nil, fmt.Errorf("view frame of %d bytes: %w", n, unix.EMSGSIZE)
	}
	b := make([]byte, n)
	if err := read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// maxPassed bounds the descriptors one spec may pass: SCM_MAX_FD
// (include/net/scm.h), what the kernel accepts in one message.
const maxPassed = 253

// readSpecSocket reads the spec from the stream socket fd until the
// parent shuts down its side for writing, and collects every descriptor
// passed with it (SCM_RIGHTS, received close-on-exec). A truncated
// control message (more descriptors than maxPassed) fails with EMSGSIZE.
func readSpecSocket(fd int) (spec []byte, fds []int, err error) {
	buf := make([]byte, 16<<10)
	oob := make([]byte, unix.CmsgSpace(4*maxPassed))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fds, err
		}
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return nil, fds, err
			}
			for i := range msgs {
				rights, err := unix.ParseUnixRights(&msgs[i])
				if err != nil {
					return nil, fds, err
				}
				fds = append(fds, rights...)
			}
		}
		if flags&unix.MSG_CTRUNC != 0 {
			return nil, fds, fmt.Errorf("descriptors passed with the spec truncated: %w", unix.EMSGSIZE)
		}
		if n == 0 {
			return spec, fds, nil
		}
		spec = append(spec, buf[:n]...)
	}
}

// supervise forwards signals to the target's process group (on another
// goroutine) and reaps every child, blocked in wait4 on this thread,
// until the target exits; it returns the exit code, and empty when no
// child was left then (reap): the namespace then holds the stage alone.
// The wait returns as the kernel reaps a child, where a wait woken by
// SIGCHLD through the runtime's signal handler and a channel took ≈0.2
// ms more after the target's exit here (round 4 of issue 25).
func supervise(pid int, sigs chan os.Signal) (code int, empty bool) {
	var done atomic.Bool
	go func() {
		for sig := range sigs {
			if done.Load() {
				return
			}
			if unix.Kill(-pid, sig.(unix.Signal)) != nil {
				unix.Kill(pid, sig.(unix.Signal))
			}
		}
	}()
	for {
		var ws unix.WaitStatus
		p, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// ECHILD: no child left, the target included (not
			// reached: the target is reaped only here).
			done.Store(true)
			return 125, false
		}
		if p != pid {
			continue
		}
		code := -1
		switch {
		case ws.Exited():
			code = ws.ExitStatus()
		case ws.Signaled():
			code = 128 + int(ws.Signal())
		}
		if code < 0 {
			continue // stopped or continued: wait4 without WUNTRACED reports neither
		}
		done.Store(true)
		return code, reap()
	}
}

// reap collects every child that already exited, without blocking, and
// reports whether none is left (wait4 failed with ECHILD): every process
// of the stage's PID namespace descends from it (orphans are reparented
// to it), so none is left in the namespace but the stage, and none can
// appear (nothing is left to fork).
func reap() (empty bool) {
	for {
		var ws unix.WaitStatus
		p, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil || p <= 0 {
			return err == unix.ECHILD
		}
	}
}

// forkTarget, on a locked thread that is not the main thread, builds the
// view (in the stage's own mount namespace, inside its user namespace), mounts the fresh procfs on /proc with hidepid=4 (a process
// is listed only to those that may ptrace-read it: the stage is not),
// grants it in the stage's ruleset, confines the thread (confine) and,
// once notified is closed (the stage's signals are registered), forks
// the target with files as its descriptors 0..len-1. It returns the
// target's pid, or the failing step and its error.
func forkTarget(sp *Spec, files []uintptr, built bool, viewErr error, notified <-chan struct{}) (pid, listener int, op string, err error) {
	// The stage is alone in the mount and IPC namespaces it was cloned
	// into (nsview.UserNSFlags), and after this only waits and reaps:
	// the view is built in them, not in a second pair for this thread.
	// With built, this thread built it already (the view sent ahead)
	// and viewErr is the result.
	if !built {
		viewErr = sp.View.EnterOwnNamespaces()
	}
	if viewErr != nil {
		return 0, 0, "namespace view", viewErr
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "hidepid=4"); err != nil {
		return 0, 0, "mount(proc)", err
	}
	if err := grantProc(sp.LandlockFD); err != nil {
		return 0, 0, "landlock_add_rule(/proc)", err
	}
	if sp.TmpAccess != 0 {
		if err := nsview.GrantPrivateTmp(sp.LandlockFD, sp.TmpAccess); err != nil {
			return 0, 0, "landlock_add_rule(/tmp)", err
		}
	}
	if listener, err = confine(sp); err != nil {
		return 0, 0, "confine", err
	}
	<-notified // the stage's signals are caught before the target exists
	if err := setRlimits(sp.Rlimits); err != nil {
		return 0, 0, "setrlimit", err
	}
	sys := &syscall.SysProcAttr{Setsid: true, Setctty: sp.Setctty, Ctty: sp.Ctty}
	pid, err = syscall.ForkExec(sp.Path, sp.Argv, &syscall.ProcAttr{Dir: sp.Dir, Env: sp.Env, Files: files, Sys: sys})
	if err != nil {
		return 0, 0, "fork/exec", err
	}
	return pid, listener, "", nil
}

// setRlimits sets ls on the stage's process, soft and hard (see
// Spec.Rlimits), each clamped to the hard limit in force. Through
// unix.Prlimit, which tells package syscall not to restore the
// RLIMIT_NOFILE the runtime found at start in the child it forks.
func setRlimits(ls []Rlimit) error {
	for _, l := range ls {
		var old unix.Rlimit
		if err := unix.Prlimit(0, l.Resource, nil, &old); err != nil {
			return fmt.Errorf("getrlimit(%d): %w", l.Resource, err)
		}
		hard := min(l.Max, old.Max)
		if err := unix.Prlimit(0, l.Resource, &unix.Rlimit{Cur: min(l.Cur, hard), Max: hard}, nil); err != nil {
			return fmt.Errorf("setrlimit(%d): %w", l.Resource, err)
		}
	}
	return nil
}

// grantProc adds read access (LANDLOCK_ACCESS_FS_READ_FILE|READ_DIR) on
// the procfs mounted on /proc to the ruleset rulesetFD: Landlock's walk
// skips mount points, so only a rule on the fresh procfs's own root
// grants it. /proc must be a procfs (statfs PROC_SUPER_MAGIC).
func grantProc(rulesetFD int) error {
	pfd, err := unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(pfd, &sfs); err != nil {
		return err
	}
	if sfs.Type != unix.PROC_SUPER_MAGIC {
		return fmt.Errorf("/proc is not a procfs (magic %#x): %w", sfs.Type, unix.EINVAL)
	}
	return ll.LandlockAddPathBeneathRule(rulesetFD, &ll.PathBeneathAttr{ParentFd: pfd, AllowedAccess: ll.AccessFSReadFile | ll.AccessFSReadDir}, 0)
}

// confine drops capabilities (the stage's ambient ones, valid in its user
// namespace only, never reach the target, KeepCaps or not: the caller had
// none), sets no_new_privs, applies the Landlock ruleset and installs the
// seccomp program on the calling (locked) thread only.
func confine(sp *Spec) (listener int, err error) {
	if err := DropCaps(); err != nil {
		return 0, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(sp.LandlockFD, sp.LandlockFlags); err != nil {
		return 0, fmt.Errorf("landlock_restrict_self: %w", err)
	}
	if len(sp.Seccomp) > 0 {
		prog, err := DecodeProgram(sp.Seccomp)
		if err != nil {
			return 0, err
		}
		var flags uintptr
		if sp.SeccompListener {
			flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
		}
		r1, err := bpfprog.SetModeFilter(prog, flags)
		if err != nil {
			return 0, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", err)
		}
		if sp.SeccompListener {
			listener = int(r1) // close-on-exec: the target never holds it
		}
	}
	return listener, nil
}

// EncodeProgram serializes a BPF program for Spec.Seccomp (8 bytes per
// instruction, native byte order: both ends are the same binary).
func EncodeProgram(prog []unix.SockFilter) []byte {
	if len(prog) == 0 {
		return nil
	}
	n := len(prog) * int(unsafe.Sizeof(prog[0]))
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&prog[0])), n)...)
}

// DecodeProgram is the inverse of EncodeProgram (nil for no bytes); it
// fails with EINVAL when the length is not a multiple of 8.
func DecodeProgram(b []byte) ([]unix.SockFilter, error) {
	sz := int(unsafe.Sizeof(unix.SockFilter{}))
	if len(b)%sz != 0 {
		return nil, fmt.Errorf("nsinit: seccomp program of %d bytes: %w", len(b), unix.EINVAL)
	}
	if len(b) == 0 {
		return nil, nil
	}
	prog := make([]unix.SockFilter, len(b)/sz)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&prog[0])), len(b)), b)
	return prog, nil
}

// DropCaps empties the calling thread's ambient, bounding (when it holds
// CAP_SETPCAP; without it NO_NEW_PRIVS already keeps file capabilities
// from granting anything) and inheritable capability sets. Effective and
// permitted are kept so that a child can still switch to a credential
// between fork and execve; execve then computes
// P' = (P_inh & F_inh) | (F_perm & bounding) | ambient = ∅, even for uid
// 0 (capabilities(7)). All three calls act on the calling thread only.
// Errors: the failing prctl(2) or capset(2) errno, wrapped.
func DropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("exec: prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("exec: capget: %w", err)
	}
	if data[unix.CAP_SETPCAP/32].Effective&(1<<(unix.CAP_SETPCAP%32)) != 0 {
		// Capabilities above the kernel's last one fail with EINVAL.
		for cp := 0; cp < 64; cp++ {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(cp), 0, 0, 0); err != nil {
				if errors.Is(err, unix.EINVAL) {
					break
				}
				return fmt.Errorf("exec: prctl(PR_CAPBSET_DROP, %d): %w", cp, err)
			}
		}
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("exec: capset: %w", err)
	}
	return nil
}
