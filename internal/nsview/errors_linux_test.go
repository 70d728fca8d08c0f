package nsview_test

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/osthread"
)

// TestEnterErrors: every failure is an error naming the path and keeping
// the errno (fail closed), and the host's mounts are untouched. Where
// namespaces are blocked (LANDJAIL_EMULATE=ns=EPERM or ns=ENOSYS, as under
// Docker's default profile) the invalid-path rows are refused the same way
// (Enter checks paths before unshare) and every other row is
// ErrUnavailable with the emulated errno: still an error, never a view.
func TestEnterErrors(t *testing.T) {
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	checkHostMounts(t)
	for _, tc := range []struct {
		name     string
		view     func(tr tree) nsview.View
		setup    func(t *testing.T, tr tree)
		want     error
		wantPath string // in the *fs.PathError, "" for none expected
	}{
		{
			name: "relative writable root",
			view: func(tr tree) nsview.View { return nsview.New().Writable("ws") },
			want: nsview.ErrInvalidPath, wantPath: "ws",
		},
		{
			name: "unclean mask",
			view: func(tr tree) nsview.View { return nsview.New().Mask(tr.ws + "/../ws/.env") },
			want: nsview.ErrInvalidPath, wantPath: "$WS/../ws/.env",
		},
		{
			name: "mask /",
			view: func(tr tree) nsview.View { return nsview.New().Mask("/") },
			want: nsview.ErrInvalidPath, wantPath: "/",
		},
		{
			name: "writable /tmp with PrivateTmp",
			view: func(tr tree) nsview.View { return nsview.New().Writable("/tmp").PrivateTmp() },
			want: nsview.ErrInvalidPath, wantPath: "/tmp",
		},
		{
			name: "missing writable root",
			view: func(tr tree) nsview.View { return nsview.New().Writable(tr.ws + "/nope") },
			want: unix.ENOENT, wantPath: "$WS/nope",
		},
		{
			name: "missing mask (stale deny list)",
			view: func(tr tree) nsview.View { return nsview.New().Writable(tr.ws).Mask(tr.ws + "/gone.env") },
			want: unix.ENOENT, wantPath: "$WS/gone.env",
		},
		{
			name:  "symlink in writable root",
			setup: func(t *testing.T, tr tree) { require.NoError(t, os.Symlink(tr.out, tr.ws+"/link")) },
			view:  func(tr tree) nsview.View { return nsview.New().Writable(tr.ws + "/link") },
			want:  unix.ELOOP, wantPath: "$WS/link",
		},
		{
			name:  "symlink below writable root component",
			setup: func(t *testing.T, tr tree) { require.NoError(t, os.Symlink(tr.base, tr.ws+"/up")) },
			view:  func(tr tree) nsview.View { return nsview.New().Writable(tr.ws + "/up/outside") },
			want:  unix.ELOOP, wantPath: "$WS/up",
		},
		{
			name:  "symlink as mask",
			setup: func(t *testing.T, tr tree) { require.NoError(t, os.Symlink(tr.out+"/prog", tr.ws+"/key.pem")) },
			view:  func(tr tree) nsview.View { return nsview.New().Writable(tr.ws).Mask(tr.ws + "/key.pem") },
			want:  unix.ELOOP, wantPath: "$WS/key.pem",
		},
		{
			// No writable root: nothing pins (and so walks) the parent
			// before the masks are applied.
			name:  "symlink as a mask's parent",
			setup: func(t *testing.T, tr tree) { require.NoError(t, os.Symlink(tr.out, tr.ws+"/up")) },
			view:  func(tr tree) nsview.View { return nsview.New().Mask(tr.ws+"/a.txt", tr.ws+"/up/prog") },
			want:  unix.ELOOP, wantPath: "$WS/up",
		},
		{
			name: "second mask of a directory missing",
			view: func(tr tree) nsview.View {
				return nsview.New().Writable(tr.ws).Mask(tr.ws+"/sub/.env", tr.ws+"/sub/gone.env", tr.ws+"/sub/code.go")
			},
			want: unix.ENOENT, wantPath: "$WS/sub/gone.env",
		},
		{
			name: "file as a directory component",
			view: func(tr tree) nsview.View { return nsview.New().Writable(tr.ws + "/a.txt/x") },
			want: unix.ENOTDIR, wantPath: "$WS/a.txt",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			if tc.setup != nil {
				tc.setup(t, tr)
			}
			err := inView(tc.view(tr), func() error { return nil })
			if !layer && !errors.Is(tc.want, nsview.ErrInvalidPath) {
				errno, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces)
				assert.ErrorIs(t, err, nsview.ErrUnavailable)
				assert.ErrorIs(t, err, errno)
				tr.checkHost(t)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			assert.NotErrorIs(t, err, nsview.ErrUnavailable)
			var pe *fs.PathError
			if assert.ErrorAs(t, err, &pe) {
				assert.Equal(t, replaceVars(tc.wantPath, tr), pe.Path)
			}
			tr.checkHost(t)
		})
	}
}

func replaceVars(s string, tr tree) string {
	if len(s) >= 3 && s[:3] == "$WS" {
		return tr.ws + s[3:]
	}
	return s
}

// TestEnterUnavailable: EPERM (a container's seccomp profile) or ENOSYS
// (an old kernel) from unshare or a new mount syscall is ErrUnavailable,
// with the errno, so that callers fall back to Landlock carve-outs. The
// filter is installed on the throwaway thread only (no TSYNC). Where the
// emulation blocks namespaces already, unshare fails first: the unshare
// rows get their own errno (the newest seccomp filter's errno wins), the
// others the emulated one.
func TestEnterUnavailable(t *testing.T) {
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	checkHostMounts(t)
	for _, tc := range []struct {
		name  string
		nr    uint32
		errno unix.Errno
	}{
		{"unshare EPERM (Docker default profile)", unix.SYS_UNSHARE, unix.EPERM},
		{"unshare ENOSYS", unix.SYS_UNSHARE, unix.ENOSYS},
		{"mount EPERM", unix.SYS_MOUNT, unix.EPERM},
		{"open_tree ENOSYS (Linux < 5.2)", unix.SYS_OPEN_TREE, unix.ENOSYS},
		{"mount_setattr ENOSYS (Linux < 5.12)", unix.SYS_MOUNT_SETATTR, unix.ENOSYS},
		{"fsopen EPERM", unix.SYS_FSOPEN, unix.EPERM},
		{"move_mount EPERM", unix.SYS_MOVE_MOUNT, unix.EPERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTree(t)
			err := osthread.Run(func() error { // the filter dies with the thread
				if err := denyOnThisThread(tc.nr, tc.errno); err != nil {
					return errors.Join(errSetup, err)
				}
				return tr.view().PrivateTmp().Enter()
			})
			require.NotErrorIs(t, err, errSetup)
			want := tc.errno
			if emulated, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces); !layer && tc.nr != unix.SYS_UNSHARE {
				want = emulated
			}
			assert.ErrorIs(t, err, nsview.ErrUnavailable)
			assert.ErrorIs(t, err, want)
			tr.checkHost(t)
		})
	}
}

var errSetup = errors.New("test setup failed")

// denyOnThisThread makes syscall nr fail with errno on the calling thread
// (seccomp without TSYNC).
func denyOnThisThread(nr uint32, errno unix.Errno) error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(errno)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, r := range prog {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return e
	}
	runtime.KeepAlive(filter)
	return nil
}
