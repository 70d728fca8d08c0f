// Package seccomp builds and installs the seccomp-BPF filter landjail puts on
// a confined child, for what Landlock does not restrict.
//
// Landlock is allow-only and covers files, TCP bind/connect (ABI 4), abstract
// UNIX sockets and signals (ABI 6 scopes) and, since ABI 1, ptrace and mount
// changes. It does not see which sockets a process creates, terminal ioctls,
// io_uring, or the kernel's attack-surface syscalls. This package closes those
// gaps with a classic-BPF program built by internal/bpfprog, the builder
// the exec guard and the test harness share (assembled with
// golang.org/x/net/bpf, whose VM runs the same program in kernel-free
// tests; jumps beyond 255 instructions go through BPF_JA, never wrap).
//
// # Rules
//
// Build(Options) compiles a fixed decision list; Filter.Rules lists every rule
// with its reason, including the ones reported as "allow" (unconfined on
// purpose), for the enforcement report and `landjail doctor`:
//
//   - arch: seccomp_data.arch must be the build's own (AUDIT_ARCH_X86_64 or
//     AUDIT_ARCH_AARCH64), else the process is killed (SECCOMP_RET_KILL_PROCESS):
//     syscalls made under another ABI (int 0x80 from a 64-bit x86 process)
//     carry other numbers and would pass every rule below; socketcall(2), which
//     would hide socket's arguments behind a pointer, exists only there.
//   - x32 (x86_64 only): a number with __X32_SYSCALL_BIT set kills the process;
//     x32 calls share AUDIT_ARCH_X86_64 but not our numbers.
//   - unix-socket: socket(AF_UNIX, ...) fails with EPERM when LandlockABI < 9,
//     because Landlock below ABI 9 cannot restrict connecting to a pathname
//     UNIX socket (a /var/run/docker.sock-style escape; ABI 6 scopes only
//     abstract sockets). Options.AllowUnixSockets keeps it allowed and the
//     rule is reported as "allow" (unconfined).
//   - unix-connect (Options.AllowUnix, Landlock ABI 1 to 8): named host
//     sockets. socket(AF_UNIX) is allowed for SOCK_STREAM and
//     SOCK_SEQPACKET only (unix-socket-dgram refuses datagram sockets:
//     their sendto/sendmsg address is out of the filter's reach), and
//     every connect(2) waits for the supervisor, which copies the address
//     once, opens the name O_PATH as the child would (the broker:
//     RESOLVE_IN_ROOT from the child's root, or its working directory;
//     symbolic links followed; a name the caller listed also in this
//     process's view) and connects the child's socket (pidfd_getfd) to
//     /proc/self/fd/N of that descriptor when it is a named socket (st_dev,
//     st_ino), else EACCES; abstract addresses get EPERM. Other families
//     (TCP) are connected on the broker's thread, whose Landlock domain has
//     the child's rules. The peer sees this process's pid and its uid and
//     gid (SO_PEERCRED), which must be the child's (else EACCES). Without
//     a broker (Install, Program) UNIX sockets are refused as without
//     AllowUnix.
//   - socketpair-dgram (when unix-socket denies): socketpair(2) with a type
//     (masked with SOCK_TYPE_MASK) other than SOCK_STREAM and SOCK_SEQPACKET
//     fails with EPERM: a datagram socket of a pair (AF_UNIX turns SOCK_RAW
//     into SOCK_DGRAM) can still sendto, or connect to, any pathname UNIX
//     socket (journald, syslog). Stream and seqpacket pairs stay allowed:
//     connect gives EISCONN, a sendto address is refused (stream) or
//     ignored (seqpacket). With NetRestricted, socketpair-family refuses
//     every family but AF_UNIX (AF_TIPC has pairs too).
//   - inet-non-tcp (with Options.NetRestricted, i.e. the network is not
//     "host"): socket(AF_INET or AF_INET6, ...) fails with EPERM unless its
//     type (masked with SOCK_TYPE_MASK, so SOCK_NONBLOCK|SOCK_CLOEXEC do not
//     matter) is SOCK_STREAM and its protocol 0 or IPPROTO_TCP. Landlock's
//     network rights cover only TCP: UDP, raw and ICMP sockets, SCTP and
//     MPTCP (IPPROTO_MPTCP, whose connect bypasses Landlock's TCP rules,
//     measured on Linux 6.18) would leave the sandbox unchecked. Below
//     Landlock ABI 4, which restricts no network access at all, TCP is denied
//     too: every AF_INET/AF_INET6 socket fails.
//   - inet-udp (with NetRestricted and Options.AllowDNS or UDPPrivateNetwork): SOCK_DGRAM with
//     protocol 0 or IPPROTO_UDP is allowed, i.e. all UDP to any host and
//     port, and reported as such: a seccomp filter cannot restrict UDP to
//     port 53 because the address of connect/sendto is behind a pointer it
//     cannot read. Off by default; the CLI exposes it as a flag.
//   - net-family (with NetRestricted): socket() with any family other than
//     AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK fails with EPERM (AF_PACKET
//     raw frames, AF_VSOCK to the hypervisor host, AF_XDP, AF_BLUETOOTH,
//     AF_TIPC, ...).
//   - netlink (with NetRestricted): an allow-list of netlink protocols:
//     socket(AF_NETLINK) with a protocol other than NETLINK_ROUTE fails with
//     EPERM, because the others expose host state (NETLINK_SOCK_DIAG lists
//     every socket of the host as ss does, NETLINK_NETFILTER the conntrack
//     table, NETLINK_GENERIC taskstats, NETLINK_KOBJECT_UEVENT,
//     NETLINK_AUDIT, NETLINK_CONNECTOR, ...). NETLINK_ROUTE stays
//     (netlink-route): getifaddrs and Go's net.Interfaces need it, glibc's
//     getaddrinfo uses it for AI_ADDRCONFIG; it shows the host's
//     interfaces, addresses and routes (ip addr works), not its sockets.
//   - fastopen-sendto, fastopen-sendmsg, fastopen-sendmmsg (with
//     NetRestricted): MSG_FASTOPEN in the flags argument (sendto's 4th,
//     sendmsg's 3rd, sendmmsg's 4th) fails with EPERM: it connects a TCP
//     socket without connect(2), so Landlock's connect rule never sees it
//     (landlock-lsm/linux#41). setsockopt(TCP_FASTOPEN_CONNECT) needs no
//     rule: connect(2) is still called and checked.
//   - listen (with NetRestricted and Landlock ABI >= 4): listen(2) on a TCP
//     socket never bound binds an ephemeral port without Landlock's bind
//     rule seeing it (landlock-lsm/linux#15), and the filter cannot tell
//     which socket an fd is. When no port may be bound (Options.BindTCP
//     empty) and unix-socket denies, nothing can listen legitimately:
//     EPERM. Otherwise the filter is Supervised: listen waits for a
//     supervisor goroutine started by Install in the installing process,
//     which takes the socket with pidfd_getfd, calls listen itself for a
//     UNIX socket or a TCP socket bound to a port of Options.BindTCP, and
//     answers EACCES otherwise (see Filter.Install). Below ABI 4 no IP
//     socket exists and listen is allowed.
//   - inotify (Landlock ABI >= 1): Landlock does not mediate inotify
//     marks (security_path_notify), so inotify_add_watch on a directory
//     the policy denies would report the names the host creates and opens
//     there. A filter installed with a broker (Filter.InstallBroker,
//     package exec's spawns) hands the call to the supervisor, which
//     copies the path once, opens it as the child would (the broker: the
//     same Landlock ruleset) and watches the opened inode, answering
//     EACCES where the child may not read it. Installed without one
//     (Install, Program: exec.Cmd.Exec, the non-root user-namespace
//     stage, or under a filter chain that already has a listener) it
//     fails with EPERM. Without Landlock it is allowed.
//   - tiocsti, tioclinux: ioctl(fd, TIOCSTI) and ioctl(fd, TIOCLINUX) fail with
//     EPERM: pushing input into a terminal the child shares with its caller
//     (CVE-2017-5226 class; TIOCLINUX can paste the console selection). The
//     request is compared on its low 32 bits, as the kernel reads it
//     (unsigned int), so garbage in the high half cannot evade the rule.
//   - pidfd-info: ioctl(pidfd, PIDFD_GET_INFO) (Linux 6.13) fails with
//     EPERM, matched on the request's type and number (0xff0b) whatever
//     its size: it reads a process's credentials, parent and control group,
//     which no ptrace or /proc check guards (red team round 22, R22b-4).
//   - io_uring: io_uring_setup, io_uring_enter and io_uring_register fail with
//     EPERM: operations queued through io_uring are not seen by seccomp.
//   - setid-*: a mode with S_ISUID or S_ISGID fails with EPERM in chmod,
//     fchmod, fchmodat, fchmodat2, mkdir(at), mknod(at), creat, and
//     open/openat with O_CREAT or O_TMPFILE; openat2 fails with ENOSYS (its
//     mode is behind a pointer): the bit would outlive the sandbox.
//   - sysv-ipc (Options.DenySysVIPC): shmget, shmat, shmctl, msgget, msgsnd,
//     msgrcv, msgctl, semget, semop, semtimedop and semctl fail with EPERM.
//   - Unless Options.AllowDangerous: keyctl, add_key, request_key (kernel
//     keyrings are shared beyond the sandbox), bpf, perf_event_open,
//     userfaultfd (kernel exploitation primitives), kexec_load,
//     kexec_file_load, init_module, finit_module, delete_module (kernel code),
//     open_by_handle_at (opens any file by handle, bypassing paths: the
//     classic container escape), fanotify_init and fanotify_mark (Landlock
//     does not mediate fanotify marks: a mark on a directory the policy
//     denies reports the names the host creates and opens there; no
//     capability needed since Linux 5.13 with FAN_REPORT_FID) fail with
//     EPERM; unshare and clone with CLONE_NEWUSER fail with EPERM (a user
//     namespace hands capabilities back inside it and opens much more
//     kernel surface); clone3 fails with ENOSYS because its flags sit
//     behind a pointer the filter cannot read, and libc and the Go runtime
//     then fall back to clone(2), whose flags it checks.
//   - pid-*: syscalls that change another process by process ID fail with
//     EPERM unless they name the caller as 0: prlimit64, sched_setaffinity,
//     sched_setscheduler, sched_setparam, sched_setattr, migrate_pages and
//     move_pages with a pid other than 0; setpriority and ioprio_set with a
//     which other than PRIO_PROCESS (IOPRIO_WHO_PROCESS) or a who other
//     than 0. The kernel lets a process do these to any process of its uid
//     and Landlock has no hook for them: without a PID namespace the child
//     could kill the user's shell (RLIMIT_CPU 0: SIGXCPU), or renice, pin
//     or starve it. A filter cannot know the caller's own pid, so
//     prlimit(getpid(), ...) and pthread_setaffinity_np on a sibling
//     thread fail too; glibc's setrlimit, the Go runtime, nice, taskset
//     and ionice pass 0. The read-only counterparts stay allowed
//     (pid-read), and signals are left to Landlock's scope (pid-signals,
//     reported UNCONFINED below ABI 6).
//   - ptrace: allowed when LandlockABI >= 1, because a Landlock domain already
//     limits ptrace (and process_vm_*, pidfd_getfd, get_robust_list, kcmp,
//     process_madvise: every check through ptrace_may_access) to processes
//     inside the same domain. Without Landlock (LandlockABI < 1) and unless
//     AllowDangerous, those seven fail with EPERM, so the child cannot
//     inject code into the process that started it.
//
// Without NetRestricted (host network) no rule looks at socket families,
// types or protocols except AF_UNIX (socket and datagram socketpairs), nor
// at netlink protocols, MSG_FASTOPEN or listen; the "network" rule reports
// that.
//
// Everything else is allowed: the filter is a deny list on top of Landlock,
// not an allow list of syscalls.
//
// # Installing
//
// Filter.Install installs the program on the calling thread only (no
// SECCOMP_FILTER_FLAG_TSYNC), so only the child forked from that thread is
// filtered; filters stack with any already installed (the most restrictive
// action wins) and can never be removed.
//
// Order for a confined spawn (package exec): drop capabilities, set
// no_new_privs, landlock_restrict_self, then Filter.Install, then fork.
// Installing seccomp last keeps the spawner thread's own setup (opening the
// ruleset's paths, prctl, Landlock syscalls) out of the rules' reach, so a
// rule can never break the setup; the filter does not touch the Landlock
// syscalls, so Landlock still applies either way. A child forked with
// os/exec works: Go uses clone(2), not clone3, unless SysProcAttr.UseCgroupFD
// or CLONE_NEWTIME is set (those get ENOSYS), and SysProcAttr.Cloneflags or
// Unshareflags with CLONE_NEWUSER get EPERM unless AllowDangerous.
//
// Does not protect against: anything a rule above lists as allowed
// (signals to the uid's processes below Landlock ABI 6 without a PID
// namespace, reading their priorities and affinity); writes to another
// process's /proc/PID files (oom_score_adj, autogroup, coredump_filter),
// left to Landlock's file rules (the system preset grants no /proc); sockets
// and file descriptors the child inherits already open (a listening socket
// passed as stdin can accept); UDP to any port with AllowDNS; the host's
// interfaces, addresses and routes read through NETLINK_ROUTE (and
// /proc/net when the policy lets the child read it); other architectures
// than amd64 and arm64 (Build fails there).
//
// Minimum kernel: 3.17 for seccomp(2), 4.14 for SECCOMP_RET_KILL_PROCESS;
// a Supervised or brokered filter needs 5.0 (SECCOMP_RET_USER_NOTIF), 5.6
// (pidfd_getfd; before, every supervised listen, inotify_add_watch and
// brokered connect gets EACCES) and 5.8 for
// its supervisor to end with the last task using the filter (before, the
// goroutine and its descriptor stay until the process exits).
package seccomp

