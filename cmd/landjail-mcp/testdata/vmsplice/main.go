// Command vmsplice writes to its stdout (a pipe) with vmsplice(2) for
// the number of seconds its argument gives: the writer hands over page
// references, cheap for it, and the reader copies every byte (red team
// round 24, R24b-1). Where vmsplice fails it writes instead.
package main

import (
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	secs, err := strconv.Atoi(os.Args[1])
	if err != nil {
		os.Exit(2)
	}
	unix.FcntlInt(1, unix.F_SETPIPE_SZ, 1<<20)
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = 'x'
	}
	for end := time.Now().Add(time.Duration(secs) * time.Second); time.Now().Before(end); {
		iov := []unix.Iovec{{Base: &buf[0]}}
		iov[0].SetLen(len(buf))
		if _, err := unix.Vmsplice(1, iov, 0); err != nil {
			if _, err := os.Stdout.Write(buf[:65536]); err != nil {
				os.Exit(1)
			}
		}
	}
}
