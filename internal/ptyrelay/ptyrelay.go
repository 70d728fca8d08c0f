// Package ptyrelay gives a supervised child a pseudo-terminal of its own in
// place of the caller's terminal, and relays between the two (the approach
// of sudo's use_pty, sudoers(5)).
//
// A child that holds a descriptor of the caller's terminal can read what the
// user types after the supervisor returned (a background process that
// ignores SIGTTOU and calls tcsetpgrp(3) takes the foreground), or write
// into it, even after setsid(2): a session only decides which terminal
// sends the signals, not which descriptors work. With a relay the child's
// terminal descriptors are the slave of a fresh pseudo-terminal
// (pty(7)), which is also its controlling terminal; the caller's terminal
// is only ever touched by the supervisor.
//
// Only the standard descriptors that are terminals are replaced (the others,
// files and pipes, pass unchanged). The caller's terminal is put in raw mode
// while the child runs (when stdin is a terminal and the supervisor is in
// its foreground process group) so that every key, ^C included, reaches the
// child's terminal, which applies its own line discipline; Restore puts it
// back and must run on every exit path. The window size is copied at Open
// and on every SIGWINCH.
package ptyrelay

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/landjail/landjail/internal/cpushare"
)

// IsTerminal reports whether f is a terminal (isatty(3): the TCGETS ioctl
// succeeds). A nil f is not.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// Relay is a pseudo-terminal standing in for the caller's terminal. Build it
// with Open, start the child with Stdio and Ctty, then call Start, and
// Finish once the child and its descendants are gone. Not safe for
// concurrent use, except Restore.
type Relay struct {
	stdio         [3]*os.File // the caller's
	isTTY         [3]bool
	master, slave *os.File
	ctl           *os.File // the caller's terminal for sizes and modes
	out           *os.File // where the pseudo-terminal's output goes

	restoreOnce sync.Once
	rawState    *term.State

	winch    chan os.Signal
	wake     [2]int // pipe that stops the input relay
	inDone   chan struct{}
	outDone  chan struct{}
	finished bool

	cpu *cpushare.Share // LimitCPU's
}

// LimitCPU bounds the CPU time the output relay spends to cpus CPUs
// (internal/cpushare: the process's CPU time, charged after each chunk
// relayed; once the share is spent the relay stops reading for the time
// it owes, and the command blocks writing to its terminal when the
// pseudo-terminal's buffer is full). For a run under --cpus: the relay
// works for the command outside its control group (red team round 22,
// R22c-3: a command writing to its terminal as fast as it could cost
// landjail 1.75 times its own share). cpus <= 0: no bound. Call it
// before Start.
func (r *Relay) LimitCPU(cpus float64) { r.cpu = cpushare.New(cpus) }

// Open opens a pseudo-terminal pair (posix_openpt(3) through creack/pty) for
// stdin, stdout, stderr, the caller's standard files, at least one of which
// must be a terminal, and copies the window size of the first terminal
// among them. The descriptors are close-on-exec. Errors: ENOTTY when none
// is a terminal; those of opening /dev/ptmx and the slave, and of pipe2.
func Open(stdin, stdout, stderr *os.File) (*Relay, error) {
	r := &Relay{stdio: [3]*os.File{stdin, stdout, stderr}, wake: [2]int{-1, -1}}
	for i, f := range r.stdio {
		r.isTTY[i] = IsTerminal(f)
		if r.isTTY[i] && r.ctl == nil {
			r.ctl = f
		}
	}
	if r.ctl == nil {
		return nil, &os.PathError{Op: "ptyrelay", Path: "stdin/stdout/stderr", Err: unix.ENOTTY}
	}
	// Output goes to the caller's terminal: stdout if it is one, else
	// stderr, else stdin (a terminal is normally open read-write).
	for _, i := range []int{1, 2, 0} {
		if r.isTTY[i] {
			r.out = r.stdio[i]
			break
		}
	}
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	r.master, r.slave = master, slave
	if err := pty.InheritSize(r.ctl, master); err != nil {
		r.closeAll()
		return nil, err
	}
	if err := unix.Pipe2(r.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		r.closeAll()
		return nil, err
	}
	return r, nil
}

