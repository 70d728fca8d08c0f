package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/seccomp"
)

// TestDeniedHint: the line after a run without --explain comes only with
// evidence of a refusal or a status that looks like one; a plain failure
// (the controls: 1, 7, a test's failure) gets none.
func TestDeniedHint(t *testing.T) {
	for _, tc := range []struct {
		code        int
		signal      string
		proxy, hint bool
		enforced    bool
	}{
		{code: 0, enforced: true},
		{code: 1, enforced: true},
		{code: 7, enforced: true},
		{code: 126, enforced: true, hint: true},
		{code: 77, enforced: true, hint: true},
		{code: 1, proxy: true, enforced: true, hint: true},
		{code: 159, signal: "SIGSYS", enforced: true, hint: true},
		{code: 126, enforced: false},
	} {
		got := deniedHint("cmd", tc.code, tc.signal, tc.proxy, tc.enforced)
		assert.Equal(t, tc.hint, got != "", "%+v: %q", tc, got)
	}
}

// TestExplainEvent: each kind of record the seccomp supervisor makes is
// named with its rule and the flag that lifts it (or by design).
func TestExplainEvent(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, out, ro := filepath.Join(base, "ws"), filepath.Join(base, "out"), filepath.Join(base, "ro")
	for _, d := range []string{ws + "/docs", out, ro + "/bin"} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	w, err := jail.New(ws, jail.WithDeny(".env"), jail.WithReadOnly("docs/"), jail.WithAllowed(ro, jail.ReadOnly))
	require.NoError(t, err)
	defer w.Close()
	udp := seccomp.Event{Syscall: "socket", Rule: "inet-non-tcp", Errno: unix.EPERM, Args: [3]uint64{unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC}, Count: 1}
	for _, tc := range []struct {
		name  string
		e     seccomp.Event
		layer refusal.Layer
		rule  string
		fix   string
		noise bool
	}{
		{"udp", udp, refusal.Seccomp, "UDP", "--allow-domain HOST", false},
		{"raw", seccomp.Event{Syscall: "socket", Rule: "inet-non-tcp", Args: [3]uint64{unix.AF_INET, unix.SOCK_RAW}}, refusal.Seccomp, "SOCK_RAW", "not allowed by design", false},
		{"unix", seccomp.Event{Syscall: "socket", Rule: "unix-socket", Args: [3]uint64{unix.AF_UNIX, unix.SOCK_STREAM}}, refusal.Seccomp, "AF_UNIX", "--allow-unix-sockets", false},
		{"setid", seccomp.Event{Syscall: "fchmodat", Rule: "setid-fchmodat", Errno: unix.EPERM}, refusal.Seccomp, "setid-fchmodat", "not allowed by design", false},
		{"bpf", seccomp.Event{Syscall: "bpf", Rule: "bpf", Errno: unix.EPERM}, refusal.Seccomp, "bpf", "--allow-dangerous-syscalls", false},
		{"clone3", seccomp.Event{Syscall: "clone3", Rule: "clone3", Errno: unix.ENOSYS}, refusal.Seccomp, "fall back", "not allowed by design", true},
		{"erofs outside", seccomp.Event{Syscall: "openat", Path: out + "/new", Access: "create", Why: seccomp.ViewReadOnly, Errno: unix.EROFS}, refusal.View, "outside every writable root", "--rw " + out, false},
		{"erofs file outside", seccomp.Event{Syscall: "openat", Path: out + "/f", Access: "write", Why: seccomp.ViewReadOnly}, refusal.View, "outside every writable root", "--rw " + out + "/f", false},
		{"erofs read-only path", seccomp.Event{Syscall: "openat", Path: ws + "/docs/a.md", Access: "write", Why: seccomp.ViewReadOnly}, refusal.View, "--read-only path", "--rw " + ws + "/docs/a.md", false},
		{"masked", seccomp.Event{Syscall: "openat", Path: ws + "/.env", Access: "read", Why: seccomp.ViewNoPerm}, refusal.View, "masked", "drop the pattern", false},
		{"own mode", seccomp.Event{Syscall: "openat", Path: ws + "/zero", Access: "read", Why: seccomp.ViewNoPerm}, refusal.View, "own permissions", "not allowed by design", false},
		{"cgroup probe", seccomp.Event{Syscall: "openat", Path: "/sys/fs/cgroup/cpu.max", Access: "write", Why: seccomp.ViewReadOnly}, refusal.View, "read-only view", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := explainEvent(w, tc.e)
			assert.Equal(t, tc.layer, x.Layer)
			assert.Contains(t, x.Rule, tc.rule)
			if tc.fix != "" {
				assert.Contains(t, x.Remedy(), tc.fix)
			}
			assert.Equal(t, tc.noise, x.Noise)
		})
	}
}

