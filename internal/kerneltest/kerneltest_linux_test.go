package kerneltest

import (
	"fmt"
	"os"
	osexec "os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
	"github.com/landjail/landjail/internal/kernel"
)

func TestMain(m *testing.M) { Main(m) }

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want string // canonical; "" with wantErr false means native
		err  bool
	}{
		{spec: "", want: ""},
		{spec: "openat2=ENOSYS", want: "openat2=ENOSYS"},
		{spec: "openat2=EPERM", want: "openat2=EPERM"},
		{spec: "landlock=ENOSYS", want: "landlock=ENOSYS"},
		{spec: " landlock = eperm ", want: "landlock=EPERM"},
		{spec: "all=ENOSYS", want: "landlock=ENOSYS,openat2=ENOSYS"},
		{spec: "all=EPERM", want: "landlock=EPERM,openat2=EPERM"},
		{spec: "landlock=ENOSYS,openat2=EPERM", want: "landlock=ENOSYS,openat2=EPERM"},
		{spec: "all=EPERM,openat2=ENOSYS", want: "landlock=EPERM,openat2=ENOSYS"},
		{spec: "ns=EPERM", want: "ns=EPERM"},
		{spec: "NS=enosys", want: "ns=ENOSYS"},
		{spec: "nscaps=EPERM", want: "ns=EPERM,nscaps=EPERM"},
		{spec: "all=EPERM,ns=ENOSYS", want: "landlock=EPERM,ns=ENOSYS,openat2=EPERM"},
		{spec: "openat2", err: true},
		{spec: "openat2=EINVAL", err: true},
		{spec: "mount=EPERM", err: true},
	} {
		e, err := parseSpec(tc.spec)
		if tc.err {
			assert.Error(t, err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		assert.Equal(t, tc.want, e.String(), tc.spec)
	}
}

// call is a syscall and the action the emulation filter must return.
type call struct {
	in   bpfprog.Data
	want bpfprog.Action
}

// TestFilterProgram runs the compiled program in x/net/bpf's VM on
// synthetic seccomp_data, without a kernel: table of syscall → action.
func TestFilterProgram(t *testing.T) {
	const (
		x86 = bpfprog.ArchX86_64
		arm = bpfprog.ArchAArch64
		x32 = bpfprog.X32SyscallBit
	)
	errno := bpfprog.Errno
	allow := bpfprog.Allow
	for _, tc := range []struct {
		spec  string
		arch  bpfprog.Arch
		calls []call
	}{
		{spec: "openat2=ENOSYS,landlock=EPERM", arch: x86, calls: []call{
			{bpfprog.Call(x86, unix.SYS_OPENAT2), errno(unix.ENOSYS)},
			{bpfprog.Call(x86, unix.SYS_OPENAT2|x32), errno(unix.ENOSYS)},
			{bpfprog.Call(x86, unix.SYS_LANDLOCK_CREATE_RULESET), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_LANDLOCK_ADD_RULE|x32), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_LANDLOCK_RESTRICT_SELF), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_OPENAT), allow},
			{bpfprog.Call(x86, unix.SYS_OPENAT|x32), allow},
			{bpfprog.Call(arm, unix.SYS_OPENAT2), allow}, // other arch is allowed
		}},
		{spec: "ns=EPERM", arch: x86, calls: []call{
			{bpfprog.Call(x86, unix.SYS_UNSHARE, unix.CLONE_NEWNS), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_UNSHARE, unix.CLONE_NEWUSER|unix.CLONE_FS), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_UNSHARE, unix.CLONE_NEWTIME), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_UNSHARE|x32, unix.CLONE_NEWNET), errno(unix.EPERM)},
			// Docker refuses unshare whatever the flags.
			{bpfprog.Call(x86, unix.SYS_UNSHARE, unix.CLONE_FS|unix.CLONE_FILES), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_UNSHARE, 0), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_CLONE, unix.CLONE_NEWPID|uint64(unix.SIGCHLD)), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_CLONE, unix.CLONE_NEWCGROUP), errno(unix.EPERM)},
			// 0x80 is CLONE_NEWTIME for unshare but part of the exit
			// signal for clone: SIGCHLD|0x80 is not a namespace.
			{bpfprog.Call(x86, unix.SYS_CLONE, unix.CLONE_VM|unix.CLONE_VFORK|uint64(unix.SIGCHLD)), allow},
			{bpfprog.Call(x86, unix.SYS_CLONE, 0x80|uint64(unix.SIGCHLD)), allow},
			{bpfprog.Call(x86, unix.SYS_CLONE3), errno(unix.ENOSYS)},
			{bpfprog.Call(x86, unix.SYS_CLONE3|x32), errno(unix.ENOSYS)},
			{bpfprog.Call(x86, unix.SYS_SETNS, 3, 0), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_MOUNT), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_UMOUNT2), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_PIVOT_ROOT), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_FSOPEN), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_FSCONFIG), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_FSMOUNT), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_FSPICK), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_MOVE_MOUNT), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_OPEN_TREE), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_MOUNT_SETATTR|x32), errno(unix.EPERM)},
			{bpfprog.Call(x86, unix.SYS_OPENAT2), allow},
			{bpfprog.Call(x86, unix.SYS_LANDLOCK_CREATE_RULESET), allow},
		}},
		{spec: "ns=ENOSYS,openat2=EACCES", arch: arm, calls: []call{
			{bpfprog.Call(arm, unix.SYS_UNSHARE, unix.CLONE_NEWNS), errno(unix.ENOSYS)},
			{bpfprog.Call(arm, unix.SYS_OPEN_TREE), errno(unix.ENOSYS)},
			{bpfprog.Call(arm, unix.SYS_CLONE3), errno(unix.ENOSYS)},
			{bpfprog.Call(arm, unix.SYS_OPENAT2), errno(unix.EACCES)},
			{bpfprog.Call(arm, unix.SYS_UNSHARE, unix.CLONE_FS), errno(unix.ENOSYS)},
			{bpfprog.Call(arm, unix.SYS_CLONE, uint64(unix.SIGCHLD)), allow},
		}},
		{spec: "landlock=ENOSYS", arch: arm, calls: []call{
			{bpfprog.Call(arm, unix.SYS_LANDLOCK_CREATE_RULESET), errno(unix.ENOSYS)},
			{bpfprog.Call(arm, unix.SYS_OPENAT2), allow},
			{bpfprog.Call(x86, unix.SYS_LANDLOCK_CREATE_RULESET), allow},
		}},
	} {
		e, err := parseSpec(tc.spec)
		require.NoError(t, err)
		prog, err := filterProgram(e, tc.arch).Compile()
		require.NoError(t, err)
		vm, err := bpfprog.NewVM(prog)
		require.NoError(t, err)
		for _, c := range tc.calls {
			got, err := vm.Run(c.in)
			require.NoError(t, err)
			assert.Equal(t, c.want.String(), got.String(), "%s: %+v", tc.spec, c.in)
		}
	}
}

