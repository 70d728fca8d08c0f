package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Offsets in struct seccomp_data (include/uapi/linux/seccomp.h).
const (
	offNr   = 0
	offArch = 4
	// offArgs is the offset of args[0]; each argument is a __u64 in the
	// CPU's byte order, so on the little-endian amd64 and arm64 its low 32
	// bits come first.
	offArgs = 16
	// bpfMaxInsns is BPF_MAXINSNS, the kernel's limit on a filter's length.
	bpfMaxInsns = 4096
)

// target describes the running architecture.
type target struct {
	audit uint32
	name  string
	x32   bool // x86_64: also refuse __X32_SYSCALL_BIT numbers
}

func currentTarget() (target, error) {
	switch runtime.GOARCH {
	case "amd64":
		return target{audit: unix.AUDIT_ARCH_X86_64, name: "AUDIT_ARCH_X86_64", x32: true}, nil
	case "arm64":
		return target{audit: unix.AUDIT_ARCH_AARCH64, name: "AUDIT_ARCH_AARCH64"}, nil
	}
	return target{}, fmt.Errorf("%w: %s: %w", ErrUnsupportedArch, runtime.GOARCH, errors.ErrUnsupported)
}

func build(opt Options) (*Filter, error) {
	tg, err := currentTarget()
	if err != nil {
		return nil, err
	}
	rs := rulesFor(opt, tg.name, tg.x32)
	prog, err := compile(rs, tg)
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("seccomp: assemble: %w", err)
	}
	if len(raw) > bpfMaxInsns {
		return nil, fmt.Errorf("seccomp: program has %d instructions, more than BPF_MAXINSNS (%d)", len(raw), bpfMaxInsns)
	}
	f := &Filter{prog: make([]sockFilter, len(raw))}
	for i, r := range raw {
		f.prog[i] = sockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	for _, r := range rs {
		f.rules = append(f.rules, r.Rule)
		for _, e := range r.entries {
			f.supervised = f.supervised || e.ret == unix.SECCOMP_RET_USER_NOTIF
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

// compile turns the decision list into a classic-BPF program:
//
//	load arch; != target → kill
//	load nr; (x86_64) nr & __X32_SYSCALL_BIT → kill
//	for each syscall with entries, in order of first appearance:
//	    nr != syscall → next syscall
//	    for each entry: any cond fails → next entry; else return its action
//	    return allow
//	return allow
func compile(rs []rule, tg target) ([]bpf.Instruction, error) {
	var a asm
	kill := a.label()
	a.emit(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.jumpIf(bpf.JumpEqual, tg.audit, next, kill)
	a.emit(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if tg.x32 {
		a.jumpIf(bpf.JumpBitsSet, x32SyscallBit, kill, next)
	}

	var order []string
	bySyscall := map[string][]entry{}
	for _, r := range rs {
		for _, e := range r.entries {
			if _, ok := bySyscall[e.syscall]; !ok {
				order = append(order, e.syscall)
			}
			bySyscall[e.syscall] = append(bySyscall[e.syscall], e)
		}
	}
	for _, sc := range order {
		nr, ok := syscallNumbers[sc]
		if !ok {
			return nil, fmt.Errorf("seccomp: no syscall number for %q (cannot happen: rulesFor and syscallNumbers disagree)", sc)
		}
		nextSyscall := a.label()
		a.jumpIf(bpf.JumpEqual, nr, next, nextSyscall)
		for _, e := range bySyscall[sc] {
			nextEntry := a.label()
			for _, c := range e.conds {
				a.cond(c, nextEntry)
			}
			a.emit(bpf.RetConstant{Val: e.ret})
			a.bind(nextEntry)
		}
		a.emit(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
		a.bind(nextSyscall)
	}
	a.emit(bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW})
	a.bind(kill)
	a.emit(bpf.RetConstant{Val: unix.SECCOMP_RET_KILL_PROCESS})
	return a.resolve()
}

// label names a position in an asm program; next means the next instruction.
type label int

const next label = -1

// asm is a tiny assembler over x/net/bpf instructions with forward labels.
type asm struct {
	ins    []bpf.Instruction
	jumps  []pendingJump
	labels []int // position of each label, -1 while unbound
}

type pendingJump struct {
	at   int
	t, f label
}

func (a *asm) label() label {
	a.labels = append(a.labels, -1)
	return label(len(a.labels) - 1)
}

func (a *asm) bind(l label) { a.labels[l] = len(a.ins) }

func (a *asm) emit(i bpf.Instruction) { a.ins = append(a.ins, i) }

func (a *asm) jumpIf(c bpf.JumpTest, val uint32, t, f label) {
	a.jumps = append(a.jumps, pendingJump{at: len(a.ins), t: t, f: f})
	a.emit(bpf.JumpIf{Cond: c, Val: val})
}

// cond emits a test of c that falls through when c holds and jumps to fail
// otherwise. It loads the low 32 bits of the argument into A.
func (a *asm) cond(c cond, fail label) {
	a.emit(bpf.LoadAbsolute{Off: uint32(offArgs + 8*c.arg), Size: 4})
	if c.mask != 0 {
		a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: c.mask})
	}
	switch c.op {
	case opIn:
		ok := a.label()
		for i, v := range c.vals {
			if i == len(c.vals)-1 {
				a.jumpIf(bpf.JumpEqual, v, next, fail)
			} else {
				a.jumpIf(bpf.JumpEqual, v, ok, next)
			}
		}
		a.bind(ok)
	case opNotIn:
		for _, v := range c.vals {
			a.jumpIf(bpf.JumpEqual, v, fail, next)
		}
	case opBitsSet:
		a.jumpIf(bpf.JumpBitsSet, c.vals[0], next, fail)
	}
}

// resolve patches every jump with its relative offset.
func (a *asm) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, l label) (uint32, error) {
		if l == next {
			return 0, nil
		}
		to := a.labels[l]
		if to < 0 {
			return 0, fmt.Errorf("seccomp: unbound label %d (cannot happen)", l)
		}
		d := to - (from + 1)
		if d < 0 {
			return 0, fmt.Errorf("seccomp: backward jump at %d (cannot happen)", from)
		}
		return uint32(d), nil
	}
	out := append([]bpf.Instruction(nil), a.ins...)
	for _, j := range a.jumps {
		st, err := skip(j.at, j.t)
		if err != nil {
			return nil, err
		}
		sf, err := skip(j.at, j.f)
		if err != nil {
			return nil, err
		}
		if st > 255 || sf > 255 {
			return nil, fmt.Errorf("seccomp: conditional jump at %d spans more than 255 instructions", j.at)
		}
		in := out[j.at].(bpf.JumpIf)
		in.SkipTrue, in.SkipFalse = uint8(st), uint8(sf)
		out[j.at] = in
	}
	return out, nil
}

func (f *Filter) install() error {
	if f == nil || len(f.prog) == 0 {
		return errors.New("seccomp: Install on a nil or empty Filter")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	prog := unix.SockFprog{
		Len:    uint16(len(f.prog)),
		Filter: (*unix.SockFilter)(unsafe.Pointer(&f.prog[0])),
	}
	// This thread only, never SECCOMP_FILTER_FLAG_TSYNC.
	var flags uintptr
	if f.supervised {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	r1, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(f)
	if errno != 0 {
		return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	if f.supervised {
		// The filter is on this thread for good; if the supervisor
		// cannot start, its listener is closed and listen fails with
		// ENOSYS (fail closed), and the caller gets the error.
		return startSupervisor(int(r1), f)
	}
	return nil
}