// Options selects the rules Build compiles. The zero value denies UNIX
// sockets and datagram socketpairs (on Landlock ABI < 9), terminal
// injection, io_uring and the dangerous set, and leaves the network alone.
type Options struct {
	// LandlockABI is the running Landlock ABI (landlock.ABI()), 0 without
	// Landlock; it decides what Landlock already covers.
	LandlockABI int
	// AllowUnixSockets keeps socket(AF_UNIX) allowed; below Landlock ABI 9
	// the child can then connect to any pathname UNIX socket it can reach,
	// and the rule is reported as unconfined.
	AllowUnixSockets bool
	// NetRestricted is set when the network is restricted (not --net host):
	// only TCP sockets (and AF_UNIX, AF_NETLINK) may be created.
	NetRestricted bool
	// AllowDNS, with NetRestricted, also allows UDP sockets (all UDP to any
	// port, not just 53, which seccomp cannot express). Off by default.
	AllowDNS bool
	// UDPPrivateNetwork, with NetRestricted, allows UDP sockets like
	// AllowDNS, but the caller vouches that the child's network namespace
	// routes nowhere but to itself (landjail run --allow-domain's
	// transparent egress: loopback, where its DNS responder listens, and
	// a synthetic range routed to loopback), so the rule is reported as
	// confined by the namespace rather than unconfined. Its name in
	// Rules is "inet-udp" either way.
	UDPPrivateNetwork bool
	// AllowDangerous keeps keyctl, bpf, user namespaces and the rest of the
	// dangerous set (for workloads that need them, usually as root).
	AllowDangerous bool
	// BindTCP, with NetRestricted, lists the TCP ports the child may bind
	// (the Ruleset's landlock.Options.BindTCP): the supervisor lets a TCP
	// socket listen only when it is bound to one of them (port 0, "any
	// port" to Landlock, lets any TCP socket listen). Order and duplicates
	// do not matter.
	BindTCP []uint16
	// AllowUnix lists the pathname UNIX sockets the child may connect to
	// (--allow-unix), each by the identity (device, inode) its path had
	// when the caller resolved it. Below Landlock ABI 9 and with Landlock
	// (ABI >= 1), without AllowUnixSockets, a non-empty list makes
	// socket(AF_UNIX) allowed for SOCK_STREAM and SOCK_SEQPACKET (datagram
	// sockets stay refused) and hands every connect(2) to the supervisor
	// (see the unix-connect rule and InstallBroker); the filter is then
	// Supervised and Brokered. From ABI 9 Landlock restricts the connect
	// itself (LANDLOCK_ACCESS_FS_RESOLVE_UNIX, granted by the caller's
	// ruleset on these paths) and the list is only reported. Without
	// Landlock it is ignored: UNIX sockets stay refused (fail closed).
	AllowUnix []UnixSocket
	// DenySysVIPC refuses the System V IPC syscalls (shared memory,
	// message queues, semaphores) with EPERM: for a child left in the
	// host's IPC namespace (no namespace layer), where it would reach
	// every object its uid owns; Landlock does not mediate them.
	DenySysVIPC bool
	// Explain makes the filter record what it refuses and what the
	// file system view refuses, for --explain (see Filter.Events): every
	// refusing rule hands its calls to the supervisor, which answers the
	// rule's errno; openat and mkdirat (open, creat and mkdir on amd64)
	// are observed and continued. The filter then always
	// has a listener and needs a live supervisor (Cmd.Start, Linux 5.0;
	// 5.5 for SECCOMP_USER_NOTIF_FLAG_CONTINUE). Off, the program is the
	// usual one.
	Explain bool
	// ExplainReads, with Explain, also tells a read Landlock refuses (the
	// broker's confined open of the same name is refused, this process's
	// is not): for callers that cannot read Landlock's audit records. Off
	// where they can: the broker's open would be a second audit record.
	ExplainReads bool
}

