// Package early starts prenet (StartWithMount: the view's mount, IPC and
// network namespaces) from a package initializer when the program's
// command line is a root "landjail run" whose view will have a network
// namespace of its own: imported for that effect alone, by cmd/landjail
// only. A package initializer runs before most of the program's packages
// are initialized (about 0.9 ms of landjail's start-up, on one thread),
// so the namespaces' creation (about 0.6 ms of kernel time) overlaps
// them, on the machine's other CPU, instead of overlapping main's own
// work (BENCHMARKS.md, round 4). The mount and IPC namespaces are the
// ones cmd/landjail's nsview.KeepProbeNamespace has the probe keep: the
// probe takes them instead of making them.
//
// The command line is only glanced at, as cmd/landjail's startEarly does:
// a wrong guess costs time, never behaviour. The namespaces are the ones
// nsview.PrepareNetwork and the probe would make later (see there), each
// taken by the first view only; one made for nothing (the run turned out
// to share the host's network, or to use no view) is dropped at exit.
// Not root: nothing (the user-namespace stage makes its own namespaces).
// Linux only (a no-op elsewhere).
package early

import (
	"syscall"

	"github.com/landjail/landjail/internal/argflags"
	"github.com/landjail/landjail/internal/prenet"
	"github.com/landjail/landjail/internal/selfproc"
)

func init() {
	if syscall.Geteuid() != 0 {
		return
	}
	args := argflags.Cmdline()
	if wanted(args) {
		prenet.StartWithMount()
		return
	}
	// A run without the view's network namespace (--no-namespaces, a
	// host network): nothing else uses the other CPU this early, so the
	// facts the control-group work reads first are read now, the system
	// preset's paths opened for the Landlock rules, and the control-group
	// work's goroutine is this one (internal/selfproc). Not in a process marked
	// as landjail's init stage (internal/limits/early starts nothing
	// there either).
	if _, stage := syscall.Getenv(envNsinit); !stage && selfproc.IsRun(args) {
		selfproc.Start()
	}
}

// envNsinit is nsinit.EnvMarker (package nsinit is not imported: its
// dependencies would initialize first).
const envNsinit = "LANDJAIL_NSINIT"

// wanted reports whether args (args[0] the program) is a "landjail run"
// that needs a private network namespace as far as its flags show
// (cmd/landjail's startEarly reads them the same way): not --help,
// --print-rules, --no-namespaces, nor --net, --connect-tcp, --bind-tcp
// or --config (which may open the network).
func wanted(args []string) bool {
	want := true
	return argflags.Run(args, func(name string) bool {
		switch name {
		case "help", "h", "print-rules", "no-namespaces", "net", "connect-tcp", "bind-tcp", "config":
			want = false
		}
		return want
	}) && want
}