// Stdio returns the child's standard files: the pseudo-terminal's slave in
// place of each caller's file that is a terminal, the caller's file
// otherwise.
func (r *Relay) Stdio() (stdin, stdout, stderr *os.File) {
	var s [3]*os.File
	for i := range s {
		s[i] = r.stdio[i]
		if r.isTTY[i] {
			s[i] = r.slave
		}
	}
	return s[0], s[1], s[2]
}

// Ctty is the child's descriptor (0, 1 or 2) to make its controlling
// terminal: the first one that is the slave.
func (r *Relay) Ctty() int {
	for i, t := range r.isTTY {
		if t {
			return i
		}
	}
	return 0 // cannot happen: Open requires a terminal
}

// Start closes the supervisor's copy of the slave (the child has its own
// by now; the last slave closing is what ends the output), puts the
// caller's terminal in raw mode when stdin is a terminal and the
// supervisor is in its foreground process group, and starts relaying:
// input from the caller's terminal to the pseudo-terminal, output back,
// window size changes (SIGWINCH).
func (r *Relay) Start() {
	r.slave.Close()
	r.slave = nil
	relayInput := false
	if r.isTTY[0] {
		fd := int(r.stdio[0].Fd())
		if pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pgrp == unix.Getpgrp() {
			if st, err := term.MakeRaw(fd); err == nil {
				r.rawState = st
			}
			relayInput = true
		}
	}
	r.winch = make(chan os.Signal, 1)
	signal.Notify(r.winch, unix.SIGWINCH)
	go func() {
		for range r.winch {
			pty.InheritSize(r.ctl, r.master)
		}
	}()
	r.outDone = make(chan struct{})
	go func() {
		defer close(r.outDone)
		// Copies until the read fails: EIO once no slave is open any
		// more (pty(7)), i.e. the child and everything it started are
		// gone.
		if r.cpu == nil {
			io.Copy(r.out, r.master)
			return
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := r.master.Read(buf)
			var werr error
			if n > 0 {
				r.cpu.Do(func() { _, werr = r.out.Write(buf[:n]) }, time.Sleep)
			}
			if err != nil || werr != nil {
				return
			}
		}
	}()
	if relayInput {
		r.inDone = make(chan struct{})
		go r.input()
	}
}

// input copies from the caller's stdin to the master until Finish, polling
// so that it stops without reading a byte meant for the caller's shell
// once the child has exited.
func (r *Relay) input() {
	defer close(r.inDone)
	in := int(r.stdio[0].Fd())
	buf := make([]byte, 4096)
	fds := []unix.PollFd{{Fd: int32(in), Events: unix.POLLIN}, {Fd: int32(r.wake[0]), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		n, err := unix.Read(in, buf)
		if n > 0 {
			if _, werr := r.master.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) || n == 0 && err == nil {
			return
		}
	}
}

// Restore puts the caller's terminal back in the mode it had before Start
// (idempotent, safe to call from a signal path or a deferred call).
func (r *Relay) Restore() {
	r.restoreOnce.Do(func() {
		if r.rawState != nil {
			term.Restore(int(r.stdio[0].Fd()), r.rawState)
		}
	})
}

// Finish stops the input relay, waits up to drain for the output to end
// (EIO: no slave open any more), restores the caller's terminal and closes
// the pseudo-terminal. Call it after the child exited and its descendants
// were killed: the output still buffered in the pseudo-terminal is then
// written out in full. It reports whether the output ended within drain
// (false: some process outside the child's tree still holds the slave; the
// rest of its output is dropped).
func (r *Relay) Finish(drain time.Duration) bool {
	if r.finished {
		return true
	}
	r.finished = true
	if r.wake[1] >= 0 {
		unix.Write(r.wake[1], []byte{0})
	}
	if r.inDone != nil {
		<-r.inDone
	}
	drained := true
	if r.outDone != nil {
		select {
		case <-r.outDone:
		case <-time.After(drain):
			drained = false
		}
	}
	if r.winch != nil {
		signal.Stop(r.winch)
		close(r.winch)
	}
	r.Restore()
	r.closeAll()
	return drained
}

func (r *Relay) closeAll() {
	if r.slave != nil {
		r.slave.Close()
	}
	if r.master != nil {
		r.master.Close()
	}
	for _, fd := range r.wake {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	r.wake = [2]int{-1, -1}
}