// UnixSocket is a pathname UNIX socket a child may connect to
// (Options.AllowUnix): Path as the caller named it, absolute and with
// symbolic links resolved, and the socket's identity then (stat's st_dev
// and st_ino). A socket re-created at the same path (a restarted daemon)
// is another inode and is refused.
type UnixSocket struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// Rule describes one rule of a Filter for reports.
type Rule struct {
	// Name is a short stable identifier ("unix-socket", "tiocsti").
	Name string `json:"name"`
	// Syscall is the syscall name, or "*" for rules on every syscall.
	Syscall string `json:"syscall"`
	// Args is the condition on the arguments, empty when there is none.
	Args string `json:"args,omitempty"`
	// Action is what the filter does on a match: "errno EPERM",
	// "errno ENOSYS", "errno ENOTSUP", "kill process", or "allow" for a rule reported as
	// deliberately unconfined.
	Action string `json:"action"`
	// Reason says why the rule exists, or why it allows.
	Reason string `json:"reason"`
}

// Filter is a compiled seccomp program. It is immutable and safe for
// concurrent use; Install may be called on many threads.
type Filter struct {
	rules     []Rule
	lazyRules func() []Rule // instead of rules: made when first asked (a precompiled filter)
	prog      []sockFilter  // struct sock_filter on Linux
	// supervised: the program returns SECCOMP_RET_USER_NOTIF for listen,
	// so Install starts a supervisor answering it.
	supervised bool
	// brokered: prog returns SECCOMP_RET_USER_NOTIF for
	// inotify_add_watch, answered by InstallBroker's supervisor; plain
	// is the program with that rule refusing (EPERM), for Install and
	// Program.
	brokered bool
	plain    func() ([]sockFilter, error)
	// bindTCP is the set of ports a listening TCP socket may be bound to;
	// anyPort when 0 is among them.
	bindTCP map[uint16]bool
	anyPort bool
	// explain (Options.Explain): prog hands refused and observed calls
	// to the supervisor, which walks decisions and records in events.
	explain, explainReads bool
	decisions             []decision
	events                *eventLog
	// plainListener: the program installed without a broker (plain)
	// still returns SECCOMP_RET_USER_NOTIF (listen).
	plainListener bool
	// allowUnix maps the named UNIX sockets' identities to their paths
	// (Options.AllowUnix), when the supervisor enforces them.
	allowUnix map[devIno]string
	// connects holds a slot per brokered UNIX connect waiting
	// (maxPendingConnects).
	connects chan struct{}
	// supervisorCPU bounds each supervisor's CPU time, in CPUs
	// (LimitSupervisorCPU); 0: no bound.
	supervisorCPU float64
}

