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
	ch      chan os.Signal
	ready   chan struct{}
	started chan struct{} // closed by signals: the command starts
	watched chan struct{} // closed when the watch before the start has ended
}

func startSigForward() *sigForward {
	f := &sigForward{ch: make(chan os.Signal, 4), ready: make(chan struct{}),
		started: make(chan struct{}), watched: make(chan struct{})}
	go func() {
		signal.Notify(f.ch, unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT)
		// SIGPIPE caught (never read): a write to a closed stdout or
		// stderr then fails with EPIPE instead of ending landjail, so
		// the sweep, the kill of leftovers and the report still run
		// (red team round 26, R26d-3: `landjail run ... 2>&1 | head`,
		// and the command chose the moment with a quarantine line). A
		// caught signal is reset to its default by execve: the command
		// still gets SIGPIPE.
		signal.Notify(make(chan os.Signal, 1), unix.SIGPIPE)
		close(f.ready)
		f.watch()
	}()
	return f
}

// watch ends landjail on a signal that arrives before the command
// starts, as it ends a run that execve's (which catches none): there is
// nobody to forward it to yet, and the planning (a carve walk of a large
// or planted tree) could otherwise hold it for minutes (red team round
// 21, R21-1: timeout's SIGTERM at 60 s, landjail gone at 3 min 26 s).
// The exit status is 128 + the signal's number, as a shell reports a
// command killed by it; what Prepare made is left as after a SIGKILL
// (landjail gc removes it). In-process callers (tests) keep the signal
// for the command, as before.
func (f *sigForward) watch() {
	if !exitsAfterRun {
		close(f.watched)
		return
	}
	select {
	case sig := <-f.ch:
		unix.Exit(128 + int(sig.(unix.Signal)))
	case <-f.started:
		close(f.watched)
	}
}

// signals waits until the signals are caught (call it right before the
// command starts), ends watch's look at them, and returns the channel
// they arrive on: one that arrives from then on is the command's.
func (f *sigForward) signals() <-chan os.Signal {
	<-f.ready
	close(f.started)
	<-f.watched
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