// TestToolchainRoot: an execute grant names the toolchain, not the shim.
func TestToolchainRoot(t *testing.T) {
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".pyenv"), toolchainRoot(filepath.Join(home, ".pyenv/shims/python3")))
	assert.Equal(t, filepath.Join(home, "script"), toolchainRoot(filepath.Join(home, "script")), "a file directly in HOME")
	assert.Equal(t, "/opt/go", toolchainRoot("/opt/go/bin/go"))
	assert.Equal(t, "/usr/bin/python3", toolchainRoot("/usr/bin/python3"), "not /usr")
	assert.Equal(t, "/srv/tool", toolchainRoot("/srv/tool"))
}

// TestPrintRefusalsNoise: probes are counted apart unless --explain-all.
func TestPrintRefusalsNoise(t *testing.T) {
	xs := []refusal.Refusal{
		{Layer: refusal.Landlock, Path: "/sys/fs/cgroup/cpu.max", Right: "read_file", Rule: "outside", Count: 36, Noise: true},
		{Layer: refusal.Seccomp, Right: "socket", Rule: "seccomp inet-non-tcp", Flag: "--allow-domain HOST", Count: 1},
	}
	var b strings.Builder
	printRefusals(&b, xs, false, "", true)
	assert.NotContains(t, b.String(), "cpu.max")
	assert.Contains(t, b.String(), "1 more (36×)")
	assert.Contains(t, b.String(), "[seccomp] socket (1×): ")
	b.Reset()
	printRefusals(&b, xs, true, "", true)
	assert.Contains(t, b.String(), "cpu.max", "control: --explain-all lists it")
}

// TestRunExplainLayers: the built landjail, run --explain, the issue's
// scenarios: a write outside the writable roots (EROFS from the view),
// a masked secret (mode 0000, EACCES), a UDP socket (a name lookup:
// seccomp) and an execve of a noexec file, each named with its layer and
// the flag that allows it; as root and, where the command can reach the
// workspace, as uid 65534. The control: the same commands fail the same
// way without --explain (nothing is allowed by the observation).
func TestRunExplainLayers(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	bin := landjailBin(t)
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("s3cret"), 0o644))
	script := `echo x > /etc/landjail-explain-test; cat .env; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'; exit 3`
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--deny", ".env", "--", "sh", "-c", "cd "+ws+" && "+script)
	assert.Equal(t, 3, code, out)
	assert.NotContains(t, out, "s3cret")
	assert.NotContains(t, out, "--explain", "exit 3: no hint")
	if !strings.Contains(out, "Read-only file system") {
		// Without the namespace layer there is no view: Landlock refuses.
		kerneltest.Missing(t, "no namespace view here (no EROFS): %s", out)
		return
	}

	code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--deny", ".env", "--explain", "--", "sh", "-c", "cd "+ws+" && "+script)
	assert.Equal(t, 3, code, out)
	assert.NotContains(t, out, "s3cret")
	_, err := os.Stat("/etc/landjail-explain-test")
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, out, "[view] create /etc/landjail-explain-test")
	assert.Contains(t, out, "outside every writable root (EROFS); to allow: --rw /etc")
	assert.Contains(t, out, "[view] read "+filepath.Join(ws, ".env"))
	assert.Contains(t, out, "masked: matches a deny pattern")
	assert.Contains(t, out, "[seccomp] socket")
	assert.Contains(t, out, "to allow: --allow-domain HOST")
}

// TestRunExplainNonRoot: as uid 65534 (no CAP_AUDIT_READ: Landlock's
// records are unavailable) with --no-namespaces (the filter is installed
// by landjail's spawner, with the broker), --explain still names a read
// Landlock refuses (the deny pattern's .env: the broker's confined open
// was refused, landjail's own succeeded) and the seccomp UDP refusal. The
// control: /etc/shadow, refused by its own mode 0640 (landjail's
// unconfined open is refused too), is not attributed to Landlock.
func TestRunExplainNonRoot(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("drops to uid 65534: needs root")
	}
	shared := func(mode os.FileMode) string {
		d, err := os.MkdirTemp("", "landjail-explain-nonroot-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, mode))
		d, err = filepath.EvalSymlinks(d)
		require.NoError(t, err)
		return d
	}
	ws, dir := shared(0o777), shared(0o755)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("s3cret"), 0o644))
	bin := filepath.Join(dir, "landjail")
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	cmd := osexec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "run", "--no-namespaces",
		"--workspace", ws, "--deny", ".env", "--explain", "--timeout", "1m", "--", "sh", "-c",
		`cat `+ws+`/.env; cat /etc/shadow; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'; exit 0`)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := string(out)
	assert.NotContains(t, s, "s3cret")
	assert.Contains(t, s, "Landlock's own denials are unavailable")
	assert.Contains(t, s, "read_file "+filepath.Join(ws, ".env"))
	assert.Contains(t, s, "seen without audit records")
	assert.Contains(t, s, "[seccomp] socket (1×")
	assert.Contains(t, s, "to allow: --allow-domain HOST")
	assert.Contains(t, s, "/etc/shadow: Permission denied", "the control was refused")
	assert.NotContains(t, s, "read_file /etc/shadow", "by its own mode, not by Landlock")
}