func rawOpenat2() error {
	fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC})
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func rawLandlock() error {
	_, err := llsyscall.LandlockGetABIVersion()
	return err
}

// envParentAnswers carries to a RunInSubprocess child what openat2 and
// landlock_create_ruleset answered in the parent: what the kernel (and
// any outer seccomp filter the test process inherited) says for a feature
// that the child's emulation does not block. The tests cannot assume the
// kernel has every feature.
const envParentAnswers = "LANDJAIL_KERNELTEST_PARENT_ANSWERS"

func answers() string {
	name := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	return "openat2=" + name(rawOpenat2()) + ",landlock=" + name(rawLandlock()) + ",ns=" + name(rawSetns())
}

// assertUnblockedAsParent checks, in a child, that every feature the
// child's emulation does not block answers as it did in the parent: the
// emulation blocked nothing else.
func assertUnblockedAsParent(t *testing.T) {
	t.Helper()
	parent, ok := os.LookupEnv(envParentAnswers)
	require.True(t, ok, "the parent passes %s", envParentAnswers)
	want := map[string]string{}
	for item := range strings.SplitSeq(parent, ",") {
		f, a, _ := strings.Cut(item, "=")
		want[f] = a
	}
	got := map[string]string{}
	for item := range strings.SplitSeq(answers(), ",") {
		f, a, _ := strings.Cut(item, "=")
		got[f] = a
	}
	for _, f := range []string{FeatureOpenat2, FeatureLandlock, FeatureNamespaces} {
		if _, blocked := Blocked(f); !blocked {
			assert.Equal(t, want[f], got[f], "%s is not blocked here, so it answers as in the parent", f)
		}
	}
}

