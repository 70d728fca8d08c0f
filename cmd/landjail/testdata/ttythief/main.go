// Command ttythief is the attack of a command on its caller's terminal,
// for TestRunTerminalTheft: it starts a copy of itself in the background
// (its own process group, same session, same descriptors) and exits at
// once. The copy ignores SIGTTOU, SIGTTIN and SIGHUP, waits until its
// parent is gone, makes its group the foreground of the terminal on fd 0
// (tcsetpgrp(3)) and appends whatever it then reads there to the file
// named by its argument.
package main

import (
	"os"
	osexec "os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "bg" {
		background(os.Args[2])
		return
	}
	c := osexec.Command(os.Args[0], "bg", os.Args[1])
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		os.Exit(1)
	}
}

func background(out string) {
	signal.Ignore(unix.SIGTTOU, unix.SIGTTIN, unix.SIGHUP)
	time.Sleep(300 * time.Millisecond)
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		os.Exit(1)
	}
	for i := 0; i < 100; i++ {
		if unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp()) == nil {
			f.WriteString("foreground\n")
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 256)
	n, _ := unix.Read(0, buf)
	if n > 0 {
		f.Write(buf[:n])
	}
}