// TestRunExplainNonRootView: as uid 65534 with the namespace layer (the
// user-namespace stage installs the filter in its own process and hands
// its listener back, pidfd_getfd), --explain names the view's EROFS and
// mask and the seccomp UDP refusal. Red before: the stage installed the
// plain program and "nothing was refused" was printed. The control: the
// same run without --explain fails the same way and lists nothing.
func TestRunExplainNonRootView(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("drops to uid 65534: needs root")
	}
	shared := func(mode os.FileMode) string {
		d, err := os.MkdirTemp("", "landjail-explain-nonroot-view-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, mode))
		d, err = filepath.EvalSymlinks(d)
		require.NoError(t, err)
		return d
	}
	ws, dir := shared(0o777), shared(0o755)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("s3cret"), 0o644))
	bin := filepath.Join(dir, "landjail")
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	script := `cat ` + ws + `/.env; echo x > /etc/landjail-explain-nonroot; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)'; exit 0`
	run := func(explain ...string) string {
		args := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "run", "--workspace", ws, "--deny", ".env", "--timeout", "1m"}, explain...)
		cmd := osexec.Command("setpriv", append(args, "--", "sh", "-c", script)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	control := run()
	if !strings.Contains(control, "Read-only file system") {
		kerneltest.Missing(t, "no namespace view for uid 65534 here: %s", control)
		return
	}
	assert.NotContains(t, control, "refused")
	s := run("--explain")
	assert.NotContains(t, s, "s3cret")
	assert.Contains(t, s, "[view] read "+filepath.Join(ws, ".env"))
	assert.Contains(t, s, "[view] create /etc/landjail-explain-nonroot")
	assert.Contains(t, s, "to allow: --rw /etc")
	assert.Contains(t, s, "to allow: --allow-domain HOST")
}

// TestRunExplainDotDotAfterLink: red team round 31, R31b-6. The view
// recorder cleaned a path lexically before resolving it, so ".." after a
// symbolic link was judged where the kernel does not go: with
// u -> /usr/share/doc, `touch u/../../lib/x` (the kernel: /usr/lib/x,
// refused EROFS) was not reported; with w -> sub/inner, `touch
// w/../d2/y` (the kernel: sub/d2/y, written) was reported refused as
// ./d2/y, a --read-only path. Now each is judged where the kernel
// resolves it. Control: the kernel's own answers (the first touch
// fails, the second writes sub/d2/y) are unchanged.
func TestRunExplainDotDotAfterLink(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	for _, d := range []string{"d2", "sub/inner", "sub/d2", "lib"} {
		require.NoError(t, os.MkdirAll(filepath.Join(ws, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(ws, "sub/inner"), filepath.Join(ws, "w")))
	require.NoError(t, os.Symlink("/usr/share/doc", filepath.Join(ws, "u")))
	script := `touch u/../../lib/landjail-dotdot-x; echo "one=$?"; touch w/../d2/landjail-dotdot-y; echo "two=$?"`
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--read-only", filepath.Join(ws, "d2"), "--explain", "--", "sh", "-c", "cd "+ws+" && "+script)
	assert.Equal(t, 0, code, out)
	if !strings.Contains(out, "Read-only file system") {
		kerneltest.Missing(t, "no namespace view here (no EROFS): %s", out)
		return
	}
	assert.NotContains(t, out, "one=0", "control: the kernel refuses /usr/lib/x")
	assert.Contains(t, out, "two=0", "control: the kernel writes sub/d2/y")
	_, err := os.Stat(filepath.Join(ws, "sub/d2/landjail-dotdot-y"))
	assert.NoError(t, err, "control: written where the kernel resolved it")
	assert.Contains(t, out, "[view] create /usr/lib/landjail-dotdot-x", "the refusal is reported where it happened")
	assert.NotContains(t, out, filepath.Join(ws, "d2/landjail-dotdot-y"), "a write that succeeded is not reported refused")
	assert.NotContains(t, out, filepath.Join(ws, "lib/landjail-dotdot-x"), "the lexical path is not reported")
}
