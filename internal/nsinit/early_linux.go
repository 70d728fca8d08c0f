package nsinit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Env is the environment package exec gives the re-executed stage:
// EnvMarker=value, then GOMAXPROCS set to this process's (the runtime
// then takes it as it is instead of computing its default from the
// cgroup's CPU limit; Go 1.26 still scans the cgroup mounts once at
// start, for its metrics; the stage runs in the same cgroup with the
// same CPU affinity, so the value is the one it would compute). The
// target's environment is the spec's, never this one.
func Env(value string) []string {
	return []string{EnvMarker + "=" + value, "GOMAXPROCS=" + strconv.Itoa(stageProcs())}
}

var stageProcs = func() int { return runtime.GOMAXPROCS(0) }

// stageMarker returns the marker's value when this process is exactly
// what package exec re-executes (isStage).
func stageMarker() (string, bool) { return isStage(os.Args, os.Environ(), os.Getpid) }

// isStage returns the marker's value when args, env and pid are the
// re-executed stage's: argv {Argv0}, the environment Env makes (the
// marker, optionally followed by GOMAXPROCS and nothing else), PID 1 of
// its namespace (pid is asked last, only when the rest matched).
func isStage(args, env []string, pid func() int) (string, bool) {
	if len(args) != 1 || args[0] != Argv0 {
		return "", false
	}
	if len(env) == 0 || len(env) > 2 || (len(env) == 2 && !strings.HasPrefix(env[1], "GOMAXPROCS=")) {
		return "", false
	}
	v, ok := strings.CutPrefix(env[0], EnvMarker+"=")
	if !ok || pid() != 1 {
		return "", false
	}
	return v, true
}

// init runs the stage from this package's initialisation when the process
// is the re-executed stage (stageMarker): it then skips the
// initialisation of every package that does not come before this one
// (the CLI's, which it never uses) and main's own start, ≈0.1–0.2 ms of
// the stage's path to its command (BENCHMARKS.md, round 4 of issue 25).
// Every package the stage runs (this one's imports) is initialised by
// then. Anything else (not PID 1, other arguments or variables) is left
// to Main, which refuses the marker outside a PID namespace init as
// before.
func init() {
	if v, ok := stageMarker(); ok {
		os.Exit(runInit(v))
	}
}
