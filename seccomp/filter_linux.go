package seccomp

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// sockFilter is struct sock_filter.
type sockFilter = unix.SockFilter

// currentTarget returns the running architecture.
func currentTarget() (bpfprog.Arch, error) {
	tg, err := bpfprog.NativeArch()
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnsupportedArch, err)
	}
	return tg, nil
}

func build(opt Options) (*Filter, error) {
	tg, err := currentTarget()
	if err != nil {
		return nil, err
	}
	rs := rulesFor(opt, tg.String(), tg.HasX32())
	p, err := program(rs, tg)
	if err != nil {
		return nil, err
	}
	prog, err := p.Compile()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	f := &Filter{prog: prog}
	for _, r := range rs {
		f.rules = append(f.rules, r.Rule)
		for _, e := range r.entries {
			f.supervised = f.supervised || e.ret == bpfprog.UserNotif
		}
	}
	if f.supervised {
		f.bindTCP = make(map[uint16]bool, len(opt.BindTCP))
		for _, p := range opt.BindTCP {
			f.bindTCP[p] = true
		}
		f.anyPort = f.bindTCP[0]
	}
	return f, nil
}

// program turns the decision list into a bpfprog.Program: a syscall under
// another ABI, or an x32 number, kills the process (the arch and x32
// rules); the entries decide in order; everything else is allowed.
func program(rs []rule, tg bpfprog.Arch) (bpfprog.Program, error) {
	p := bpfprog.Program{Arch: tg, ForeignArch: bpfprog.KillProcess, X32: bpfprog.KillProcess, Default: bpfprog.Allow}
	for _, r := range rs {
		for _, e := range r.entries {
			nr, ok := syscallNumbers[e.syscall]
			if !ok {
				return p, fmt.Errorf("seccomp: no syscall number for %q (cannot happen: rulesFor and syscallNumbers disagree)", e.syscall)
			}
			p.Rules = append(p.Rules, bpfprog.Rule{Nr: nr, Conds: e.conds, Action: e.ret})
		}
	}
	return p, nil
}

func (f *Filter) install() error {
	if f == nil || len(f.prog) == 0 {
		return errors.New("seccomp: Install on a nil or empty Filter")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// This thread only, never SECCOMP_FILTER_FLAG_TSYNC.
	var flags uintptr
	if f.supervised {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	r1, err := bpfprog.SetModeFilter(f.prog, flags)
	if err != nil {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", err)
	}
	if f.supervised {
		// The filter is on this thread for good; if the supervisor
		// cannot start, its listener is closed and listen fails with
		// ENOSYS (fail closed), and the caller gets the error.
		return startSupervisor(int(r1), f)
	}
	return nil
}
