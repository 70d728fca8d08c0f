package kernel

// LandlockABI returns the Landlock ABI version the kernel offers this
// process (1 for Linux 5.13, rising with later kernels), or 0 when Landlock
// is unusable: the kernel lacks it (ENOSYS), it is built in but disabled at
// boot (EOPNOTSUPP), or a seccomp filter refuses landlock_create_ruleset
// (EPERM, as container profiles do). LandlockErr says which.
//
// The probe is landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
// through go-landlock's landlock/syscall.LandlockGetABIVersion, run once per
// process (sync.OnceValue): the answer cannot change unless a seccomp filter
// is added later, and landjail's own tests install theirs before the first
// call (kerneltest.Main). Safe for concurrent use.
//
// ABI 6 and later count only with the erratum that fixed signal scoping
// across threads (LANDLOCK_CREATE_RULESET_ERRATA bit 1, Linux 6.15,
// backported to 6.12): without it the ABI is reported as 5, as
// go-landlock does (its landlock/internal/abi.go), so that both agree.
// This is the one ABI probe of landjail; LandlockRawABI is the kernel's
// own number.
func LandlockABI() int { return landlockABI() }

// LandlockRawABI is the ABI version the kernel reports, without the
// errata downgrade of LandlockABI: for features that do not depend on
// the erratum (audit logging, ABI 7). Same single probe.
func LandlockRawABI() int { return landlockRawABI() }

// LandlockErr returns why LandlockABI is 0: the raw syscall error (an
// unix.Errno such as ENOSYS, EOPNOTSUPP or EPERM, test with errors.Is), or
// an error wrapping errors.ErrUnsupported on non-Linux systems. It returns
// nil when Landlock is supported. Same single probe as LandlockABI.
func LandlockErr() error { return landlockErr() }

// Release returns the kernel release string from uname(2) (for example
// "6.18.44"), read once per process. It returns "" when uname fails or on
// non-Linux systems. It is meant for messages and reports; never compare
// it to decide whether a feature exists, probe the feature instead.
func Release() string { return releaseString() }

// Openat2Supported reports whether openat2(2) with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS works right now, by opening "." beneath an O_PATH fd
// of "/" (3 syscalls, a few microseconds). It returns false when the kernel
// lacks openat2 (ENOSYS, Linux < 5.6) or a seccomp filter refuses it (EPERM,
// container profiles written before 5.6), and false on any other failure.
//
// Unlike the other probes it is NOT cached: a seccomp filter installed
// later in the life of the process can take openat2 away. Callers keep a
// one-way atomic flag (set it to "unsupported" the first time openat2
// fails with ENOSYS or EPERM, never set it back) and call this only to
// decide the initial state or to report. Safe for concurrent use.
func Openat2Supported() bool { return openat2Supported() }

// SeccompMode returns the seccomp mode of the calling OS thread as the
// "Seccomp:" line of /proc/thread-self/status reports it (falling back to
// /proc/self/status on kernels older than 3.17): 0 none, 1 strict, 2 filter.
// It returns -1 when the mode cannot be read (no /proc, non-Linux). Seccomp
// filters are per thread; a filter installed with SECCOMP_FILTER_FLAG_TSYNC
// (as kerneltest.Main does) is on every thread.
func SeccompMode() int { return seccompMode() }

// NoNewPrivs reports whether the no_new_privs bit is set on the calling OS
// thread: prctl(PR_GET_NO_NEW_PRIVS), falling back to the "NoNewPrivs:"
// line of /proc/thread-self/status. The bit is required before an
// unprivileged process may install a seccomp filter or restrict itself with
// Landlock, and it is inherited across fork and execve. It returns false on
// non-Linux systems and when the bit cannot be read.
func NoNewPrivs() bool { return noNewPrivs() }
