// Package early clones the user-namespace stage of a non-root "landjail
// run" from a package initializer (stagestart.StartEarly): imported for
// that effect alone, by cmd/landjail only. Its initialization needs only
// package syscall's and the runtime's (the clone is sysclone's), so it
// runs before most of landjail's packages are initialized and before
// main, where the stage was cloned before (exec.PrestartUserStage from cmd/landjail's startEarly, which
// now adopts this one). The command line is only glanced at, as
// startEarly does: a wrong guess costs a stage cloned for nothing
// (discarded by exec, or ended when landjail exits), never behaviour.
// Nothing for root (no stage), without Landlock (no view), or when
// LANDJAIL_EMULATE is set (the emulation, internal/kerneltest, decides
// what the kernel offers: startEarly's path asks it).
package early

import (
	"syscall"

	"github.com/landjail/landjail/internal/argflags"
	"github.com/landjail/landjail/internal/stagestart/sysclone"
)

// init needs package syscall only (and argflags and sysclone, which need
// no more), not os: it runs as soon as syscall is initialized, about 0.7
// ms of landjail's start-up before os/exec would be (BENCHMARKS.md,
// round 8). The command line comes from /proc/self/cmdline, as os.Args
// is not set yet.
func init() {
	if syscall.Geteuid() == 0 || !landlockAvailable() {
		return
	}
	if v, _ := syscall.Getenv("LANDJAIL_EMULATE"); v != "" {
		return
	}
	if _, stage := syscall.Getenv(sysclone.EnvMarker); stage {
		return // the stage itself (argv {landjail-init}): spare it the read below
	}
	if run, net := glance(argflags.Cmdline()); run {
		sysclone.Start("/proc/self/exe", net)
	}
}

// glance reports whether args (args[0] the program) is a "landjail run"
// with the namespace layer as far as its flags show, and whether its
// view makes a network namespace of its own: as cmd/landjail's
// startEarly reads them (not --help, --print-rules, --no-namespaces; no
// private network with --net, --connect-tcp, --bind-tcp or --config).
func glance(args []string) (run, privateNetwork bool) {
	run, privateNetwork = true, true
	if !argflags.Run(args, func(name string) bool {
		switch name {
		case "help", "h", "print-rules", "no-namespaces":
			run = false
		case "net", "connect-tcp", "bind-tcp", "config":
			privateNetwork = false
		}
		return run
	}) || !run {
		return false, false
	}
	return true, privateNetwork
}
