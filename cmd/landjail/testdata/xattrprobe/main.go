// Command xattrprobe reads the extended attribute user.probe of each
// path argument by path (getxattr, lgetxattr, listxattr) and through a
// descriptor it opens (fgetxattr) for reading and with access mode 3,
// one line per path: "PATH get=V|errno lget=... list=... fget=...|open
// errno fget3=..." (red team rounds 24 and 25, R24b-2, R25a-1).
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

func main() {
	for _, p := range os.Args[1:] {
		var out []string
		buf := make([]byte, 256)
		show := func(name string, n int, err error) {
			if err != nil {
				out = append(out, name+"="+unix.ErrnoName(err.(unix.Errno)))
				return
			}
			out = append(out, name+"="+strings.ReplaceAll(string(buf[:n]), "\x00", ","))
		}
		n, err := unix.Getxattr(p, "user.probe", buf)
		show("get", n, err)
		n, err = unix.Lgetxattr(p, "user.probe", buf)
		show("lget", n, err)
		n, err = unix.Listxattr(p, buf)
		show("list", n, err)
		if fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
			out = append(out, "fget=open:"+unix.ErrnoName(err.(unix.Errno)))
		} else {
			n, err = unix.Fgetxattr(fd, "user.probe", buf)
			show("fget", n, err)
			unix.Close(fd)
		}
		// Access mode 3 (O_RDWR|O_WRONLY): a descriptor with neither
		// read nor write access, which Landlock's open hook checks for
		// nothing (red team round 25, R25a-1).
		if fd, err := unix.Open(p, 3|unix.O_CLOEXEC, 0); err != nil {
			out = append(out, "fget3=open:"+unix.ErrnoName(err.(unix.Errno)))
		} else {
			n, err = unix.Fgetxattr(fd, "user.probe", buf)
			show("fget3", n, err)
			unix.Close(fd)
		}
		fmt.Println(p, strings.Join(out, " "))
	}
}