// TestEmulation runs each matrix mode in a fresh process and checks that
// the raw syscalls, the kernel probes and Blocked all agree.
func TestEmulation(t *testing.T) {
	for _, tc := range []struct {
		spec                 string
		openat2, landlck, ns unix.Errno // 0: not blocked
	}{
		{spec: "openat2=ENOSYS", openat2: unix.ENOSYS},
		{spec: "openat2=EPERM", openat2: unix.EPERM},
		{spec: "landlock=ENOSYS", landlck: unix.ENOSYS},
		{spec: "landlock=EPERM", landlck: unix.EPERM},
		{spec: "all=ENOSYS", openat2: unix.ENOSYS, landlck: unix.ENOSYS},
		{spec: "all=EPERM", openat2: unix.EPERM, landlck: unix.EPERM},
		{spec: "ns=EPERM", ns: unix.EPERM},
		{spec: "ns=ENOSYS", ns: unix.ENOSYS},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			if !RunInSubprocess(t, EnvEmulate+"="+tc.spec, envParentAnswers+"="+answers()) {
				return
			}
			assert.Equal(t, 2, kernel.SeccompMode())
			assert.True(t, kernel.NoNewPrivs())
			// Every thread has the filter (TSYNC), not only Main's.
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					runtime.LockOSThread() // retire this thread afterwards
					assert.Equal(t, 2, kernel.SeccompMode())
					if tc.openat2 != 0 {
						assert.ErrorIs(t, rawOpenat2(), tc.openat2)
					}
				})
			}
			wg.Wait()
			// The requested items are blocked; others may be inherited
			// from a matrix run of the whole suite, and Blocked must say so.
			errno, ok := Blocked(FeatureOpenat2)
			if tc.openat2 != 0 {
				assert.True(t, ok)
				assert.Equal(t, tc.openat2, errno)
			}
			if ok {
				assert.ErrorIs(t, rawOpenat2(), errno)
				assert.False(t, kernel.Openat2Supported())
			}
			errno, ok = Blocked(FeatureLandlock)
			if tc.landlck != 0 {
				assert.True(t, ok)
				assert.Equal(t, tc.landlck, errno)
			}
			if ok {
				assert.Equal(t, 0, kernel.LandlockABI())
				assert.ErrorIs(t, kernel.LandlockErr(), errno)
			}
			errno, ok = Blocked(FeatureNamespaces)
			if tc.ns != 0 {
				assert.True(t, ok)
				assert.Equal(t, tc.ns, errno)
			}
			if ok {
				assertNamespacesBlocked(t, errno)
			}
			assertUnblockedAsParent(t)
		})
	}
}

// assertNamespacesBlocked checks the ns emulation with real syscalls, on a
// thread that dies afterwards (an unshare that got through would change
// only it): unshare with or without a namespace flag, setns, the mount
// syscalls old and new, and clone3 fail; fork/exec still works, and
// os/exec with SysProcAttr.Cloneflags = CLONE_NEWNS gets errno (Go tries
// clone3, gets ENOSYS, falls back to clone(2), which the filter refuses).
func assertNamespacesBlocked(t *testing.T, errno unix.Errno) {
	t.Helper()
	type result struct{ unshareNS, unshareFS, setns, fsopen, openTree, mount, umount, pivot, mountSetattr, clone3 error }
	res := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime retires the thread
		var r result
		r.unshareNS = unix.Unshare(unix.CLONE_NEWNS)
		r.unshareFS = unix.Unshare(unix.CLONE_FS)
		r.setns = unix.Setns(0, unix.CLONE_NEWNET)
		_, r.fsopen = unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		_, r.openTree = unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE)
		r.mount = unix.Mount("none", "/nonexistent-landjail", "tmpfs", 0, "")
		r.umount = unix.Unmount("/nonexistent-landjail", 0)
		r.pivot = unix.PivotRoot("/nonexistent-landjail", "/nonexistent-landjail")
		r.mountSetattr = unix.MountSetattr(-1, "", unix.AT_EMPTY_PATH, &unix.MountAttr{})
		r.clone3 = rawClone3Invalid()
		res <- r
	}()
	r := <-res
	assert.ErrorIs(t, r.unshareNS, errno, "unshare(CLONE_NEWNS)")
	assert.ErrorIs(t, r.unshareFS, errno, "unshare(CLONE_FS): Docker refuses unshare whatever the flags")
	assert.ErrorIs(t, r.setns, errno, "setns")
	assert.ErrorIs(t, r.fsopen, errno, "fsopen")
	assert.ErrorIs(t, r.openTree, errno, "open_tree")
	assert.ErrorIs(t, r.mount, errno, "mount")
	assert.ErrorIs(t, r.umount, errno, "umount2")
	assert.ErrorIs(t, r.pivot, errno, "pivot_root")
	assert.ErrorIs(t, r.mountSetattr, errno, "mount_setattr")
	assert.ErrorIs(t, r.clone3, unix.ENOSYS, "clone3")
	// clone(2) without namespace flags: os/exec forks and execs.
	assert.NoError(t, osexec.Command("/bin/true").Run())
	c := osexec.Command("/bin/true")
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	assert.ErrorIs(t, c.Run(), errno, "os/exec with Cloneflags CLONE_NEWNS")
}

