// Package exec runs a command confined by a jail policy, shaped like
// os/exec. Only the child is confined: the calling process (an agent
// server with many goroutines) stays free.
//
// How: Start does every parent-side file access first, on the caller's
// goroutine (PATH lookup, the working-directory check, opening /dev/null
// for nil stdio; ExtraFiles are already open), then hands the fork to a
// spawner thread confined by the Ruleset, and the child inherits that
// thread's domain. Wait runs on an ordinary goroutine. Equivalent to
// «golandlock.V5.RestrictPaths(...); exec.Command(...).Run()», but safe
// in a server because RestrictPaths confines every thread of the process
// for good.
//
// The spawner pool: per Ruleset and per KeepCaps value, up to GOMAXPROCS
// worker goroutines, started lazily. Each one calls runtime.LockOSThread
// and never unlocks, so no other goroutine ever runs on its thread, and
// the Go runtime creates new threads from its template thread, not from a
// locked one, so the confinement cannot spread. A worker that lands on
// the process's main thread moves to another thread first (the runtime
// would park the main thread at exit instead of destroying it). The
// worker then confines its thread once: it empties the ambient, bounding
// and inheritable capability sets (unless KeepCaps; effective and
// permitted stay, so that a child can switch to Credential), sets
// no_new_privs, and applies the Landlock domain (landlock_restrict_self
// without TSYNC: that thread only), and installs a seccomp guard on that
// thread (inherited by its children) refusing kill, tgkill, ptrace,
// pidfd_open and the like aimed at the worker's own thread id: a child
// shares the worker's domain, and Landlock would let it signal or ptrace
// that thread of the caller (if seccomp is unavailable, every spawn takes
// the fresh-thread path, which carries the same guard where seccomp
// works; children of a guarded thread cannot make 32-bit system calls). That is all the state a worker carries; Credential, Setsid, Dir and stdio are applied in the child
// only, so Cmds that differ in them share workers. Each request runs
// os/exec's Start on the worker thread, which only creates pipes and
// forks there (the child's chdir and execve are checked against the
// domain, as they must be); the cost of confinement, about 90 µs plus
// 0.17 µs per rule, is paid once per worker instead of once per spawn. A
// worker exits (and the runtime destroys its thread) after 10 s without
// requests, on Release(rs), when the Ruleset is garbage-collected, or
// when its confinement fails (then that error is returned, and other
// waiting spawns retry on fresh threads). Closing a Ruleset does not
// reach its workers: call Release with Close.
//
// The namespace layer: when the Ruleset carries a view (Ruleset.View,
// compiled with landlock.Options.Namespaces where the process can build
// one), every spawner thread, pooled or fresh, and Exec's thread first
// enter that view (internal/nsview: masks over denied paths, everything
// outside the writable roots read-only, private /tmp and /dev/shm, and
// with the network fully restricted a network namespace with only
// loopback), then drop capabilities and apply Landlock and seccomp. The
// view comes from the same carve list as the Ruleset's rules (which then
// grant the writable roots whole), so the pool, keyed per Ruleset, keeps
// one view per (Ruleset, KeepCaps, Seccomp) worker: a worker enters it
// once and forks many children. Entering fails closed: the spawn fails
// with the error (a Ruleset with a view is never used without it). Exec
// runs its last steps on a fresh locked thread in that case (nsview
// refuses the main thread), whose execve replaces the process as usual.
// Each worker has its own view: children of different workers (or of one
// worker before and after its idle exit) see different private /tmp and
// network namespaces; /dev/shm is the Ruleset's TmpDir/.shm, shared. A
// path masked at Compile and deleted on the host afterwards makes new
// workers fail to enter the view (ENOENT) until the Ruleset is compiled
// again.
//
// The PID namespace: with a Ruleset that has a view, Start runs each
// child in a new PID namespace (pid_namespaces(7)). A thread inside the
// view forks the namespace's init: a copy of this process made by a raw
// clone(CLONE_NEWPID|CLONE_NEWNS) that runs only nosplit code making raw
// system calls (a forked Go process has no working runtime): every
// signal blocked, SIGCHLD ignored (the kernel then reaps every orphan
// reparented to it), a fresh read-only procfs mounted on /proc, not
// dumpable, every descriptor closed but a keep-alive pipe, on which it
// blocks. A fresh locked thread then joins the init's mount, PID and
// network namespaces (setns on a pidfd), confines itself like a spawner
// thread but with a ruleset of its own (landlock.Ruleset.ForkFD plus a
// rule on that procfs: Landlock's walk skips mount points, so nothing
// else grants it), and forks the child: a process of the new namespace
// (PID 2) and a child of the caller, so Process, signals and Wait are
// those of the child itself. When the child exits the keep-alive pipe is
// closed and the init killed, and the kernel kills everything left in
// the namespace (with Cmd.DeferNamespaceEnd and nothing left, the init
// ends when the caller exits). See Cmd.NoPIDNamespace and PIDNamespace.
//
// Cmd.FreshThread selects the other path: a new locked thread per spawn,
// confined the same way, forks once and dies. Children are confined
// identically on both paths.
//
// SelfTest (and Cmd.SelfTest) checks once per Ruleset, in throwaway
// confined threads and children, that the kernel really denies a read
// outside the policy.
//
// Child hygiene: the working directory must resolve inside the policy
// (defaulting to the workspace root); the environment comes from an
// explicit allowlist (DefaultEnv), never os.Environ(); file descriptors
// other than stdio and ExtraFiles are not inherited; every capability is
// dropped (bounding, inheritable, ambient, and so effective and permitted
// after execve) unless KeepCaps; the child runs in its own session
// (setsid), so it cannot inject input into the caller's terminal; a
// timeout or context cancellation kills its whole process group (SIGTERM
// and SIGCONT, so a stopped child gets it, then SIGKILL after WaitDelay).
//
// Without Landlock (Ruleset nil or Report().Level "path-check only"),
// Start runs the pure-path check of package cmdcheck on the arguments and
// the working directory and refuses the command before it starts if any
// path lies outside the policy; a started child is then not confined.
//
// Does not protect against: what the Ruleset's report lists as dropped;
// children forked by the same pooled worker sharing one Landlock domain
// (they may signal, and without capabilities in the caller ptrace, each
// other; use FreshThread for a domain per child);
// the child's use of file descriptors passed explicitly (Stdin, Stdout,
// Stderr, ExtraFiles); hard links that already point outside the policy;
// a grandchild that leaves the process group (setsid) before a timeout.
package exec

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// DefaultWaitDelay is the grace period between SIGTERM and SIGKILL to the
// child's process group after a timeout or cancellation, when
// Cmd.WaitDelay is zero.
const DefaultWaitDelay = 2 * time.Second

