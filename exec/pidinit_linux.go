package exec

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/reaper"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// pidInit is the parent's handle on one PID namespace: its init (PID 1,
// forked by cloneInit, a child of this process), a pidfd on it, and the
// write end of its keep-alive pipe.
type pidInit struct {
	pid   int
	pidfd int
	keepW *os.File
	once  sync.Once
	// With CLONE_VM the init runs in this process's memory: its
	// arguments and stack stay referenced until it is reaped.
	args  *initArgs
	stack []byte
	// leftovers is how many processes the namespace still held when it
	// ended (set by close).
	leftovers int
	// statusR is the init's status pipe until ready read it.
	statusR *os.File
	// ownMountNS: the init has a copy of the view's mount namespace
	// (CLONE_NEWNS), which join enters; without it the init mounted its
	// procfs in the cloning thread's own view.
	ownMountNS bool
	// deferEnd: Cmd.DeferNamespaceEnd (set before the child can exit).
	deferEnd atomic.Bool
}

// lingering holds the inits that end when this process exits
// (Cmd.DeferNamespaceEnd): their keep-alive pipes stay open, and with
// CLONE_VM their stacks and arguments, in this process's memory, stay
// referenced until then.
var lingering struct {
	mu   sync.Mutex
	inis []*pidInit
}

// testProcFS, when set, is the file-system type the init mounts on /proc
// instead of "proc" (a test makes that step fail with it).
var testProcFS atomic.Pointer[string]

// forkInit makes newPIDInit fork its init even where haveCloneVM (a test
// runs the fork path on an architecture that has both).
var forkInit atomic.Bool

// initStackSize is the init's own stack with CLONE_VM: its code pushes
// nothing; the kernel would write a signal frame there only if a fault
// ever reached it.
const initStackSize = 16 << 10

// newPIDInit clones the init of a new PID namespace from the calling
// thread, which must be locked and inside the namespace view; with
// ownMountNS the init's mount namespace is a copy of the thread's,
// without it the init mounts its procfs in the thread's own. It returns
// at once with a pidfd on the init: call ready before anything uses
// /proc.
// Errors: the failing step's errno (EPERM where a container's seccomp
// profile refuses CLONE_NEWPID), wrapped.
func newPIDInit(ownMountNS bool) (*pidInit, error) {
	var st [2]int
	if err := unix.Pipe2(st[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("exec: PID namespace: pipe2: %w", err)
	}
	statusR := os.NewFile(uintptr(st[0]), "init-status")
	var kp [2]int
	if err := unix.Pipe2(kp[:], unix.O_CLOEXEC); err != nil {
		unix.Close(st[1])
		return nil, fmt.Errorf("exec: PID namespace: pipe2: %w", err)
	}
	a := &initArgs{
		flags:    unix.CLONE_NEWPID | uintptr(unix.SIGCHLD),
		statusW:  uintptr(st[1]),
		keepR:    uintptr(kp[0]),
		none:     cstr("none"),
		root:     cstr("/"),
		proc:     cstr(cmp.Or(ptrOr(testProcFS.Load()), "proc")),
		procDir:  cstr("/proc"),
		procData: cstr("hidepid=4"),
		fullMask: ^uint64(0),
	}
	a.ign[0] = 1 // SIG_IGN
	if ownMountNS {
		a.flags |= unix.CLONE_NEWNS
	}
	var pid int
	var e syscall.Errno
	var stack []byte
	if haveCloneVM && !forkInit.Load() {
		// No copy of the address space: the child runs the assembly
		// init in this memory, on its own stack, signals blocked.
		a.flags |= unix.CLONE_VM
		stack = make([]byte, initStackSize)
		top := uintptr(unsafe.Pointer(&stack[len(stack)-64])) &^ 15
		var all, old unix.Sigset_t
		for i := range all.Val {
			all.Val[i] = ^all.Val[i]
		}
		if err := unix.PthreadSigmask(unix.SIG_SETMASK, &all, &old); err != nil {
			unix.Close(st[1])
			unix.Close(kp[0])
			unix.Close(kp[1])
			return nil, fmt.Errorf("exec: PID namespace: rt_sigprocmask: %w", err)
		}
		p, en := cloneInitVM(a, top)
		unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
		pid, e = int(p), syscall.Errno(en)
	} else {
		pid, e = cloneInit(a)
	}
	unix.Close(st[1])
	unix.Close(kp[0])
	keepW := os.NewFile(uintptr(kp[1]), "init-keepalive")
	if e != 0 {
		keepW.Close()
		statusR.Close()
		return nil, fmt.Errorf("exec: PID namespace: clone(CLONE_NEWPID): %w", e)
	}
	ini := &pidInit{pid: pid, pidfd: -1, keepW: keepW, args: a, stack: stack, ownMountNS: ownMountNS}
	fd, err := unix.PidfdOpen(pid, 0) // our child, not reaped: cannot be another process
	if err != nil {
		statusR.Close()
		ini.close()
		return nil, fmt.Errorf("exec: PID namespace: pidfd_open: %w", err)
	}
	ini.pidfd = fd
	ini.statusR = statusR
	return ini, nil
}

// ready waits until the init reported that its procfs is mounted (or
// why not: the failing step's errno, wrapped; the namespace is then
// ended). Until then the caller may do what does not need /proc.
func (ini *pidInit) ready() error {
	statusR := ini.statusR
	ini.statusR = nil
	defer statusR.Close()
	var word [8]byte
	n, err := readFull(statusR, word[:])
	if err != nil || n != len(word) {
		ini.close()
		return fmt.Errorf("exec: PID namespace: the init died before reporting: %w", unix.EIO)
	}
	if errno := binary.NativeEndian.Uint32(word[:4]); errno != 0 {
		step := binary.NativeEndian.Uint32(word[4:])
		ini.close()
		name := "?"
		if int(step) < len(initStepNames) {
			name = initStepNames[step]
		}
		return fmt.Errorf("exec: PID namespace init: %s: %w", name, unix.Errno(errno))
	}
	return nil
}

// cstr is s NUL-terminated (s has no NUL).
func cstr(s string) *byte {
	b, _ := unix.BytePtrFromString(s)
	return b
}

// readFull reads until b is full, EOF or an error.
func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// join moves the calling thread (locked, never to run anything else)
// into the init's PID namespace (for its children) and, when the init has
// a mount namespace of its own, into that and its network and IPC
// namespaces, so
// that what it forks next is a process of the namespace that sees its
// procfs. Without ownMountNS the calling thread must be the one that
// cloned the init (it already shares its mount and network namespaces).
// setns(2) with a pidfd: Linux 5.8.
func (ini *pidInit) join() error {
	if !ini.ownMountNS {
		if err := unix.Setns(ini.pidfd, unix.CLONE_NEWPID); err != nil {
			return fmt.Errorf("exec: PID namespace: setns: %w", err)
		}
		return nil
	}
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("exec: PID namespace: unshare(CLONE_FS): %w", err)
	}
	if err := unix.Setns(ini.pidfd, unix.CLONE_NEWNS|unix.CLONE_NEWPID|unix.CLONE_NEWNET|unix.CLONE_NEWIPC); err != nil {
		return fmt.Errorf("exec: PID namespace: setns: %w", err)
	}
	return nil
}

