// Command inotifyattack tries to set inotify watches where its sandbox
// should not let it. Used by exec's inotify tests.
//
//	inotifyattack watch PATH NAME [onlydir|nofollow|opath]
//	    prints "watching" once the watch is set (or "inotify_add_watch:
//	    ERROR" and exits 0), then "event NAME" when an event naming NAME
//	    arrives, or "no event" after 10 s.
//	inotifyattack add PATH...
//	    adds a watch on each PATH, prints "ok COUNT" and "fd FD" as the
//	    races do and waits for stdin to close.
//	inotifyattack race-buffer DENIED ALLOWED N
//	inotifyattack race-link DENIED ALLOWED LINK N
//	    calls inotify_add_watch N times (and for at least 0.5 s) while another thread swaps the
//	    path buffer (race-buffer) or the symbolic link LINK (race-link)
//	    between DENIED and ALLOWED, then prints "ok COUNT" (successful
//	    calls) and "fd FD" (the inotify descriptor, whose watches the
//	    caller reads from /proc/PID/fdinfo/FD) and waits for stdin to
//	    close.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: inotifyattack watch|race-buffer|race-link ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "watch":
		watch(os.Args[2], os.Args[3], os.Args[4:])
	case "add":
		add(os.Args[2:])
	case "race-buffer":
		n, _ := strconv.Atoi(os.Args[4])
		raceBuffer(os.Args[2], os.Args[3], n)
	case "race-link":
		n, _ := strconv.Atoi(os.Args[5])
		raceLink(os.Args[2], os.Args[3], os.Args[4], n)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func watch(path, name string, opts []string) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Println("inotify_init1:", err)
		return
	}
	mask := uint32(unix.IN_ALL_EVENTS)
	for _, o := range opts {
		switch o {
		case "opath":
			// An O_PATH descriptor (Landlock does not check its open),
			// watched through its magic link.
			pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				fmt.Println("open:", err)
				return
			}
			path = fmt.Sprintf("/proc/self/fd/%d", pfd)
		case "onlydir":
			mask |= unix.IN_ONLYDIR
		case "nofollow":
			mask |= unix.IN_DONT_FOLLOW
		}
	}
	if _, err := unix.InotifyAddWatch(fd, path, mask); err != nil {
		fmt.Println("inotify_add_watch:", err)
		return
	}
	fmt.Println("watching")
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 64<<10)
	for time.Now().Before(deadline) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 100); err != nil || n == 0 {
			continue
		}
		m, err := unix.Read(fd, buf)
		if err != nil {
			continue
		}
		if bytes.Contains(buf[:m], append([]byte(name), 0)) {
			fmt.Println("event", name)
			return
		}
	}
	fmt.Println("no event")
}

func add(paths []string) {
	fd := initOrExit()
	ok := 0
	for _, p := range paths {
		if _, err := unix.InotifyAddWatch(fd, p, unix.IN_ALL_EVENTS); err == nil {
			ok++
		}
	}
	report(fd, ok)
}

// raceBuffer: one thread rewrites buf in place between the two
// NUL-terminated paths while this one passes buf to inotify_add_watch.
func raceBuffer(denied, allowed string, n int) {
	fd := initOrExit()
	size := max(len(denied), len(allowed)) + 1
	buf := make([]byte, size)
	a := append([]byte(denied), make([]byte, size-len(denied))...)
	b := append([]byte(allowed), make([]byte, size-len(allowed))...)
	var stop atomic.Bool
	var rounds atomic.Int64
	done := make(chan struct{})
	var spin atomic.Int64
	go func() {
		for i := 0; !stop.Load(); i++ {
			src := a
			if i%2 == 1 {
				src = b
			}
			copy(buf, src) // torn strings too, now and then
			rounds.Add(1)
			// Hold it a little so that whole strings are seen.
			for j := 0; j < 20000; j++ {
				spin.Add(1)
			}
		}
		close(done)
	}()
	for rounds.Load() < 4 {
		runtime.Gosched()
	}
	ok := 0
	start := time.Now()
	for i := 0; i < n || time.Since(start) < minRace; i++ {
		_, _, e := unix.Syscall( // buf is rewritten meanwhile: a racy read on purpose
			unix.SYS_INOTIFY_ADD_WATCH, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), unix.IN_ALL_EVENTS)
		if e == 0 {
			ok++
		}
	}
	stop.Store(true)
	<-done
	report(fd, ok)
}

// raceLink: one thread renames fresh symbolic links to DENIED and ALLOWED
// over LINK while this one watches LINK.
func raceLink(denied, allowed, link string, n int) {
	fd := initOrExit()
	var stop atomic.Bool
	var rounds atomic.Int64
	done := make(chan struct{})
	go func() {
		tmp := filepath.Join(filepath.Dir(link), ".inotifyattack-tmp")
		for i := 0; !stop.Load(); i++ {
			target := denied
			if i%2 == 1 {
				target = allowed
			}
			os.Remove(tmp)
			if err := os.Symlink(target, tmp); err == nil {
				os.Rename(tmp, link)
			}
			rounds.Add(1)
		}
		close(done)
	}()
	for rounds.Load() < 4 {
		runtime.Gosched()
	}
	ok := 0
	start := time.Now()
	for i := 0; i < n || time.Since(start) < minRace; i++ {
		if _, err := unix.InotifyAddWatch(fd, link, unix.IN_ALL_EVENTS); err == nil {
			ok++
		}
	}
	stop.Store(true)
	<-done
	report(fd, ok)
}

// minRace is the least time a race runs, however fast the calls: on a
// loaded machine the other thread may not run for a few milliseconds.
const minRace = 500 * time.Millisecond

func initOrExit() int {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		fmt.Println("inotify_init1:", err)
		os.Exit(1)
	}
	return fd
}

// report prints the successful calls and the descriptor, then waits
// for its stdin to close: the caller reads /proc/PID/fdinfo/FD meanwhile
// (the sandbox may not grant this process /proc).
func report(fd, ok int) {
	fmt.Printf("ok %d\nfd %d\n", ok, fd)
	os.Stdin.Read(make([]byte, 1))
}
