package seccomp

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkFilteredSyscall: the cost the filter adds to a syscall no rule
// names (getppid runs past every rule to the default allow: the longest
// path through the program) and to prlimit64(0, RLIMIT_NOFILE, NULL, &old)
// (getrlimit, which the pid rules check and allow), on a thread with the
// default `landjail run` filter, against the same calls unfiltered.
//
//	go test -run '^$' -bench BenchmarkFilteredSyscall -count 10 ./seccomp/
func BenchmarkFilteredSyscall(b *testing.B) {
	var rl unix.Rlimit
	calls := []struct {
		name string
		fn   func()
	}{
		{"getppid", func() { unix.RawSyscall(unix.SYS_GETPPID, 0, 0, 0) }},
		{"getrlimit", func() { unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &rl) }},
	}
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true})
	if err != nil {
		b.Skip(err)
	}
	for _, c := range calls {
		b.Run(c.name+"/unfiltered", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for b.Loop() {
				c.fn()
			}
		})
		b.Run(c.name+"/filtered", func(b *testing.B) {
			onFilteredThread(b, f, func() {
				for b.Loop() {
					c.fn()
				}
			})
		})
	}
}
