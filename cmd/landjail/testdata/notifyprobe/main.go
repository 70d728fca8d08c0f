// Command notifyprobe watches a directory with inotify or fanotify and
// reports whether it learns the name of a file created there. Used by
// cmd/landjail's tests.
//
//	notifyprobe inotify|fanotify DIR NAME
//	notifyprobe burn DIR SECONDS
//	notifyprobe rename DIR SECONDS
//
// burn adds a watch of DIR again and again for SECONDS (each call a
// notification landjail's supervisor answers) and prints the count.
// rename renames DIR/a (a directory the caller made) to DIR/b and back
// for SECONDS (each move events landjail's live watch of
// --protect-agent-config handles) and prints the count.
// Otherwise it prints "watching" once the watch is set (or "MODE: ERROR" and exits
// 0 when it cannot set it), then "event NAME" when an event naming NAME
// arrives, or "no event" after 10 s.
package main

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: notifyprobe inotify|fanotify DIR NAME")
		os.Exit(2)
	}
	mode, dir, name := os.Args[1], os.Args[2], os.Args[3]
	switch mode {
	case "burn":
		burn(dir, name)
		return
	case "rename":
		renames(dir, name)
		return
	}
	var fd int
	switch mode {
	case "inotify":
		var err error
		if fd, err = unix.InotifyInit1(unix.IN_CLOEXEC); err != nil {
			fmt.Println("inotify_init1:", err)
			return
		}
		if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_ALL_EVENTS); err != nil {
			fmt.Println("inotify_add_watch:", err)
			return
		}
	case "fanotify":
		var err error
		// Unprivileged since Linux 5.13: FAN_REPORT_DFID_NAME reports the
		// directory's handle and the entry's name.
		if fd, err = unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_DFID_NAME|unix.FAN_CLOEXEC, unix.O_RDONLY); err != nil {
			fmt.Println("fanotify_init:", err)
			return
		}
		if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD, unix.FAN_CREATE|unix.FAN_OPEN, unix.AT_FDCWD, dir); err != nil {
			fmt.Println("fanotify_mark:", err)
			return
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
	fmt.Println("watching")
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 64<<10)
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 100)
		if err != nil || n == 0 {
			continue
		}
		m, err := unix.Read(fd, buf)
		if err != nil {
			continue
		}
		// Both event formats carry the entry's name NUL-terminated.
		if bytes.Contains(buf[:m], append([]byte(name), 0)) {
			fmt.Println("event", name)
			return
		}
	}
	fmt.Println("no event")
}

// burn is the burn mode: inotify_add_watch on dir in a loop for secs.
func burn(dir, secs string) {
	d, err := time.ParseDuration(secs + "s")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Println("inotify_init1:", err)
		return
	}
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_ALL_EVENTS); err != nil {
			fmt.Println("inotify_add_watch:", err)
			return
		}
	}
	fmt.Println("calls", n)
}

// renames is the rename mode.
func renames(dir, seconds string) {
	d, err := time.ParseDuration(seconds + "s")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	a, b := dir+"/a", dir+"/b"
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); n++ {
		if err := unix.Rename(a, b); err != nil {
			fmt.Println("rename:", err)
			return
		}
		a, b = b, a
	}
	fmt.Println("renames", n)
}