// Cmd is a command to run confined. Build it with CommandContext or as a
// literal. Fields mirror os/exec.Cmd; a Cmd cannot be reused after Start.
// Start, Wait, Run, Output and CombinedOutput are not safe for concurrent
// use on one Cmd; many Cmds may run concurrently with one Ruleset.
type Cmd struct {
	// Path is the command: a name looked up in the child's PATH (from
	// Env) when it has no slash, else a path (relative ones relative to
	// Dir). Args holds the command line including argv[0]; empty means
	// {Path}.
	Path string
	Args []string
	// Env is the child's whole environment ("NAME=VALUE"); nil means
	// DefaultEnv(Workspace, nil). Never os.Environ() by default. When the
	// Ruleset has a TmpDir and Env has no TMPDIR, TMPDIR is added.
	Env []string
	// Dir is the working directory; "" means the workspace root. It must
	// pass Workspace.Check(Dir, jail.Execute), else Start fails with that
	// error; a relative Dir is relative to the workspace root.
	Dir string

	// Stdin, Stdout, Stderr as in os/exec; nil means /dev/null (opened by
	// Start before confinement). ExtraFiles become fds 3, 4, ...
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	ExtraFiles     []*os.File
	// Setctty makes the terminal on the child's descriptor Ctty (0, 1 or
	// 2: one of Stdin, Stdout, Stderr, which must then be that terminal
	// as an *os.File) the controlling terminal of the child's new session
	// (TIOCSCTTY after setsid, as syscall.SysProcAttr.Setctty; tty_ioctl(4)).
	// For a pseudo-terminal the caller relays: job control and ^C then
	// work inside it. Ignored by Exec.
	Setctty bool
	Ctty    int

	// Workspace is the policy (required). Ruleset is the compiled policy;
	// nil means no Landlock: path-check only, against Workspace alone.
	Workspace *jail.Workspace
	Ruleset   *landlock.Ruleset

	// Credential runs the child as another user (the caller must be
	// root); as syscall.SysProcAttr.Credential.
	Credential *syscall.Credential
	// KeepCaps keeps the caller's capabilities in the child (by default
	// all are dropped: bounding, inheritable, ambient, so nothing is
	// effective or permitted after execve, even for uid 0).
	KeepCaps bool
	// Seccomp, when not nil, is installed on the spawning thread after
	// the Landlock domain, so the child inherits it: the layer for what
	// Landlock does not restrict (UNIX sockets below ABI 9, UDP and
	// MPTCP, TIOCSTI, io_uring, ...; see package seccomp). Build it once
	// with seccomp.Build and share it: spawner threads are pooled per
	// (Ruleset, KeepCaps, Seccomp). A Supervised filter (listen checked
	// by a supervisor, see seccomp.Filter.Install) gets one supervisor
	// goroutine per spawner thread, in this process, living as long as
	// that thread's children; Exec refuses it. A Brokered filter (Landlock
	// enforced) gets the same supervisor with an inotify broker
	// (seccomp.Filter.InstallBroker): a thread started on the first
	// inotify_add_watch, in the spawner thread's mount namespace and
	// confined by the Ruleset, that opens each watched path as the child
	// would. Under Exec, or with a Ruleset not enforced, inotify_add_watch
	// fails with EPERM instead (a filter built for Landlock ABI 0 allows
	// it); a child switched to another user (Credential) gets EACCES for
	// every watch. A filter with named UNIX sockets
	// (seccomp.Options.AllowUnix) uses the same broker for every
	// connect(2): the name resolved on its thread, TCP connected there
	// under the Ruleset; under Exec UNIX sockets are refused.
	Seccomp *seccomp.Filter
	// Timeout, if positive, bounds the run: then the process group gets
	// SIGTERM, and SIGKILL WaitDelay later.
	Timeout time.Duration
	// WaitDelay is the grace period after SIGTERM (DefaultWaitDelay if
	// zero), and then how long Wait waits for I/O, as os/exec.Cmd.WaitDelay.
	WaitDelay time.Duration

	// FreshThread makes Start confine a new thread for this spawn alone
	// (≈ 90 µs more per spawn, plus ≈ 0.17 µs per rule) instead of
	// handing the fork to a pooled spawner thread of the Ruleset. The
	// child is confined identically either way; use it when no thread
	// confined by this Ruleset may outlive the spawn. The fresh thread
	// carries the pooled workers' seccomp guard too (the child cannot
	// signal or ptrace it in the moment it outlives the fork), so its
	// children cannot make 32-bit system calls either.
	FreshThread bool
	// InNamespace, when not nil, is called on the spawner thread right
	// after it entered the Ruleset's namespace view (so inside the
	// child's network namespace when the view has one, Report().
	// PrivateNetwork) and before capabilities are dropped and Landlock
	// and seccomp applied: a socket it creates belongs to the child's
	// network namespace (socket(7) sockets keep the namespace of the
	// thread that made them), which is how landjail run --allow-domain
	// puts its proxy's listener where the child can reach it. It must not
	// block nor touch the file system. Setting it implies FreshThread (a
	// pooled thread is already confined). Its error fails Start,
	// wrapped; Exec refuses a Cmd that sets it.
	InNamespace func() error
	// SelfTest makes Start run SelfTest(Workspace, Ruleset) before the
	// first spawn with an enforced Ruleset and fail with its error
	// (ErrNotEnforced, ErrSelfTestFailed) instead of starting a child
	// that might not be confined. The result is cached per Ruleset until
	// Release. Ignored for a nil or path-check-only Ruleset.
	SelfTest bool
	// NoPIDNamespace keeps the child in the caller's PID namespace. By
	// default, when the Ruleset carries a namespace view (root,
	// Report().Layer "namespaces"), Start runs the child in a new PID
	// namespace with a fresh read-only procfs and a minimal init as PID 1
	// (see the package documentation): /proc, /proc/self and /dev/stdout
	// work, ps sees only the run's processes, host processes cannot be
	// signalled or inspected, and when the child exits everything left in
	// the namespace is killed. The child's getppid() is 0 (its parent, the
	// caller, is outside the namespace). Cost: one fork of the calling
	// process (copy-on-write: its page tables) and one thread more per
	// spawn (BENCHMARKS.md). See PIDNamespace for when it is in force.
	// Ignored by Exec (execve cannot move a process into a namespace).
	NoPIDNamespace bool
	// DeferNamespaceEnd is for a caller that exits right after Wait
	// (landjail run). When the child exits and nothing else runs in its
	// PID namespace, the namespace's init is not killed then: it ends
	// when this process exits, whose exit closes the init's keep-alive
	// pipe (as it does when this process is killed). Where the init
	// shares this process's memory (CLONE_VM, amd64), tearing that
	// memory down then falls to the init's exit, after this process's
	// parent has seen it exit, instead of to this process's exit
	// (≈0.3 ms of landjail run's 5.5 ms, BENCHMARKS.md). When the
	// child left processes in the namespace it ends when the child
	// exits, as without DeferNamespaceEnd; elsewhere it has no effect.
	// Until this process exits the init (asleep in read(2)) and its
	// namespace stay, holding the child's namespaces and its procfs:
	// a long-lived caller should leave it unset.
	//
	// For a non-root caller the init is the user-namespace stage: it
	// reports the child's exit code once the child exited and nothing
	// is left in its namespace, and Wait returns then, without reaping
	// it (ProcessState nil: use WaitStatus; a non-zero code is a
	// *StageExitError); the stage, its namespaces and their teardown
	// (the mount namespace's RCU grace period, its memory: ≈0.7 ms of
	// the run's wall time, BENCHMARKS.md round 5) end after this
	// process's exit.
	DeferNamespaceEnd bool

	// Cgroup, when not nil, places the child in a control group before
	// it executes anything, so that no instruction of the command runs
	// outside the group's limits: cloned into it (CLONE_INTO_CGROUP,
	// Linux 5.7) when CgroupFD returns a descriptor, else forked from a
	// fresh spawner thread that first calls JoinThread (cgroup v1: the
	// thread joins alone, the child inherits), before the namespace view
	// and confinement. A JoinThread implies FreshThread, and with a PID
	// namespace the namespace's init is forked from the joined thread too
	// (it then counts in the group). Its error fails Start, wrapped.
	// Package internal/limits provides one (limits.Run). Exec, when
	// CgroupFD returns -1, calls JoinThread on the thread that execve's,
	// before the view and confinement: execve leaves that thread alone
	// in the process, so the command starts in the group (landjail's
	// other threads, outside it until the execve ends them, run none of
	// its code). With a descriptor (cgroup v2, where a thread cannot join
	// alone) Exec ignores Cgroup: the caller moves itself into the group
	// first (limits.Run.JoinProcess) and the command inherits it. When
	// Cgroup also has a method BeforeExec(), Exec calls it right before
	// the execve (limits.Run waits there for a sweep of stale groups it
	// left running).
	Cgroup CgroupPlacement
	// BeforeExec, when not nil, is called by Exec right before the
	// execve that replaces this process, on the thread that execve's,
	// after Cgroup's BeforeExec: work of the caller on other goroutines
	// that the execve must not cut short waits there, as late as it can
	// (package sandbox: the live marker of internal/privdirs, written
	// while the command is prepared). Start does not call it.
	BeforeExec func()
	// Rlimits are set in the child (setrlimit(2), soft and hard) before
	// its execve. Go's fork cannot run code in the child, so Start sets
	// them on the whole calling process for the duration of the fork and
	// restores them after: meanwhile other spawns wait, and other threads
	// of the caller see them too (a file write past RLIMIT_FSIZE fails
	// with EFBIG, an open with a descriptor number past RLIMIT_NOFILE with
	// EMFILE). Restoring a lowered hard limit needs CAP_SYS_RESOURCE:
	// without it only the soft limits are set (see HardRlimits), except
	// through the user-namespace stage (Ruleset.UserNamespace), which
	// sets them, hard ones included, on itself right before it forks the
	// command. A limit
	// above the caller's hard limit is lowered to it. An RLIMIT_NOFILE
	// below the number of descriptors the caller has open makes the spawn
	// fail with EMFILE (os/exec makes its pipes inside the window). Exec
	// sets them, hard ones included, on the process it replaces.
	Rlimits []Rlimit

	// Process and ProcessState are set by Start and Wait.
	Process      *os.Process
	ProcessState *os.ProcessState
	// Canceled is set by Wait when the command's context was done (its
	// Timeout, or the caller's context) and its process group was sent
	// SIGTERM: how it died tells nothing more where an init between
	// (the user-namespace stage) turns a signal death into exit 128+N.
	Canceled bool
	// NamespaceLeftovers is set by Wait when the child ran in a PID
	// namespace of its own: how many processes it left running there
	// (descendants reparented to the namespace's init), all killed when
	// the namespace ended.
	NamespaceLeftovers int

	ctx   context.Context
	state *runState
	// pre is a prestarted user-namespace stage reserved for this Cmd
	// at CommandContext (it builds the view meanwhile), or nil.
	pre *prestage
	// lingered: Wait took the status from a lingering user-namespace
	// stage (DeferNamespaceEnd), lingerStatus.
	lingered     bool
	lingerStatus syscall.WaitStatus
}

