package nsview_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// envHelper makes the test binary run one file operation (helperOp) and
// exit: the children of the view tests, so that every check is one
// syscall with a precise errno, whatever tools the machine has.
const envHelper = "NSVIEW_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "1" {
		fmt.Print(helperOp(os.Args[1:]))
		os.Exit(0)
	}
	if os.Getenv(envEarlyChild) == "1" {
		fmt.Print(earlyChild())
		os.Exit(0)
	}
	// Children run the test binary through this descriptor
	// (/proc/self/fd/3), so they find it in views where its directory
	// (under the host's /tmp) is invisible.
	f, err := os.Open(os.Args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	helperBin = f
	kerneltest.Main(m)
}

var helperBin *os.File

// helperOp runs args[0] on args[1:] and returns "ok", the file's content,
// or the errno name (EROFS, EBUSY...).
func helperOp(args []string) string {
	if len(args) == 0 {
		return "usage"
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	if op, ok := strings.CutPrefix(args[0], "nocaps-"); ok {
		// As landjail's commands run: uid 0 (or the caller's), no
		// capability at all, so file modes bind (a mask is mode 0000).
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return "capset: " + err.Error()
		}
		args = append([]string{op}, args[1:]...)
	}
	p := arg(1)
	var err error
	switch args[0] {
	case "read":
		var b []byte
		if b, err = os.ReadFile(p); err == nil {
			return string(b)
		}
	case "readdir":
		var es []os.DirEntry
		if es, err = os.ReadDir(p); err == nil {
			var names []string
			for _, e := range es {
				names = append(names, e.Name())
			}
			return strings.Join(names, ",")
		}
	case "mode":
		var st unix.Stat_t
		if err = unix.Stat(p, &st); err == nil {
			return fmt.Sprintf("%o", st.Mode&0o7777)
		}
	case "create":
		var f *os.File
		if f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			f.Close()
		}
	case "write":
		var f *os.File
		if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString("x")
			f.Close()
		}
	case "rename":
		err = unix.Rename(p, arg(2))
	case "unlink":
		err = unix.Unlink(p)
	case "link":
		err = unix.Link(p, arg(2))
	case "chmod4755":
		err = unix.Chmod(p, 0o4755)
	case "chown":
		err = unix.Lchown(p, 1, 1)
	case "utime":
		err = unix.UtimesNano(p, []unix.Timespec{{Sec: 1}, {Sec: 1}})
	case "setxattr":
		err = unix.Lsetxattr(p, "user.nsview", []byte("x"), 0)
	case "truncate":
		err = unix.Truncate(p, 0)
	case "dial":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", p, 2*time.Second); err == nil {
			c.Close()
		}
	case "ifaces":
		var ifs []net.Interface
		if ifs, err = net.Interfaces(); err == nil {
			var names []string
			for _, i := range ifs {
				up := "down"
				if i.Flags&net.FlagUp != 0 {
					up = "up"
				}
				names = append(names, i.Name+":"+up)
			}
			slices.Sort(names)
			return strings.Join(names, ",")
		}
	default:
		return "unknown op " + args[0]
	}
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			return unix.ErrnoName(errno)
		}
		return err.Error()
	}
	return "ok"
}
