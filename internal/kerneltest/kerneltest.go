// Package kerneltest is the test harness every landjail package uses to run
// its tests on this kernel as if it were an older or more locked-down one
// (the kernel-emulation matrix .ci/run runs), and to skip or fail tests that
// need a kernel feature.
//
// Every package's tests start with
//
//	func TestMain(m *testing.M) { kerneltest.Main(m) }
//
// With LANDJAIL_EMULATE unset the tests run natively. With, for example,
// LANDJAIL_EMULATE=openat2=ENOSYS, Main installs a seccomp filter on every
// thread of the test process before any test runs, so openat2(2) fails with
// ENOSYS exactly as on Linux < 5.6; LANDJAIL_EMULATE=all=EPERM makes openat2
// and the three Landlock syscalls fail with EPERM as a container seccomp
// profile does. LANDJAIL_EMULATE=ns=EPERM takes namespaces and mounts away
// as Docker's default seccomp profile does without CAP_SYS_ADMIN: unshare
// whatever its flags, clone with any CLONE_NEW* flag, setns, and the mount syscalls (mount,
// umount2, pivot_root, fsopen, fsconfig, fsmount, fspick, move_mount,
// open_tree, mount_setattr) fail with EPERM, and clone3, whose flags sit
// behind a pointer the filter cannot read, fails with ENOSYS whatever the
// chosen errno (as under Docker: libc and the Go runtime then fall back to
// clone(2)); ns=ENOSYS is the same with ENOSYS, as on a kernel without
// those syscalls. nscaps=EPERM is ns=EPERM except that clone(2) with
// CLONE_NEWUSER alone succeeds, as under Ubuntu's AppArmor restriction
// of unprivileged user namespaces (FeatureNSCaps); it is not a CI matrix
// mode, tests re-execute themselves into it. The filter is inherited by every child process and cannot be
// removed, which is why a test that needs a different mode re-executes
// itself with RunInSubprocess.
//
// Skips say why, and become failures with LANDJAIL_REQUIRE_KERNEL=1 (as CI
// sets it) unless the feature is missing only because the emulation blocks
// it on purpose. A test involving namespaces picks its per-mode row with
// ExpectNamespaces (layer in force, or the fallback the ns=... modes must
// show); only a test that cannot exist without them skips, through
// RequireNamespaces or RequireMount.
package kerneltest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
)

// Environment variables read by this package.
const (
	// EnvEmulate selects the emulated kernel: empty for native, else a
	// comma-separated list of feature=ERRNO items, features "openat2",
	// "landlock", "ns", "nscaps" (see FeatureNSCaps) or "all" (openat2
	// and landlock, not ns, so the CI matrix mode all=EPERM keeps its
	// meaning), errnos ENOSYS, EPERM or EACCES.
	EnvEmulate = "LANDJAIL_EMULATE"
	// EnvRequireKernel, when "1", turns a skip for a missing feature into a
	// failure, unless Blocked reports the feature as blocked on purpose.
	EnvRequireKernel = "LANDJAIL_REQUIRE_KERNEL"
	// envChild marks a process started by RunInSubprocess.
	envChild = "LANDJAIL_KERNELTEST_CHILD"
)

// Features that can be blocked.
const (
	FeatureOpenat2  = "openat2"
	FeatureLandlock = "landlock"
	// FeatureNamespaces is namespaces and mounts: unshare (any flags),
	// clone with a CLONE_NEW* flag, setns, the mount syscalls, and clone3 (always
	// ENOSYS); see the package doc.
	FeatureNamespaces = "ns"
	// FeatureNSCaps is FeatureNamespaces except that clone(2) with
	// CLONE_NEWUSER alone still succeeds: user namespaces can be made but
	// carry no capability, so nothing can be mounted or unshared in them.
	// That is Ubuntu's AppArmor restriction
	// (kernel.apparmor_restrict_unprivileged_userns = 1, the default
	// since 24.04). "nscaps=EPERM" blocks FeatureNamespaces too, so
	// Blocked(FeatureNamespaces) reports it.
	FeatureNSCaps = "nscaps"
)

var (
	mainCalled bool
	// nnpAtStart is no_new_privs as Main left it (see NoNewPrivsAtStart).
	nnpAtStart bool
	active     emulation // what Main (and Install) installed
	installed  = emulation{}
)

