package seccomp

import (
	"errors"
	"fmt"
	"sync"

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
	if f := precompiledFilter(opt, tg); f != nil {
		return f, nil
	}
	return buildRules(opt, tg)
}

// buildRules is build without the precompiled table: the rules made and
// their programs compiled (or found by Key).
func buildRules(opt Options, tg bpfprog.Arch) (*Filter, error) {
	var err error
	rs := rulesFor(opt, tg.String(), tg.HasX32())
	f := &Filter{}
	for _, r := range rs {
		f.rules = append(f.rules, r.Rule)
		for _, e := range r.entries {
			if e.ret != bpfprog.UserNotif {
				continue
			}
			switch e.syscall {
			case "inotify_add_watch":
				f.brokered = true
			case "connect":
				// Needs the broker, and a live process: Exec refuses
				// it, landjail run supervises.
				f.brokered, f.supervised = true, true
			default:
				f.supervised, f.plainListener = true, true
			}
		}
	}
	// plain is rs as installed without a broker: the inotify rule
	// refusing, and the named UNIX sockets not enforceable, so UNIX
	// sockets refused as without AllowUnix (fail closed).
	plainRS := rs
	if len(opt.AllowUnix) > 0 {
		plainOpt := opt
		plainOpt.AllowUnix = nil
		plainRS = rulesFor(plainOpt, tg.String(), tg.HasX32())
	}
	plain, listener := plainRules(plainRS)
	f.plainListener = f.plainListener || listener
	if unixBrokered(opt) {
		f.connects = make(chan struct{}, maxPendingConnects)
		f.allowUnix = make(map[devIno]string, len(opt.AllowUnix))
		for _, u := range opt.AllowUnix {
			f.allowUnix[devIno{u.Dev, u.Ino}] = u.Path
		}
	}
	if opt.Explain {
		// The supervisor answers what the plain program refuses.
		var ers []rule
		ers, f.decisions = explained(rs)
		f.explain, f.explainReads, f.events = true, opt.ExplainReads, &eventLog{}
		if f.prog, err = compile(ers, tg); err != nil {
			return nil, err
		}
		f.plain = sync.OnceValues(func() ([]sockFilter, error) { return compile(plain, tg) })
		return f, f.finishSupervised(opt)
	}
	if f.prog, err = compile(rs, tg); err != nil {
		return nil, err
	}
	if !f.brokered {
		f.plain = func() ([]sockFilter, error) { return f.prog, nil }
	} else {
		// Compiled when first installed without a broker: most
		// filters never are, and Build stays one compilation.
		f.plain = sync.OnceValues(func() ([]sockFilter, error) { return compile(plain, tg) })
	}
	return f, f.finishSupervised(opt)
}

// plainRules is rs as installed without a broker: the inotify rule
// refusing (EPERM). listener reports whether a rule still hands a
// syscall to a supervisor.
func plainRules(rs []rule) (plain []rule, listener bool) {
	for _, r := range rs {
		if r.Name == "inotify" && len(r.entries) > 0 {
			r = deny("inotify", "inotify_add_watch", "", unix.EPERM, "no broker")
		}
		for _, e := range r.entries {
			if e.ret == bpfprog.UserNotif {
				listener = true
			}
		}
		plain = append(plain, r)
	}
	return plain, listener
}

// finishSupervised sets the ports a supervised listen may use.
func (f *Filter) finishSupervised(opt Options) error {
	if f.supervised {
		f.bindTCP = make(map[uint16]bool, len(opt.BindTCP))
		for _, p := range opt.BindTCP {
			f.bindTCP[p] = true
		}
		f.anyPort = f.bindTCP[0]
	}
	return nil
}

// compile is program and its compilation.
func compile(rs []rule, tg bpfprog.Arch) ([]sockFilter, error) {
	p, err := program(rs, tg)
	if err != nil {
		return nil, err
	}
	if prog := precompiledFor(p); prog != nil {
		return prog, nil
	}
	prog, err := p.Compile()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return prog, nil
}

// program turns the decision list into a bpfprog.Program: a syscall under
// another ABI, or an x32 number, kills the process (the arch and x32
// rules); the entries decide in order; everything else is allowed.
func program(rs []rule, tg bpfprog.Arch) (bpfprog.Program, error) {
	p := bpfprog.Program{Arch: tg, ForeignArch: bpfprog.KillProcess, X32: bpfprog.KillProcess, Default: bpfprog.Allow}
	for _, r := range rs {
		for _, e := range r.entries {
			nr, ok := syscallNumbers()[e.syscall]
			if !ok {
				return p, fmt.Errorf("seccomp: no syscall number for %q (cannot happen: rulesFor and syscallNumbers disagree)", e.syscall)
			}
			p.Rules = append(p.Rules, bpfprog.Rule{Nr: nr, Conds: e.conds, Action: e.ret})
		}
	}
	return p, nil
}

func (f *Filter) install(b Broker) error {
	if f == nil || len(f.prog) == 0 {
		if b != nil {
			b.Close()
		}
		return errors.New("seccomp: Install on a nil or empty Filter")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		if b != nil {
			b.Close()
		}
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	// This thread only, never SECCOMP_FILTER_FLAG_TSYNC.
	plain, err := f.plain()
	if err != nil {
		if b != nil {
			b.Close()
		}
		return err
	}
	prog, listener := plain, f.plainListener
	if f.explain {
		// Without a broker the supervisor answers inotify_add_watch
		// and a named socket's connect EPERM, as the plain program does.
		prog, listener = f.prog, true
	} else if b != nil && f.brokered {
		prog, listener = f.prog, true
	} else if b != nil {
		b.Close()
		b = nil
	}
	var flags uintptr
	if listener {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	r1, err := bpfprog.SetModeFilter(prog, flags)
	if errors.Is(err, unix.EBUSY) && (b != nil || f.explain) && !f.plainListener {
		// A listener further up the chain (a landjail inside a
		// landjail): only the broker (inotify, named UNIX sockets)
		// wanted one here, and those are refused instead (fail
		// closed); with Explain, nothing is recorded.
		if b != nil {
			b.Close()
		}
		b, listener = nil, false
		r1, err = bpfprog.SetModeFilter(plain, 0)
	}
	if err != nil {
		if b != nil {
			b.Close()
		}
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", err)
	}
	if listener {
		// The filter is on this thread for good; if the supervisor
		// cannot start, its listener is closed and listen and
		// inotify_add_watch fail with ENOSYS (fail closed), and the
		// caller gets the error.
		return startSupervisor(int(r1), f, b)
	}
	return nil
}