// TestNative checks that without emulation nothing is blocked.
func TestNative(t *testing.T) {
	if Emulated() != "" {
		t.Skipf("the whole run is emulated (%s); a child cannot remove the filter", Emulated())
	}
	_, ok := Blocked(FeatureOpenat2)
	assert.False(t, ok)
	RequireOpenat2(t)
	assert.NoError(t, rawOpenat2())
	assert.True(t, kernel.Openat2Supported())
	RequireLandlockABI(t, 1)
	assert.NoError(t, kernel.LandlockErr())
}

// TestInstallMidRun: a filter added while the process runs takes openat2
// away, and kernel.Openat2Supported notices (it is not cached).
func TestInstallMidRun(t *testing.T) {
	if !RunInSubprocess(t) {
		return
	}
	RequireOpenat2(t)
	require.True(t, kernel.Openat2Supported())
	require.NoError(t, Install("openat2=EPERM"))
	assert.False(t, kernel.Openat2Supported())
	errno, ok := Blocked(FeatureOpenat2)
	assert.True(t, ok)
	assert.Equal(t, unix.EPERM, errno)
}

// fakeTB records how a Require helper ended.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skipped = true
	runtime.Goexit()
}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	runtime.Goexit()
}

func outcome(t *testing.T, f func(testing.TB)) *fakeTB {
	tb := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	return tb
}

func TestRequireSkipOrFail(t *testing.T) {
	if _, ok := Blocked(FeatureLandlock); ok {
		t.Skipf("Landlock is blocked on purpose by %s=%s, so no feature is missing by accident", EnvEmulate, Emulated())
	}
	missing := func(tb testing.TB) { RequireLandlockABI(tb, 1<<20) }

	t.Setenv(EnvRequireKernel, "")
	o := outcome(t, missing)
	assert.True(t, o.skipped, "missing feature skips")
	assert.False(t, o.failed)

	t.Setenv(EnvRequireKernel, "1")
	o = outcome(t, missing)
	assert.True(t, o.failed, "missing feature fails with %s=1", EnvRequireKernel)

	present := outcome(t, func(tb testing.TB) { RequireLandlockABI(tb, 0) })
	assert.False(t, present.skipped || present.failed)
}

// TestRequireBlockedSkips: a feature blocked on purpose by the emulation
// skips even with LANDJAIL_REQUIRE_KERNEL=1.
func TestRequireBlockedSkips(t *testing.T) {
	if !RunInSubprocess(t, EnvEmulate+"=all=EPERM", EnvRequireKernel+"=1") {
		return
	}
	o := outcome(t, func(tb testing.TB) { RequireLandlockABI(tb, 1) })
	assert.True(t, o.skipped)
	assert.False(t, o.failed)
	o = outcome(t, RequireOpenat2)
	assert.True(t, o.skipped)
	assert.False(t, o.failed)
}

func TestRunInSubprocessSkipPropagates(t *testing.T) {
	if RunInSubprocess(t) {
		t.Skip("skipped in the child on purpose")
	}
	t.Error("the parent should have been skipped with the child")
}