// devIno is a file's identity (st_dev, st_ino).
type devIno struct{ dev, ino uint64 }

// LimitSupervisorCPU bounds the CPU time each supervisor of f spends
// answering the filter's notifications (the brokered inotify_add_watch,
// listen and connect) to cpus CPUs (0.5: half of one), at the cgroup CPU
// quota's rate with at most one 100 ms period of unused time kept
// (internal/cpushare). What is counted is the process's CPU time
// (CLOCK_PROCESS_CPUTIME_ID, user and system) from the supervisor's
// first answer on: the wake-ups that bring each answer, and other work
// of the process between two answers (the proxy's relay after a
// connect; in landjail-mcp, other calls'). Once the share is spent, the
// next answer waits until it is paid back, and the command's calls with
// it. For a run under a CPU limit (landjail --cpus): the limit bounds
// the command's control group, while the supervisor works for it
// outside the group, in landjail (red team round 22, R22b-2: a loop of
// inotify_add_watch under --cpus 0.1 made landjail use 0.95 CPU). cpus
// <= 0, or a nil f: no bound. Call it before Install, not while an
// Install of f may run.
func (f *Filter) LimitSupervisorCPU(cpus float64) {
	if f == nil || cpus <= 0 {
		return
	}
	f.supervisorCPU = cpus
}