// WaitStatus returns the command's wait status once Wait returned, and
// false before (or when Wait could not get one). It is ProcessState's,
// except after a user-namespace stage that lingers (DeferNamespaceEnd
// with a non-root caller: ProcessState is then nil), where it is the
// status the stage's exit would have had: exited, with the command's
// exit code, 128+n when a signal n killed it.
func (c *Cmd) WaitStatus() (syscall.WaitStatus, bool) {
	if c.lingered {
		return c.lingerStatus, true
	}
	if c.ProcessState == nil {
		return 0, false
	}
	ws, ok := c.ProcessState.Sys().(syscall.WaitStatus)
	return ws, ok
}

// StageExitError is Wait's error for a command that exited with a
// non-zero Code (128+n for a signal n) when a lingering user-namespace
// stage reported it (DeferNamespaceEnd; os/exec's *ExitError otherwise).
type StageExitError struct {
	Code int
}

func (e *StageExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// CgroupPlacement puts a child into a control group before it runs (see
// Cmd.Cgroup).
type CgroupPlacement interface {
	// CgroupFD returns an open cgroup v2 directory to clone the child
	// into (syscall.SysProcAttr.CgroupFD), or -1 to use JoinThread.
	CgroupFD() int
	// JoinThread moves the calling OS thread (locked, fresh, destroyed
	// after the spawn, still holding the caller's capabilities and not
	// yet in the namespace view) into the group, so that the processes it
	// forks start there. It must not block.
	JoinThread() error
}

// Rlimit is one resource limit for Cmd.Rlimits: Resource is a
// unix.RLIMIT_* constant, Cur and Max the soft and hard limits.
type Rlimit struct {
	Resource int
	Cur, Max uint64
}

// HardRlimits reports whether Cmd.Rlimits sets hard limits here: the
// process has CAP_SYS_RESOURCE (needed to raise its own hard limit back
// after the fork). Without it only the soft limits are set, which the
// command may raise again up to the caller's hard limit: a bound on a
// runaway command, not on a hostile one. A Cmd whose Ruleset has the
// user-namespace view gets hard limits whatever this says (the stage
// sets them on itself before its fork). Always false outside Linux.
func HardRlimits() bool { return hardRlimits() }

// CommandContext returns a Cmd that runs name with args, confined by ws and
// rs (rs may be nil: path-check only). ctx cancels the run (process group
// SIGTERM and SIGCONT, then SIGKILL after WaitDelay); ctx must not be nil. Unlike
// os/exec.CommandContext it does not look name up: Start does, in the
// child's PATH. When rs has the user-namespace view and a stage
// PrestartUserStage started is waiting, the Cmd reserves it and sends it
// the view, which it builds meanwhile (see PrestartUserStage).
func CommandContext(ctx context.Context, ws *jail.Workspace, rs *landlock.Ruleset, name string, arg ...string) *Cmd {
	if ctx == nil {
		panic("exec: nil Context") // as os/exec: a programming error, not input
	}
	c := &Cmd{
		Path:      name,
		Args:      append([]string{name}, arg...),
		Workspace: ws,
		Ruleset:   rs,
		ctx:       ctx,
	}
	c.reservePrestage()
	return c
}

// Start starts the command confined and returns without waiting for it.
// Errors: ErrNoWorkspace, ErrAlreadyStarted, ErrNotFound (*osexec.Error),
// the Workspace's error for a Dir outside the policy, in path-check mode
// the fallback check's error (wrapping jail's sentinels), landlock.ErrClosed
// for a closed Ruleset (once Released, or with FreshThread: a live pooled
// worker of a closed but not Released Ruleset still spawns), with
// Cmd.SelfTest ErrNotEnforced or ErrSelfTestFailed, errno errors from confinement (for example EPERM
// when seccomp now refuses Landlock: Start never falls back silently once a
// ruleset was compiled), and os.StartProcess's errors. The first Start
// makes the calling process not dumpable (prctl(PR_SET_DUMPABLE, 0)) for
// good: its spawner threads share their children's Landlock domain, and
// a dumpable caller could be ptraced (or its /proc/PID/mem opened)
// through one of them by a child of the same uid (red team round 26,
// R26b-3); no core dumps of the caller follow.
func (c *Cmd) Start() error { return c.start() }

// Wait waits for the command to exit and for its I/O copying to finish,
// as os/exec.Cmd.Wait; an *osexec.ExitError for a non-zero status or a
// signal. Call it from any goroutine.
func (c *Cmd) Wait() error { return c.wait() }

// Run starts the command and waits for it.
func (c *Cmd) Run() error {
	if err := c.Start(); err != nil {
		return err
	}
	return c.Wait()
}

// Output runs the command and returns its standard output. Stdout must be
// nil. As os/exec, an *osexec.ExitError carries Stderr when Stderr was nil.
func (c *Cmd) Output() ([]byte, error) {
	if c.Stdout != nil {
		return nil, errors.New("exec: Stdout already set")
	}
	var out bytes.Buffer
	c.Stdout = &out
	var errb *bytes.Buffer
	if c.Stderr == nil {
		errb = &bytes.Buffer{}
		c.Stderr = errb
	}
	err := c.Run()
	var ee *osexec.ExitError
	if errb != nil && errors.As(err, &ee) {
		ee.Stderr = errb.Bytes()
	}
	return out.Bytes(), err
}

// CombinedOutput runs the command and returns its standard output and
// standard error interleaved. Stdout and Stderr must be nil.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	if c.Stdout != nil || c.Stderr != nil {
		return nil, errors.New("exec: Stdout or Stderr already set")
	}
	var b bytes.Buffer
	c.Stdout, c.Stderr = &b, &b
	err := c.Run()
	return b.Bytes(), err
}