// TestBlockedNative: a child asked for no emulation blocks nothing more
// than its parent had: each feature answers as in the parent (natively,
// or as an outer seccomp filter makes it).
func TestBlockedNative(t *testing.T) {
	if !RunInSubprocess(t, EnvEmulate+"=", envParentAnswers+"="+answers()) {
		return
	}
	assertUnblockedAsParent(t)
	if Emulated() != "" {
		// Inherited from a matrix run of the whole suite.
		return
	}
	for _, f := range []string{FeatureOpenat2, FeatureLandlock} {
		_, ok := Blocked(f)
		assert.False(t, ok, f)
	}
}

// TestMissing: Missing skips, or fails with LANDJAIL_REQUIRE_KERNEL=1.
func TestMissing(t *testing.T) {
	missing := func(tb testing.TB) { Missing(tb, "no %s here", "frobnicator") }
	t.Setenv(EnvRequireKernel, "")
	o := outcome(t, missing)
	assert.True(t, o.skipped)
	assert.False(t, o.failed)
	t.Setenv(EnvRequireKernel, "1")
	o = outcome(t, missing)
	assert.True(t, o.failed)
	assert.False(t, o.skipped)
}

// TestNoNewPrivsAtStart: Main records no_new_privs before the tests; the
// emulation sets it, so it is true whenever something is emulated, and it
// is what the process has now (no test here sets it on every thread).
func TestNoNewPrivsAtStart(t *testing.T) {
	if Emulated() != "" {
		assert.True(t, NoNewPrivsAtStart())
	}
	assert.Equal(t, kernel.NoNewPrivs(), NoNewPrivsAtStart())
}

// TestExpectNamespaces: per mode, which row a namespace test takes, and
// when the helpers skip or fail, in a child with the emulation given
// (the parent's own mode is inherited underneath). Natively a probe error
// is an accident (skip, or fail with REQUIRE_KERNEL); under ns=EPERM the
// same EPERM is the expected fallback, a probe that succeeded or failed
// with another errno fails the test, and a mount refused with EPERM skips.
func TestExpectNamespaces(t *testing.T) {
	eperm := fmt.Errorf("nsview: unavailable: %w", unix.EPERM)
	for _, tc := range []struct {
		name, emulate string
		probe         error
		// want: "layer" (ExpectNamespaces true), "fallback" (false),
		// "skip", "fail"; for RequireNamespaces and RequireMount.
		expect, require, mount string
	}{
		{name: "native ok", probe: nil, expect: "layer", require: "layer", mount: "layer"},
		{name: "native missing", probe: eperm, expect: "fail", require: "fail", mount: "fail"},
		{name: "ns=EPERM refused", emulate: "ns=EPERM", probe: eperm, expect: "fallback", require: "skip", mount: "skip"},
		{name: "ns=EPERM probe ok", emulate: "ns=EPERM", probe: nil, expect: "fail", require: "fail", mount: "layer"},
		{name: "ns=ENOSYS but EPERM", emulate: "ns=ENOSYS", probe: eperm, expect: "fail", require: "fail", mount: "fail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{EnvRequireKernel + "=1"}
			if tc.emulate != "" {
				env = append(env, EnvEmulate+"="+tc.emulate)
			}
			if !RunInSubprocess(t, env...) {
				return
			}
			if _, inherited := Blocked(FeatureNamespaces); inherited && tc.emulate == "" {
				t.Skipf("the whole run is emulated (%s); a native row cannot be checked in it", Emulated())
			}
			got := func(f func(tb testing.TB) bool) string {
				var ok bool
				o := outcome(t, func(tb testing.TB) { ok = f(tb) })
				switch {
				case o.failed:
					return "fail"
				case o.skipped:
					return "skip"
				case ok:
					return "layer"
				}
				return "fallback"
			}
			assert.Equal(t, tc.expect, got(func(tb testing.TB) bool { return ExpectNamespaces(tb, tc.probe) }), "ExpectNamespaces")
			assert.Equal(t, tc.require, got(func(tb testing.TB) bool { RequireNamespaces(tb, tc.probe); return true }), "RequireNamespaces")
			assert.Equal(t, tc.mount, got(func(tb testing.TB) bool { RequireMount(tb, tc.probe, "bind mount"); return true }), "RequireMount")
		})
	}
}