// Main is the body of every package's TestMain: it reads LANDJAIL_EMULATE,
// and when it is set, sets PR_SET_NO_NEW_PRIVS and installs a seccomp filter
// on all threads (SECCOMP_FILTER_FLAG_TSYNC) that makes the blocked syscalls
// return the chosen errno; then it checks the filter bites, runs the tests
// and exits with their status. An invalid spec, an unsupported GOARCH
// (emulation knows amd64 and arm64) or a filter that cannot be installed
// exits with status 2 before any test runs: a matrix mode that silently ran
// natively would be false evidence.
func Main(m *testing.M) {
	if err := setup(os.Getenv(EnvEmulate)); err != nil {
		fmt.Fprintf(os.Stderr, "kerneltest: %s=%q: %v\n", EnvEmulate, os.Getenv(EnvEmulate), err)
		os.Exit(2)
	}
	mainCalled = true
	installed = active.clone()
	nnpAtStart = kernel.NoNewPrivs()
	os.Exit(m.Run())
}

// Install adds the emulation spec (LANDJAIL_EMULATE syntax) to the running
// process, on every thread, on top of whatever is already installed, and
// records it for Emulated and Blocked. It is irreversible and affects every
// later test in the process: call it only inside a RunInSubprocess child,
// for tests that must see a feature disappear mid-run (for example that
// kernel.Openat2Supported is not cached). Errors as for Main.
func Install(spec string) error {
	e, err := parseSpec(spec)
	if err != nil {
		return err
	}
	if err := setup(e.String()); err != nil {
		return err
	}
	// setup replaced active with e; merge so earlier items stay reported.
	for f, errno := range e {
		installed[f] = errno
	}
	active = installed.clone()
	return nil
}

// Emulated returns the emulation Main installed in canonical form (for
// example "openat2=ENOSYS,landlock=ENOSYS"), or "" when running natively.
func Emulated() string { return active.String() }

// Blocked reports whether Main's seccomp filter makes the syscalls of
// feature (FeatureOpenat2, FeatureLandlock or FeatureNamespaces) fail, and
// with which errno (for FeatureNamespaces, clone3 fails with ENOSYS
// whatever errno says).
func Blocked(feature string) (errno unix.Errno, ok bool) {
	errno, ok = active[feature]
	return errno, ok
}

// NoNewPrivsAtStart reports whether the test process had no_new_privs
// before its first test: set by Main to install the emulation's filter, or
// inherited from whatever started the process (a container's or a
// sandbox's seccomp filter, internal/kerneltest/outer). A test that checks
// that landjail left its own threads unconfined compares them with this,
// not with false.
func NoNewPrivsAtStart() bool { return nnpAtStart }

func requireKernel() bool { return os.Getenv(EnvRequireKernel) == "1" }

// Missing skips the test because this kernel or process lacks something
// it needs that no Require helper covers (seccomp filters, CAP_SYS_ADMIN
// for a bind mount, ...); the message says what and why. With
// LANDJAIL_REQUIRE_KERNEL=1 it fails the test instead.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	checkMain(t)
	if requireKernel() {
		t.Fatalf(format+" (and "+EnvRequireKernel+"=1)", args...)
	}
	t.Skipf(format, args...)
}

func checkMain(t testing.TB) {
	t.Helper()
	if !mainCalled && os.Getenv(EnvEmulate) != "" {
		t.Fatalf("kerneltest: %s is set but this package's TestMain does not call kerneltest.Main, so nothing is emulated", EnvEmulate)
	}
}

// RequireOpenat2 skips the test when openat2(2) is unusable (Linux < 5.6,
// or refused by seccomp), saying why. With LANDJAIL_REQUIRE_KERNEL=1 it
// fails the test instead, unless the emulation blocks openat2 on purpose.
func RequireOpenat2(t testing.TB) {
	t.Helper()
	checkMain(t)
	if kernel.Openat2Supported() {
		return
	}
	if errno, ok := Blocked(FeatureOpenat2); ok {
		t.Skipf("openat2 blocked with %s by %s=%s", unix.ErrnoName(errno), EnvEmulate, Emulated())
	}
	if requireKernel() {
		t.Fatalf("openat2 unusable on kernel %s and %s=1", kernel.Release(), EnvRequireKernel)
	}
	t.Skipf("openat2 unusable on kernel %s (needs Linux >= 5.6 and a seccomp profile that allows it)", kernel.Release())
}

// RequireLandlockABI skips the test when the kernel's Landlock ABI is below
// abi, saying why. With LANDJAIL_REQUIRE_KERNEL=1 it fails the test instead,
// unless the emulation blocks Landlock on purpose.
func RequireLandlockABI(t testing.TB, abi int) {
	t.Helper()
	checkMain(t)
	have := kernel.LandlockABI()
	if have >= abi {
		return
	}
	if errno, ok := Blocked(FeatureLandlock); ok {
		t.Skipf("Landlock blocked with %s by %s=%s", unix.ErrnoName(errno), EnvEmulate, Emulated())
	}
	why := fmt.Sprintf("needs Landlock ABI >= %d, kernel %s has %d", abi, kernel.Release(), have)
	if err := kernel.LandlockErr(); err != nil {
		why += fmt.Sprintf(" (%v)", err)
	}
	if requireKernel() {
		t.Fatalf("%s and %s=1", why, EnvRequireKernel)
	}
	t.Skip(why)
}