// procRuleset returns a new ruleset with rs's rules plus read access
// (LANDLOCK_ACCESS_FS_READ_FILE|READ_DIR) to the procfs mounted on /proc
// in the calling thread's mount namespace (the init's, after join):
// Landlock's path walk skips mount points, so a rule on the fresh
// procfs's root is the only way to grant it, and it must not be added to
// rs's own ruleset (one rule per spawn would accumulate there). /proc
// must be a procfs (statfs PROC_SUPER_MAGIC): never grant something
// else mounted there.
func procRuleset(rs *landlock.Ruleset) (*os.File, uint32, error) {
	f, flags, err := rs.ForkFD()
	if err != nil {
		return nil, 0, err
	}
	if err := grantProc(f); err != nil {
		f.Close()
		return nil, 0, err
	}
	if err := grantTmp(f, rs); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, flags, nil
}

// grantProc adds the rule procRuleset describes to the ruleset f.
func grantProc(f *os.File) error {
	pfd, err := unix.Open("/proc", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: "/proc", Err: err}
	}
	defer unix.Close(pfd)
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(pfd, &sfs); err != nil {
		return &fs.PathError{Op: "fstatfs", Path: "/proc", Err: err}
	}
	if sfs.Type != unix.PROC_SUPER_MAGIC {
		return &fs.PathError{Op: "landlock_add_rule", Path: "/proc", Err: fmt.Errorf("not a procfs (magic %#x): %w", sfs.Type, unix.EINVAL)}
	}
	attr := ll.PathBeneathAttr{ParentFd: pfd, AllowedAccess: ll.AccessFSReadFile | ll.AccessFSReadDir}
	if err := ll.LandlockAddPathBeneathRule(int(f.Fd()), &attr, 0); err != nil {
		return &fs.PathError{Op: "landlock_add_rule", Path: "/proc", Err: err}
	}
	return nil
}

// grantTmp adds to the ruleset f a rule granting every right rs handles
// on the view's private /tmp (a fresh tmpfs in the calling thread's mount
// namespace), when rs's view has one: like /proc, a mount point that
// Landlock's path walk does not reach from any rule of rs. Without it the
// private /tmp was neither writable nor listable.
func grantTmp(f *os.File, rs *landlock.Ruleset) error {
	if v, ok := rs.View(); !ok || !v.HasPrivateTmp() {
		return nil
	}
	return nsview.GrantPrivateTmp(int(f.Fd()), rs.HandledAccessFS())
}

// close ends the namespace: it closes the keep-alive pipe (the init
// exits when it reads EOF), sends SIGKILL through the pidfd for good
// measure, and reaps the init (ECHILD: someone else did, e.g. a
// subreaper sweep). The kernel kills every process left in the
// namespace when its init exits. With deferEnd and nothing left in the
// namespace it keeps the init instead (lingering), which ends when this
// process exits. Idempotent.
func (ini *pidInit) close() {
	if ini != nil {
		ini.once.Do(ini.end)
	}
}

