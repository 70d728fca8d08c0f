// Command xattrprobe reads the extended attribute user.probe of each
// path argument by path (getxattr, lgetxattr, listxattr) and through a
// descriptor it opens (fgetxattr), one line per path:
// "PATH get=V|errno lget=... list=... fget=...|open errno" (red team
// round 24, R24b-2).
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
		fmt.Println(p, strings.Join(out, " "))
	}
}
