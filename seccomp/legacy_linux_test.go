package seccomp

// The seccomp package's own assembler before internal/bpfprog, kept only
// to prove the new builder compiles the same programs (deleted next).

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// TestLegacyEquality: for every combination of Options, the program
// bpfprog compiles is the old assembler's, byte for byte.
func TestLegacyEquality(t *testing.T) {
	tg := nativeArch(t)
	n := 0
	for _, abi := range []int{0, 1, 3, 4, 6, 7, 9} {
		for bits := range 1 << 4 {
			for _, bind := range [][]uint16{nil, {8080}, {0}} {
				opt := Options{LandlockABI: abi, AllowUnixSockets: bits&1 != 0, NetRestricted: bits&2 != 0,
					AllowDNS: bits&4 != 0, AllowDangerous: bits&8 != 0, BindTCP: bind}
				rs := rulesFor(opt, tg.String(), tg.HasX32())
				old, err := legacyCompile(rs, tg)
				require.NoError(t, err)
				raw, err := bpf.Assemble(old)
				require.NoError(t, err)
				f, err := Build(opt)
				require.NoError(t, err)
				require.Len(t, f.prog, len(raw), "%+v", opt)
				for i, r := range raw {
					assert.Equal(t, unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}, f.prog[i], "%+v insn %d", opt, i)
				}
				n++
			}
		}
	}
	t.Logf("%d option sets, identical programs", n)
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
func legacyCompile(rs []rule, tg bpfprog.Arch) ([]bpf.Instruction, error) {
	var a asm
	kill := a.label()
	a.emit(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.jumpIf(bpf.JumpEqual, uint32(tg), next, kill)
	a.emit(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if tg.HasX32() {
		a.jumpIf(bpf.JumpBitsSet, bpfprog.X32SyscallBit, kill, next)
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
			a.emit(bpf.RetConstant{Val: uint32(e.ret)})
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
func (a *asm) cond(c bpfprog.Cond, fail label) {
	a.emit(bpf.LoadAbsolute{Off: uint32(offArgs + 8*c.Arg), Size: 4})
	if c.Mask != 0 {
		a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: c.Mask})
	}
	switch c.Op {
	case bpfprog.In:
		ok := a.label()
		for i, v := range c.Vals {
			if i == len(c.Vals)-1 {
				a.jumpIf(bpf.JumpEqual, v, next, fail)
			} else {
				a.jumpIf(bpf.JumpEqual, v, ok, next)
			}
		}
		a.bind(ok)
	case bpfprog.NotIn:
		for _, v := range c.Vals {
			a.jumpIf(bpf.JumpEqual, v, fail, next)
		}
	case bpfprog.AnyBits:
		a.jumpIf(bpf.JumpBitsSet, c.Vals[0], next, fail)
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
