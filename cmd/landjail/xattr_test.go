package main

import (
	"errors"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestXattrReadsRefused: a confined command cannot read by path the
// extended attributes of a file the policy refuses (a denied .env, a
// file outside the policy): Landlock has no hook on getxattr or
// listxattr, and the seccomp filter answers them EOPNOTSUPP (red team
// round 24, R24b-2: a download's user.xdg.origin.url, a presigned URL,
// was read from a .env whose content was refused). A workspace file's
// attribute stays readable through a descriptor (fgetxattr: the open
// was Landlock's). An open with access mode 3 (neither read nor write:
// Landlock checks nothing) is refused EACCES, or its descriptor read
// them (red team round 25, R25a-1: fgetxattr on it, in every layer).
// Control: the probe unconfined reads every value, through mode 3 too.
// In every layer the default run reaches here.
func TestXattrReadsRefused(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/xattrprobe", "CGO_ENABLED=0")
	ws, out := wsDir(t), wsDir(t)
	files := map[string]string{
		filepath.Join(ws, ".env"):      "https://bucket.s3.amazonaws.com/prod.env?X-Amz-Signature=SECRET1",
		filepath.Join(out, "id_rsa"):   "SECRET2",
		filepath.Join(ws, "notes.txt"): "fine",
	}
	for p, v := range files {
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
		if err := unix.Setxattr(p, "user.probe", []byte(v), 0); errors.Is(err, unix.ENOTSUP) {
			t.Skip("no user.* extended attributes on this file system")
		} else {
			require.NoError(t, err)
		}
	}
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "xattrprobe"), data, 0o755))
	paths := []string{".env", filepath.Join(out, "id_rsa"), "notes.txt"}

	ctrl, err := osexec.Command(filepath.Join(ws, "xattrprobe"), append([]string{}, filepath.Join(ws, ".env"), filepath.Join(out, "id_rsa"))...).CombinedOutput()
	require.NoError(t, err, "%s", ctrl)
	require.Contains(t, string(ctrl), "SECRET1", "control: unconfined, the attribute is read")
	require.Contains(t, string(ctrl), "SECRET2", "control: unconfined, the attribute is read")
	require.Regexp(t, `fget3=\S*SECRET1`, string(ctrl), "control: unconfined, a descriptor of access mode 3 reads it")

	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		args := append([]string{"run", "--workspace", ws, "--deny-secrets", "--timeout", "1m"}, mode...)
		_, got := runBinCtx(t, 60*time.Second, bin, append(append(args, "--", "./xattrprobe"), paths...)...)
		assert.NotContains(t, got, "SECRET", "%v: an attribute of a refused file read: %s", mode, got)
		assert.Contains(t, got, "get=ENOTSUP", "%v: %s", mode, got)
		assert.Contains(t, got, "fget3=open:EACCES", "%v: access mode 3 refused: %s", mode, got)
		for _, l := range strings.Split(got, "\n") {
			if strings.HasPrefix(l, "notes.txt ") {
				assert.Contains(t, l, "fget=fine", "%v: the descriptor form stays", mode)
			}
		}
	}
}

// TestFileAttrCallsRefused: a confined command cannot set inode flags
// by path with file_setattr(2) (Linux 6.17) on a file the policy
// refuses (a denied .env) or keeps from it (a file outside the policy),
// nor read them with file_getattr(2): Landlock has no hook on either,
// and the seccomp filter answers both ENOSYS, as a kernel before 6.17
// (red team round 26, R26b-1: FS_XFLAG_NODUMP set on both under
// --no-namespaces). Control: the probe unconfined sets and reads the
// flag. In every layer the default run reaches here.
func TestFileAttrCallsRefused(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	probe := buildCLI(t, "./testdata/fileattrprobe", "CGO_ENABLED=0")
	ws, out := wsDir(t), wsDir(t)
	env, outside, ctrl := filepath.Join(ws, ".env"), filepath.Join(out, "id_rsa"), filepath.Join(out, "control")
	for _, p := range []string{env, outside, ctrl, filepath.Join(ws, "notes.txt")} {
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o644))
	}
	nodump := func(p string) bool {
		t.Helper()
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		require.NoError(t, err)
		return flags&0x40 != 0 // FS_NODUMP_FL
	}

	got, err := osexec.Command(probe, ctrl).CombinedOutput()
	require.NoError(t, err, "%s", got)
	if strings.Contains(string(got), "set=ENOSYS") {
		t.Skip("no file_setattr(2) (Linux 6.17): nothing to refuse")
	}
	if strings.Contains(string(got), "set=EOPNOTSUPP") || strings.Contains(string(got), "set=ENOTTY") {
		t.Skipf("no inode flags on this file system: %s", got)
	}
	require.Contains(t, string(got), "set=ok", "control: unconfined, the flag is set")
	require.True(t, nodump(ctrl), "control: unconfined, the flag is set")

	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "fileattrprobe"), data, 0o755))
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		args := append([]string{"run", "--workspace", ws, "--deny-secrets", "--timeout", "1m"}, mode...)
		_, got := runBinCtx(t, 60*time.Second, bin, append(args, "--", "./fileattrprobe", ".env", outside, "notes.txt")...)
		assert.Equal(t, 3, strings.Count(got, "get=ENOSYS set=ENOSYS"), "%v: %s", mode, got)
		assert.False(t, nodump(env), "%v: the denied .env's flags changed: %s", mode, got)
		assert.False(t, nodump(outside), "%v: a file outside the policy changed: %s", mode, got)
	}
}

