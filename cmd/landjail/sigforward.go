package main

import (
	"os"
	"os/signal"

	"golang.org/x/sys/unix"
)

// sigForward is the signal.Notify of a supervised run (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, forwarded to the command's process group), started on
// a goroutine of its own as soon as run knows it supervises: Notify hands
// each signal to the runtime's signal thread, which the first call also
// starts, one round trip each (≈0.1 ms), which then overlaps run's
// planning instead of preceding the command's start.
type sigForward struct {
	ch    chan os.Signal
	ready chan struct{}
}

func startSigForward() *sigForward {
	f := &sigForward{ch: make(chan os.Signal, 4), ready: make(chan struct{})}
	go func() {
		signal.Notify(f.ch, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
		close(f.ready)
	}()
	return f
}

// signals waits until the signals are caught (call it before the command
// starts) and returns the channel they arrive on.
func (f *sigForward) signals() <-chan os.Signal {
	<-f.ready
	return f.ch
}

// stop undoes Notify, unless main exits right after (exitsAfterRun):
// Stop is one more round trip per signal (≈0.1 ms between the command's
// exit and landjail's), and a signal in that last moment is then dropped
// instead of ending landjail, which reports the command's status anyway.
// In-process callers (tests) stop.
func (f *sigForward) stop() {
	if exitsAfterRun {
		return
	}
	<-f.ready
	signal.Stop(f.ch)
}