// Events returns what the supervisor recorded under Options.Explain, in
// the order each kind first came (nil without it). Calls of every
// instance installed from f are merged. Safe for concurrent use; read it
// after the children have exited for a complete list.
func (f *Filter) Events() []Event {
	if f == nil || !f.explain {
		return nil
	}
	return f.events.events()
}

// Explained reports whether f was built with Options.Explain.
func (f *Filter) Explained() bool { return f != nil && f.explain }

// Build compiles the filter for opt and the running architecture.
// It fails wrapping ErrUnsupportedArch (and errors.ErrUnsupported) on a
// GOARCH other than amd64 and arm64, and on non-Linux systems.
func Build(opt Options) (*Filter, error) { return build(opt) }

// Rules returns every rule of f and its reason, in evaluation order. The
// slice is a copy.
func (f *Filter) Rules() []Rule {
	if f.lazyRules != nil {
		return append([]Rule(nil), f.lazyRules()...)
	}
	return append([]Rule(nil), f.rules...)
}

// Install installs f on the calling thread only, never on the other threads
// of the process: lock the goroutine with runtime.LockOSThread first and
// never unlock it (let the goroutine exit locked so the Go runtime destroys
// the thread). It sets PR_SET_NO_NEW_PRIVS on this thread (required for an
// unprivileged filter; harmless if already set), then calls
// seccomp(SECCOMP_SET_MODE_FILTER, 0, prog). Children forked from the thread
// inherit the filter, which cannot be removed. Errors keep the errno (EINVAL
// or ENOSYS: the kernel lacks seccomp filters; EACCES: no_new_privs could not
// be set). Minimum kernel 3.17.
//
// For a Supervised filter, Install also creates the filter's notification
// listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, Linux 5.0) and starts a
// supervisor goroutine in this process that answers every listen(2) of
// every task using this filter instance; the goroutine and its descriptor
// go away when the last such task has exited (the listener reports
// EPOLLHUP, Linux 5.8). Each Install is a new instance with its own
// supervisor, so a spawner thread's filter is served for as long as any of
// its children lives, whatever happens to the thread. The calling process
// must outlive the children for their listen to be answered: after it
// exits or execve's, listen fails with ENOSYS. Extra errors: EBUSY when a
// filter with a listener is already installed on this thread (a landjail
// inside a landjail: only one listener per filter chain).
//
// The inotify rule needs a broker (InstallBroker): a filter installed by
// Install refuses inotify_add_watch with EPERM.
func (f *Filter) Install() error { return f.install(nil) }