// TestXattrWritesRefused: red team round 32, R32a-8 and R32a-9. Landlock
// has no hook on setting or removing extended attributes, and the kernel
// lets a file's owner set its ACL: under Landlock alone a root command
// gave a protected root set-user-ID program `other::rwx` (its bit
// kept), and another account a named entry on protected hooks. Every
// set and remove, by path and by descriptor, is answered EOPNOTSUPP in
// every layer, on a workspace file too. Control: unconfined, the same
// calls set and remove the attribute and the ACL.
func TestXattrWritesRefused(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	const python = "/usr/bin/python3" // the system preset's (.ci/run installs it)
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	t.Parallel()
	bin := landjailBin(t)
	ws, out := wsDir(t), wsDir(t)
	mine, theirs := filepath.Join(ws, "notes.txt"), filepath.Join(out, "f")
	for _, p := range []string{mine, theirs} {
		require.NoError(t, os.WriteFile(p, []byte("x\n"), 0o600))
	}
	// user.probe set, the ACL other::rw- (mode 0606) set, user.probe
	// removed, by path and through a descriptor opened read-only.
	script := `
import os, sys
acl = bytes([2,0,0,0, 1,0,6,0,255,255,255,255, 4,0,0,0,255,255,255,255, 32,0,6,0,255,255,255,255])
for p in sys.argv[1:]:
    res = []
    for name, call in [("set", lambda: os.setxattr(p, "user.probe", b"v")),
                       ("acl", lambda: os.setxattr(p, "system.posix_acl_access", acl)),
                       ("remove", lambda: os.removexattr(p, "user.probe")),
                       ("fset", lambda: os.setxattr(os.open(p, os.O_RDONLY), "user.probe", b"v"))]:
        try:
            call(); res.append(name + "=ok")
        except OSError as e:
            res.append(name + "=" + (os.strerror(e.errno)))
    print(p, " ".join(res))
`
	ctrl, err := osexec.Command(python, "-c", script, mine, theirs).CombinedOutput()
	require.NoError(t, err, "%s", ctrl)
	require.Contains(t, string(ctrl), theirs+" set=ok acl=ok remove=ok fset=ok", "control: unconfined")
	fi, err := os.Stat(theirs)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o606), fi.Mode().Perm(), "control: the ACL changed the mode")
	require.NoError(t, os.Chmod(theirs, 0o600))
	require.NoError(t, unix.Removexattr(theirs, "user.probe"))

	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, mode...)
		_, got := runBinCtx(t, 60*time.Second, bin, append(args, "--", python, "-c", script, mine, theirs)...)
		for _, p := range []string{mine, theirs} {
			assert.NotContains(t, got, p+" set=ok", "%v: %s", mode, got)
			assert.NotContains(t, got, "acl=ok", "%v: %s", mode, got)
			assert.NotContains(t, got, "fset=ok", "%v: %s", mode, got)
		}
		assert.Contains(t, got, mine+" set=Operation not supported acl=Operation not supported", "%v: %s", mode, got)
		fi, err := os.Stat(theirs)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "%v: the file outside the policy keeps its mode", mode)
	}
}