// IsChild reports whether this process was started by RunInSubprocess.
func IsChild() bool { return os.Getenv(envChild) == "1" }

// RunInSubprocess re-executes the current test binary running only the
// current test (-test.run=^Name$, each subtest level anchored), with env
// ("KEY=value") added to the environment, typically a different
// LANDJAIL_EMULATE. The child inherits the parent's seccomp filter, which
// cannot be removed; the child's LANDJAIL_EMULATE is therefore the
// parent's emulation with env's items overriding per feature, so that
// Blocked stays truthful in the child (nscaps does not override an
// inherited ns: the child is then plain ns).
//
// In the parent it returns false after the child exits: the parent test
// fails if the child failed or ran no test, is skipped if the child
// skipped, and the child's output is relayed through t.Log. In the child
// it returns true; the caller then does the work and returns. Like
// go-landlock's lltest.RunInSubprocess, and needed for the same reason:
// seccomp filters and Landlock cannot be undone in a process.
func RunInSubprocess(t *testing.T, env ...string) (isChild bool) {
	t.Helper()
	if IsChild() {
		checkMain(t)
		return true
	}
	var parts []string
	for _, p := range strings.Split(t.Name(), "/") {
		parts = append(parts, "^"+regexp.QuoteMeta(p)+"$")
	}
	args := []string{"-test.run=" + strings.Join(parts, "/"), "-test.v=true", "-test.count=1"}

	childEnv := append(os.Environ(), envChild+"=1")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == EnvEmulate {
			merged, err := parseSpec(v)
			if err != nil {
				t.Fatalf("kerneltest: RunInSubprocess: %s=%q: %v", EnvEmulate, v, err)
			}
			for f, e := range active {
				if _, ok := merged[f]; !ok {
					merged[f] = e
				}
			}
			// nscaps cannot loosen an inherited ns filter (which refuses
			// clone with CLONE_NEWUSER too): the child is then plain ns.
			if _, ok := active[FeatureNamespaces]; ok {
				if _, caps := active[FeatureNSCaps]; !caps {
					delete(merged, FeatureNSCaps)
				}
			}
			kv = EnvEmulate + "=" + merged.String()
		}
		childEnv = append(childEnv, kv) // os/exec keeps the last of duplicate keys
	}
	out, err := runChild(args, childEnv)
	text := string(out)
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		t.Log(l)
	}
	if err != nil {
		t.Fatalf("kerneltest: test failed in subprocess (%s): %v", strings.Join(env, " "), err)
	}
	if strings.Contains(text, "no tests to run") || !strings.Contains(text, "--- ") {
		t.Fatalf("kerneltest: subprocess ran no test for %s", args[0])
	}
	if strings.Contains(text, "--- SKIP: "+t.Name()+" ") {
		t.Skip("kerneltest: test skipped in subprocess")
	}
	return false
}

// SerializeAudit makes the test binaries that use the system's audit
// state (Landlock audit records: internal/denials and cmd/landjail's
// --explain tests) run one after the other when `go test ./...` runs
// packages in parallel: audit's enabled flag is one per machine, and a
// test that sets it while another package's collector relies on it loses
// records (seen as a flaky TestCollectorForeignDomainAndSecondReader). It
// takes an exclusive flock(2) on a file in the temporary directory for
// the life of the process; a re-executed child of a test (IsChild)
// takes nothing, nor does a helper process it starts (marked in the
// environment). Call it in TestMain before Main.
func SerializeAudit() {
	// A child of this test binary (RunInSubprocess, a helper process run
	// with os.Args[0]) inherits the marker: its parent holds the lock.
	if IsChild() || os.Getenv(envAuditHeld) == "1" {
		return
	}
	// A raw descriptor, never closed: held until the process exits (an
	// *os.File would be closed by its finalizer).
	fd, err := unix.Open(filepath.Join(os.TempDir(), "landjail-test-audit.lock"), unix.O_RDWR|unix.O_CREAT|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return // best effort: without the lock the tests may only flake
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return
	}
	os.Setenv(envAuditHeld, "1")
}

// envAuditHeld marks the processes a lock holder of SerializeAudit
// started.
const envAuditHeld = "LANDJAIL_TEST_AUDIT_HELD"