// Broker opens paths for the supervisor as a supervised child would: on
// a thread confined by the child's Landlock ruleset, with the child's
// capabilities dropped (package exec builds one per installed filter).
// The supervisor calls OpenAt from one goroutine at a time, and Close
// once, when the filter instance has no task left (or Install failed).
type Broker interface {
	// OpenAt is openat(dirfd, unsafePath, flags) on the broker's thread,
	// or with inRoot openat2 with RESOLVE_IN_ROOT (absolute paths and
	// ".." stay below dirfd, the child's root); where openat2 is
	// unavailable (ENOSYS, EPERM) inRoot falls back to openat (an
	// absolute symbolic link then resolves from the broker's own root,
	// which is the child's view of the file system: exec's thread is in
	// the same namespace view). It returns the new descriptor, owned by
	// the caller, or the errno (EACCES where Landlock denies the read).
	OpenAt(dirfd int, unsafePath string, flags int, inRoot bool) (int, error)
	// Connect is connect(sock, sa) on the broker's thread, sa being the
	// raw struct sockaddr the child passed (copied once): Landlock's TCP
	// rules then decide as for the child. It returns connect's error
	// (an errno), nil on success. A connect that blocks (a blocking
	// socket, a silent host) holds the broker, and so the supervisor,
	// until it ends; the supervisor makes UNIX connects itself, elsewhere
	// (they wait for as long as a daemon does not accept).
	Connect(sock int, sa []byte) error
	// Close ends the broker's thread.
	Close()
}