// Release stops the pooled spawner threads of rs and forgets its cached
// self-test result. Call it when closing rs (before or after
// rs.Close()): workers exit once idle (a spawn in progress completes),
// at the latest after their current spawn. A later Start with rs starts
// new workers, which fail with landlock.ErrClosed if rs is closed.
// Without Release, workers of a closed Ruleset keep serving spawns (the
// children are confined exactly as before) until they have been idle
// for 10 s, or until rs is garbage-collected. Safe for concurrent use; a
// nil rs releases the pool of Cmds without a Ruleset.
func Release(rs *landlock.Ruleset) { release(rs) }

// SelfTest checks that the kernel really enforces rs here, in throwaway
// confined threads and children, so that a silently unenforced Landlock
// (some file systems, for example 9P under WSL2, accept the rules and do
// not apply them) is not mistaken for confinement. It creates a probe
// file in a temporary directory outside every rule of rs (preferably on
// the workspace's file system: the system temporary directory, else the
// workspace's parent directory, else /dev/shm) and removes it afterwards,
// then:
//
//   - on a fresh thread confined by rs, opens the probe (it must fail
//     with EACCES) and the workspace root (it must succeed);
//   - when rs allows executing /bin/sh, does the same in a child spawned
//     by the same path as Start (a pooled spawner thread), which also
//     checks that the spawn path applies the domain.
//
// Errors: landlock.ErrUnavailable (wrapped) when rs has no Landlock
// domain at all (nothing to test); ErrNotEnforced when the probe could be
// read; ErrSelfTestFailed (wrapping the cause) when no verdict was
// possible (no probe location outside the policy, the workspace root
// refused, the probe child did not run); ErrNoWorkspace. Cost: about one
// spawn (≈ 2 ms). SelfTest does not cache; Start with Cmd.SelfTest does.
// Minimum: Landlock ABI 1.
func SelfTest(ws *jail.Workspace, rs *landlock.Ruleset) error { return selfTest(ws, rs) }