func (ini *pidInit) end() {
	if ini.statusR != nil {
		ini.statusR.Close()
		ini.statusR = nil
	}
	// What the child left running was reparented to the init: its
	// children, counted before they are killed. When there are none, the
	// init is the namespace's only process left (the child's own
	// children were reparented to it before the child's exit was
	// reported), so nothing can run once it is sent SIGKILL: it is reaped
	// in the background, and its exit (which tears down its copy of the
	// mount namespace, an RCU grace period) is off the caller's path.
	// With leftovers the caller waits until the kernel has killed them.
	b, err := readProcFile("/proc/" + strconv.Itoa(ini.pid) + "/task/" + strconv.Itoa(ini.pid) + "/children")
	if err == nil {
		ini.leftovers = len(strings.Fields(string(b)))
	}
	// Deferred (DeferNamespaceEnd): only with no process left but the
	// init, which forks nothing and holds its memory share until this
	// process exits (the point: see DeferNamespaceEnd), so only with
	// CLONE_VM; not when the count is unknown.
	if err == nil && ini.leftovers == 0 && ini.deferEnd.Load() && ini.stack != nil {
		lingering.mu.Lock()
		lingering.inis = append(lingering.inis, ini)
		lingering.mu.Unlock()
		return
	}
	ini.keepW.Close()
	ini.keepW = nil
	if ini.leftovers == 0 && ini.pidfd >= 0 {
		// Reaped in the background: until then a caller's
		// reaper.KillDescendants must not count the init, on its way
		// out, as something the command left (CI under the race
		// detector: killed_descendants 1 for a command that left
		// nothing). Spared until waitid(WNOWAIT) sees it gone, as Spare
		// asks.
		reaper.Spare(ini.pid)
	}
	if ini.pidfd >= 0 {
		unix.PidfdSendSignal(ini.pidfd, unix.SIGKILL, nil, 0)
	} else {
		unix.Kill(ini.pid, unix.SIGKILL)
	}
	if ini.leftovers == 0 {
		go func() {
			if ini.pidfd >= 0 {
				var info unix.Siginfo
				for unix.Waitid(unix.P_PIDFD, ini.pidfd, &info, unix.WEXITED|unix.WNOWAIT, nil) == unix.EINTR {
				}
				reaper.Unspare(ini.pid)
			}
			ini.reap()
		}()
		return
	}
	ini.reap()
}

// readProcFile reads the procfs file name with plain syscalls:
// os.ReadFile first tries to register the descriptor with the runtime's
// poller (four more syscalls, refused for a procfs file), and end runs on
// the way from the command's exit to Wait's return.
func readProcFile(name string) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := make([]byte, 0, 512)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return nil, err
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// reap waits for the (killed) init and releases what it used.
func (ini *pidInit) reap() {
	if ini.pidfd >= 0 {
		var info unix.Siginfo
		var err error = unix.EINTR
		for errors.Is(err, unix.EINTR) {
			err = unix.Waitid(unix.P_PIDFD, ini.pidfd, &info, unix.WEXITED, nil)
		}
		if errors.Is(err, unix.EINVAL) {
			var ws unix.WaitStatus
			unix.Wait4(ini.pid, &ws, 0, nil)
		}
		unix.Close(ini.pidfd)
		ini.pidfd = -1
	} else {
		var ws unix.WaitStatus
		unix.Wait4(ini.pid, &ws, 0, nil)
	}
	ini.args, ini.stack = nil, nil
}

// confineWith is confineOnly with a ruleset descriptor of the caller's
// (procRuleset) instead of rs's own.
func confineWith(rulesetFD *os.File, flags uint32, keepCaps bool, filter *seccomp.Filter, br *brokerSpec) error {
	br = br.prepare(filter)
	defer br.close()
	if !keepCaps {
		if err := dropCaps(); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("exec: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(int(rulesetFD.Fd()), flags); err != nil {
		return fmt.Errorf("exec: landlock_restrict_self: %w", err)
	}
	return installFilter(filter, br)
}

// endWith ends the namespace as soon as the process target (the spawned
// child, a process of the namespace) exits, without reaping it (waitid
// WNOWAIT on a pidfd: whoever waits for the child still gets its
// status): anything it left running in the namespace is killed then,
// before the caller's Wait drains the child's output, which a leftover
// process could otherwise hold open until WaitDelay. The pidfd is polled
// by the runtime's network poller (it becomes readable when the process
// exits), so the wait holds no thread. Without a pidfd (ESRCH: it
// already exited and was reaped) the namespace ends at once.
func (ini *pidInit) endWith(target int) {
	fd, err := unix.PidfdOpen(target, unix.PIDFD_NONBLOCK)
	if err != nil {
		ini.close()
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		ini.close()
		return
	}
	go func() {
		rc.Read(func(fd uintptr) bool {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
			return err != nil || info.Signo != 0 // exited (or gone): done
		})
		f.Close()
		ini.close()
	}()
}

// ptrOr is *p, or "" for nil.
func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