// InstallBroker is Install with b answering inotify_add_watch: when f is
// Brokered, the supervisor reads the path from the child's memory,
// checks the notification is still pending, takes the child's inotify
// descriptor (pidfd_getfd), opens the path with b (O_RDONLY, plus
// O_DIRECTORY for IN_ONLYDIR and O_NOFOLLOW for IN_DONT_FOLLOW: an open
// Landlock checks, unlike O_PATH) and calls inotify_add_watch itself on
// that descriptor's /proc/self/fd entry, so the watch lands on the inode
// the check opened, never on a path resolved again; the answer is the
// watch descriptor or the open's errno. Never SECCOMP_USER_NOTIF_FLAG_CONTINUE.
// b is owned by the call: it is closed when the filter instance is gone,
// at once when f is not Brokered or Install fails. Where the thread's
// filter chain already has a listener (EBUSY: a landjail inside a
// landjail) and only inotify wanted one, the filter is installed without
// it and inotify_add_watch fails with EPERM.
//
// A brokered filter always has a listener, so a landjail inside it
// cannot install a Supervised filter (EBUSY, as under any Supervised
// filter): a nested run with listen checked fails to start.
//
// The broker's open is seen by other watchers (IN_OPEN and
// IN_CLOSE_NOWRITE on the path, the child's own watches included). The
// watch differs from the native call where the path names a socket
// (open fails with ENXIO), a symbolic link watched with IN_DONT_FOLLOW
// (ELOOP), a file the child may not read though it could watch it (no
// read permission: EACCES as natively), or a magic link under /proc
// (RESOLVE_IN_ROOT refuses those: EXDEV or ELOOP). A child whose
// credentials (fsuid, fsgid, groups) differ from this process's is
// answered EACCES: the broker checks with this process's identity.
func (f *Filter) InstallBroker(b Broker) error { return f.install(b) }

// Brokered reports whether f hands inotify_add_watch to a broker
// (Landlock ABI >= 1, see InstallBroker). Unlike Supervised it does not
// require a live process: without a broker the call fails with EPERM.
func (f *Filter) Brokered() bool { return f != nil && f.brokered }

// Supervised reports whether f needs the supervisor that Install starts:
// with the network restricted (Options.NetRestricted) on Landlock ABI >= 4,
// when a TCP port may be bound (Options.BindTCP) or UNIX sockets can be
// created (Options.AllowUnixSockets, or Landlock ABI >= 9); and when the
// unix-connect rule brokers connect (Options.AllowUnix below ABI 9), which
// also needs InstallBroker (installed otherwise, UNIX sockets are refused). Such a filter
// only works in a process that stays alive while the child runs: use it
// with exec.Cmd.Start, not with exec.Cmd.Exec (which refuses it). A filter
// built with Options.Explain is always Supervised.
func (f *Filter) Supervised() bool { return f != nil && (f.supervised || f.explain) }