// Exec replaces the calling process with the command, confined: no extra
// process (for the CLI without a timeout, or a container ENTRYPOINT). It
// does the parent-side checks of Start, drops capabilities unless
// KeepCaps, switches to Credential, marks every fd other than 0, 1, 2
// close-on-exec, confines the calling thread (the whole process is replaced
// by execve, which kills the other threads, so no thread synchronisation is
// needed) and calls execve(2). Stdin, Stdout, Stderr, ExtraFiles and
// Timeout must be unset: the command keeps the caller's stdio. Unlike Start
// it does not call setsid: an interactive command keeps the terminal.
//
// A Supervised Seccomp filter is refused (error wrapping
// seccomp.ErrSupervised) before anything is done: its supervisor would not
// survive the execve. A Brokered one is installed without its broker:
// inotify_add_watch fails with EPERM.
//
// It only returns on error; after confinement has begun the calling
// goroutine stays locked to a confined thread, so the caller should exit.
func (c *Cmd) Exec() error { return c.exec() }

// Exec is CommandContext(context.Background(), ws, rs, argv[0],
// argv[1:]...) with Env env and Dir dir, then (*Cmd).Exec.
func Exec(ws *jail.Workspace, rs *landlock.Ruleset, argv []string, env []string, dir string) error {
	if len(argv) == 0 {
		return errors.New("exec: Exec: empty argv")
	}
	c := CommandContext(context.Background(), ws, rs, argv[0], argv[1:]...)
	c.Env, c.Dir = env, dir
	return c.Exec()
}
