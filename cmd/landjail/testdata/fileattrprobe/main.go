// Command fileattrprobe sets FS_XFLAG_NODUMP on each path argument by
// path with file_setattr(2) and reads the flags back with
// file_getattr(2) (Linux 6.17), one line per path: "PATH get=FLAGS|errno
// set=ok|errno" (red team round 26, R26b-1).
package main

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileAttr is struct file_attr (include/uapi/linux/fs.h).
type fileAttr struct {
	xflags   uint64
	extsize  uint32
	nextents uint32
	projid   uint32
	cowextsz uint32
}

// fsXflagNodump is FS_XFLAG_NODUMP.
const fsXflagNodump = 0x80

func call(nr uintptr, p string, fa *fileAttr) error {
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		return err
	}
	dirfd := unix.AT_FDCWD
	_, _, e := unix.Syscall6(nr, uintptr(dirfd), uintptr(unsafe.Pointer(b)),
		uintptr(unsafe.Pointer(fa)), unsafe.Sizeof(*fa), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func main() {
	for _, p := range os.Args[1:] {
		var fa fileAttr
		get := "get="
		if err := call(unix.SYS_FILE_GETATTR, p, &fa); err != nil {
			get += unix.ErrnoName(err.(unix.Errno))
		} else {
			get += fmt.Sprintf("%#x", fa.xflags)
		}
		set := "set=ok"
		fa = fileAttr{xflags: fsXflagNodump}
		if err := call(unix.SYS_FILE_SETATTR, p, &fa); err != nil {
			set = "set=" + unix.ErrnoName(err.(unix.Errno))
		}
		fmt.Println(p, get, set)
	}
}
