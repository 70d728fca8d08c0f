package bpfprog

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
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
	// bits come first and its high 32 bits 4 bytes later.
	offArgs = 16
	// MaxInsns is BPF_MAXINSNS (include/uapi/linux/bpf_common.h), the
	// kernel's limit on a classic-BPF program's length.
	MaxInsns = 4096
	// maxSkip is the farthest a conditional jump reaches: jt and jf are
	// 8-bit (struct sock_filter).
	maxSkip = 255
	// X32SyscallBit is __X32_SYSCALL_BIT (arch/x86/include/uapi/asm/unistd.h):
	// x32 syscalls share AUDIT_ARCH_X86_64 but carry this bit in their
	// numbers.
	X32SyscallBit = 0x40000000
)

// Action is a seccomp filter's return value (SECCOMP_RET_*, seccomp(2)):
// what the kernel does with the syscall.
type Action uint32

// Actions. Use Errno for SECCOMP_RET_ERRNO.
const (
	// Allow runs the syscall (SECCOMP_RET_ALLOW).
	Allow Action = unix.SECCOMP_RET_ALLOW
	// KillProcess kills the whole process (SECCOMP_RET_KILL_PROCESS,
	// Linux 4.14).
	KillProcess Action = unix.SECCOMP_RET_KILL_PROCESS
	// UserNotif hands the syscall to the filter's listener
	// (SECCOMP_RET_USER_NOTIF, Linux 5.0; seccomp_unotify(2)); without a
	// listener the syscall fails with ENOSYS.
	UserNotif Action = unix.SECCOMP_RET_USER_NOTIF
)

// Errno returns the action that fails the syscall with e
// (SECCOMP_RET_ERRNO | e, e truncated to SECCOMP_RET_DATA's 16 bits).
func Errno(e unix.Errno) Action {
	return Action(unix.SECCOMP_RET_ERRNO | (uint32(e) & unix.SECCOMP_RET_DATA))
}

// String names a: "allow", "kill process", "user notif", "errno EPERM",
// or "ret 0x…" for another value.
func (a Action) String() string {
	switch {
	case a == Allow:
		return "allow"
	case a == KillProcess:
		return "kill process"
	case a == UserNotif:
		return "user notif"
	case uint32(a)&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		return "errno " + unix.ErrnoName(unix.Errno(uint32(a)&unix.SECCOMP_RET_DATA))
	}
	return fmt.Sprintf("ret %#x", uint32(a))
}

// Arch is an AUDIT_ARCH_* value (include/uapi/linux/audit.h): the
// seccomp_data.arch of a syscall made under that ABI.
type Arch uint32

// Architectures a Program can be compiled for: both little-endian.
const (
	ArchX86_64  Arch = unix.AUDIT_ARCH_X86_64
	ArchAArch64 Arch = unix.AUDIT_ARCH_AARCH64
)

// NativeArch returns the Arch of the running GOARCH. On a GOARCH other
// than amd64 and arm64 it fails wrapping errors.ErrUnsupported.
func NativeArch() (Arch, error) {
	switch runtime.GOARCH {
	case "amd64":
		return ArchX86_64, nil
	case "arm64":
		return ArchAArch64, nil
	}
	return 0, fmt.Errorf("%s: %w", runtime.GOARCH, errors.ErrUnsupported)
}

// String returns the constant's name ("AUDIT_ARCH_X86_64"), or a number.
func (a Arch) String() string {
	switch a {
	case ArchX86_64:
		return "AUDIT_ARCH_X86_64"
	case ArchAArch64:
		return "AUDIT_ARCH_AARCH64"
	}
	return fmt.Sprintf("AUDIT_ARCH(%#x)", uint32(a))
}

// HasX32 reports whether syscalls under a's audit arch may also be x32
// calls (X32SyscallBit set): true for ArchX86_64 only.
func (a Arch) HasX32() bool { return a == ArchX86_64 }

// Op is how a Cond compares an argument word.
type Op int

// Ops.
const (
	// In holds when the (masked) word equals one of Vals.
	In Op = iota + 1
	// NotIn holds when the (masked) word equals none of Vals.
	NotIn
	// AnyBits holds when the word has at least one bit of Vals[0] set
	// (BPF_JSET); with a single bit, when that bit is set.
	AnyBits
)

// Cond is a condition on one 32-bit word of a syscall argument. Build it
// with ArgIn, ArgNotIn or ArgAnyBits, then Masked or HighWord.
type Cond struct {
	// Arg is the argument index, 0 to 5.
	Arg int
	// High compares the argument's high 32 bits instead of its low ones.
	// The kernel reads an int or unsigned int argument from the low
	// word only, so conditions on such arguments leave this false.
	High bool
	// Mask is ANDed with the word before In and NotIn compare it; 0 for
	// none (AnyBits ignores it).
	Mask uint32
	// Op is the comparison; Vals its operands (In, NotIn: at least one;
	// AnyBits: exactly one, non-zero).
	Op   Op
	Vals []uint32
}

// ArgIn is the condition "the low word of argument arg is one of vals".
func ArgIn(arg int, vals ...uint32) Cond { return Cond{Arg: arg, Op: In, Vals: vals} }

// ArgNotIn is the condition "the low word of argument arg is none of vals".
func ArgNotIn(arg int, vals ...uint32) Cond { return Cond{Arg: arg, Op: NotIn, Vals: vals} }

// ArgAnyBits is the condition "the low word of argument arg has at least
// one bit of bits set".
func ArgAnyBits(arg int, bits uint32) Cond {
	return Cond{Arg: arg, Op: AnyBits, Vals: []uint32{bits}}
}

// Masked returns c comparing word&mask (In and NotIn only).
func (c Cond) Masked(mask uint32) Cond { c.Mask = mask; return c }

// HighWord returns c on the argument's high 32 bits.
func (c Cond) HighWord() Cond { c.High = true; return c }

// Rule is one decision: when the syscall number is Nr and every Cond
// holds, the filter returns Action.
type Rule struct {
	Nr     uint32
	Conds  []Cond
	Action Action
}

// Program is a seccomp filter as a decision list:
//
//	seccomp_data.arch != Arch             → ForeignArch
//	x86_64: nr & X32SyscallBit (unless PassX32) → X32
//	the first Rule whose Nr matches and whose Conds hold → its Action
//	otherwise                            → Default
//
// The zero value of an Action is SECCOMP_RET_KILL_THREAD, so set every
// Action field.
type Program struct {
	// Arch is the architecture whose syscall numbers the Rules use:
	// ArchX86_64 or ArchAArch64 (NativeArch).
	Arch Arch
	// ForeignArch is returned for a syscall made under another ABI
	// (int 0x80 from a 64-bit x86 process, compat arm32), whose numbers
	// differ and would dodge the Rules.
	ForeignArch Action
	// X32 is returned, on ArchX86_64, for a number with X32SyscallBit
	// set, before any Rule: x32 numbers would dodge the Rules too.
	X32 Action
	// PassX32 leaves x32 numbers to the Rules instead (no X32 check): a
	// Rule then matches an x32 call only by naming Nr|X32SyscallBit.
	PassX32 bool
	// Rules are tried in order.
	Rules []Rule
	// Default is returned when no Rule matches.
	Default Action
}

// Compile returns p as a classic-BPF program ready for SetModeFilter.
// Rules on the same syscall are grouped, in the order of the syscall's
// first Rule (the decisions are those of the list in order), and the
// syscall number finds its group by a binary search (BPF_JGE halving
// steps, then at most four BPF_JEQ), not by a test per group; each Action
// is returned by one instruction the rules jump to, and the Rules of a
// syscall after one without conditions (never reached) are checked but
// not emitted: the default landjail run filter is 184 instructions, and
// its seccomp(2) install takes ≈60 µs here, against ≈110 µs for the 165
// of the same rules as a list (the kernel emulates the filter for every
// syscall number at install: see dispatch) and ≈175 µs with a return per
// rule. It fails
// when p.Arch is not ArchX86_64 or ArchAArch64, when a Cond is malformed
// (argument index outside 0..5, unknown Op, no Vals, AnyBits without
// exactly one non-zero value), or when the program would be longer than
// MaxInsns. Conditional jumps longer than 255 instructions go through a
// BPF_JA, never wrap.
func (p Program) Compile() ([]unix.SockFilter, error) {
	ins, err := p.Assemble()
	if err != nil {
		return nil, err
	}
	raw, err := bpf.Assemble(ins)
	if err != nil {
		return nil, fmt.Errorf("bpfprog: assemble: %w", err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out, nil
}

// Assemble is Compile before encoding: the x/net/bpf instructions, with
// the same errors.
func (p Program) Assemble() ([]bpf.Instruction, error) {
	if p.Arch != ArchX86_64 && p.Arch != ArchAArch64 {
		return nil, fmt.Errorf("bpfprog: arch %v: only the little-endian AUDIT_ARCH_X86_64 and AUDIT_ARCH_AARCH64 are known: %w", p.Arch, errors.ErrUnsupported)
	}
	var a asm
	checkX32 := p.Arch.HasX32() && !p.PassX32
	foreign := a.label()
	x32 := foreign // one return when both actions are the same
	if checkX32 && p.X32 != p.ForeignArch {
		x32 = a.label()
	}
	a.emit(bpf.LoadAbsolute{Off: offArch, Size: 4})
	a.jumpIf(bpf.JumpEqual, uint32(p.Arch), next, foreign)
	a.emit(bpf.LoadAbsolute{Off: offNr, Size: 4})
	if checkX32 {
		a.jumpIf(bpf.JumpBitsSet, X32SyscallBit, x32, next)
	}

	var order []uint32
	byNr := map[uint32][]Rule{}
	for _, r := range p.Rules {
		if _, ok := byNr[r.Nr]; !ok {
			order = append(order, r.Nr)
		}
		byNr[r.Nr] = append(byNr[r.Nr], r)
	}
	// The number selects its rules through a binary search (dispatch),
	// then each number's rules are tried in order (its body). Each
	// Action is returned by one instruction at the end, which the rules
	// jump to; the Default one is also where an unmatched number goes. A
	// rule without conditions ends its syscall's list: the search jumps
	// straight to its return (first rule), or it returns (a later one),
	// and what follows it is never emitted (but still checked).
	entry := make(map[uint32]label, len(order))
	for _, nr := range order {
		rules := byNr[nr]
		if len(rules[0].Conds) == 0 {
			entry[nr] = a.ret(rules[0].Action)
			if err := checkRules(rules[1:]); err != nil {
				return nil, fmt.Errorf("bpfprog: rule for syscall %d: %w", nr, err)
			}
			continue
		}
		entry[nr] = a.label()
	}
	sorted := slices.Clone(order)
	slices.Sort(sorted)
	a.dispatch(sorted, entry, a.ret(p.Default))
	for _, nr := range order {
		rules := byNr[nr]
		if len(rules[0].Conds) == 0 {
			continue
		}
		a.bind(entry[nr])
		for i, r := range rules {
			if len(r.Conds) == 0 {
				a.emit(bpf.RetConstant{Val: uint32(r.Action)})
				if err := checkRules(rules[i+1:]); err != nil {
					return nil, fmt.Errorf("bpfprog: rule for syscall %d: %w", nr, err)
				}
				break
			}
			fail := a.ret(p.Default)
			if i < len(rules)-1 {
				fail = a.label()
			}
			for j, c := range r.Conds {
				ok := next
				if j == len(r.Conds)-1 {
					ok = a.ret(r.Action)
				}
				if err := a.cond(c, ok, fail); err != nil {
					return nil, fmt.Errorf("bpfprog: rule for syscall %d: %w", nr, err)
				}
			}
			if i < len(rules)-1 {
				a.bind(fail)
			}
		}
	}
	a.bind(a.ret(p.Default))
	a.emit(bpf.RetConstant{Val: uint32(p.Default)})
	for _, r := range a.rets {
		if r.act != p.Default {
			a.bind(r.l)
			a.emit(bpf.RetConstant{Val: uint32(r.act)})
		}
	}
	a.bind(foreign)
	a.emit(bpf.RetConstant{Val: uint32(p.ForeignArch)})
	if x32 != foreign {
		a.bind(x32)
		a.emit(bpf.RetConstant{Val: uint32(p.X32)})
	}
	out, err := a.resolve()
	if err != nil {
		return nil, err
	}
	if len(out) > MaxInsns {
		return nil, fmt.Errorf("bpfprog: program has %d instructions, more than BPF_MAXINSNS (%d)", len(out), MaxInsns)
	}
	return out, nil
}

// label names a position in an asm program; next means the instruction
// after the jump (and after any trampolines resolve puts there).
type label int

const next label = -1

// asm is a tiny assembler over x/net/bpf instructions with forward labels.
type asm struct {
	ins    []bpf.Instruction
	jumps  []pendingJump
	labels []int // instruction index of each label, -1 while unbound
	rets   []sharedRet
}

// sharedRet is the one return instruction of an Action (asm.ret).
type sharedRet struct {
	act Action
	l   label
}

// ret is the label of act's return instruction, which Assemble emits
// once, after the rules.
func (a *asm) ret(act Action) label {
	for _, r := range a.rets {
		if r.act == act {
			return r.l
		}
	}
	l := a.label()
	a.rets = append(a.rets, sharedRet{act, l})
	return l
}

type pendingJump struct {
	at   int // index in ins of the bpf.JumpIf
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

// dispatchLeaf is the most numbers dispatch compares one by one: below
// it a halving step (one BPF_JGE) saves no comparison.
const dispatchLeaf = 4

// dispatch emits a binary search of the syscall number in A among nrs
// (sorted, distinct): a number of nrs jumps to its entry, any other to
// miss. The search takes about log2(len(nrs)) + dispatchLeaf comparisons
// where a decision list takes up to len(nrs). That matters twice: the
// kernel runs the filter on every syscall the cache below does not
// decide, and at install (seccomp_cache_prepare, Linux 5.11) it emulates
// the filter once per syscall number of the architecture to find those
// always allowed, with interrupts off: 165 instructions as a list cost
// about 110 µs in seccomp(2) here, 68 of them in that emulation.
func (a *asm) dispatch(nrs []uint32, entry map[uint32]label, miss label) {
	if len(nrs) <= dispatchLeaf {
		for i, nr := range nrs {
			if i == len(nrs)-1 {
				a.jumpIf(bpf.JumpEqual, nr, entry[nr], miss)
			} else {
				a.jumpIf(bpf.JumpEqual, nr, entry[nr], next)
			}
		}
		// No number at all (no rule): nothing follows but the Default
		// return, where the program then falls.
		return
	}
	mid := len(nrs) / 2
	high := a.label()
	a.jumpIf(bpf.JumpGreaterOrEqual, nrs[mid], high, next)
	a.dispatch(nrs[:mid], entry, miss)
	a.bind(high)
	a.dispatch(nrs[mid:], entry, miss)
}

// checkCond returns why c is malformed, or nil.
func checkCond(c Cond) error {
	switch {
	case c.Arg < 0 || c.Arg > 5:
		return fmt.Errorf("argument index %d outside 0..5", c.Arg)
	case len(c.Vals) == 0:
		return errors.New("condition without values")
	case c.Op == AnyBits && (len(c.Vals) != 1 || c.Vals[0] == 0):
		return errors.New("AnyBits takes exactly one non-zero value")
	case c.Op != In && c.Op != NotIn && c.Op != AnyBits:
		return fmt.Errorf("unknown Op %d", c.Op)
	}
	return nil
}

// checkRules checks the conditions of rules that are never emitted
// (after a rule without conditions): Compile refuses a malformed
// Program whatever its rules' order.
func checkRules(rules []Rule) error {
	for _, r := range rules {
		for _, c := range r.Conds {
			if err := checkCond(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// cond emits a test of c that goes to ok (next: falls through) when c
// holds and to fail otherwise; it loads the argument word into A.
func (a *asm) cond(c Cond, ok, fail label) error {
	if err := checkCond(c); err != nil {
		return err
	}
	off := uint32(offArgs + 8*c.Arg)
	if c.High {
		off += 4
	}
	a.emit(bpf.LoadAbsolute{Off: off, Size: 4})
	if c.Mask != 0 && c.Op != AnyBits {
		a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: c.Mask})
	}
	switch c.Op {
	case In:
		match := ok
		if ok == next {
			match = a.label()
		}
		for i, v := range c.Vals {
			if i == len(c.Vals)-1 {
				a.jumpIf(bpf.JumpEqual, v, ok, fail)
			} else {
				a.jumpIf(bpf.JumpEqual, v, match, next)
			}
		}
		if ok == next {
			a.bind(match)
		}
	case NotIn:
		for i, v := range c.Vals {
			if i == len(c.Vals)-1 {
				a.jumpIf(bpf.JumpEqual, v, fail, ok)
			} else {
				a.jumpIf(bpf.JumpEqual, v, fail, next)
			}
		}
	case AnyBits:
		a.jumpIf(bpf.JumpBitsSet, c.Vals[0], ok, fail)
	}
	return nil
}

// resolve lays the program out and patches every jump with its offset.
// A conditional jump side whose target is more than 255 instructions
// ahead gets a trampoline: an unconditional BPF_JA (32-bit offset) right
// after the jump, which that side then reaches with an offset of 0 or 1.
// Trampolines lengthen other jumps, so layout repeats until no new one is
// needed (each jump side gets at most one, so this ends).
func (a *asm) resolve() ([]bpf.Instruction, error) {
	for l, at := range a.labels {
		if at < 0 || at >= len(a.ins) {
			return nil, fmt.Errorf("bpfprog: label %d bound to %d of %d instructions (cannot happen)", l, at, len(a.ins))
		}
	}
	tramp := make([][2]bool, len(a.jumps)) // [t, f]
	jumpAt := make(map[int]int, len(a.jumps))
	for j, pj := range a.jumps {
		jumpAt[pj.at] = j
	}
	var pos []int // output position of each instruction of a.ins
	layout := func() {
		pos = make([]int, len(a.ins)+1)
		p := 0
		for i := range a.ins {
			pos[i] = p
			p++
			if j, ok := jumpAt[i]; ok {
				p += ntramp(tramp[j])
			}
		}
		pos[len(a.ins)] = p
	}
	// target returns the output position side l of jump j reaches.
	target := func(j int, l label) int {
		if l == next {
			at := a.jumps[j].at
			return pos[at] + 1 + ntramp(tramp[j])
		}
		return pos[a.labels[l]]
	}
	for {
		layout()
		changed := false
		for j, pj := range a.jumps {
			for s, l := range [2]label{pj.t, pj.f} {
				if tramp[j][s] {
					continue
				}
				d := target(j, l) - (pos[pj.at] + 1)
				if d < 0 {
					return nil, fmt.Errorf("bpfprog: backward jump at %d (cannot happen)", pj.at)
				}
				if d > maxSkip {
					tramp[j][s] = true
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	out := make([]bpf.Instruction, 0, pos[len(a.ins)])
	for i, in := range a.ins {
		j, ok := jumpAt[i]
		if !ok {
			out = append(out, in)
			continue
		}
		pj := a.jumps[j]
		ji := in.(bpf.JumpIf)
		var ja []bpf.Instruction
		skips := [2]uint8{}
		for s, l := range [2]label{pj.t, pj.f} {
			to := target(j, l)
			if !tramp[j][s] {
				skips[s] = uint8(to - (pos[i] + 1))
				continue
			}
			// The trampoline sits at pos[i]+1+len(ja).
			skips[s] = uint8(len(ja))
			ja = append(ja, bpf.Jump{Skip: uint32(to - (pos[i] + 1 + len(ja) + 1))})
		}
		ji.SkipTrue, ji.SkipFalse = skips[0], skips[1]
		out = append(out, ji)
		out = append(out, ja...)
	}
	return out, nil
}

func ntramp(t [2]bool) int {
	n := 0
	for _, b := range t {
		if b {
			n++
		}
	}
	return n
}

// SetModeFilter calls seccomp(SECCOMP_SET_MODE_FILTER, flags, prog) with
// prog: the filter goes on the calling thread (and, with
// SECCOMP_FILTER_FLAG_TSYNC, every thread of the process), inherited by
// its children and never removable. The caller sets PR_SET_NO_NEW_PRIVS
// first unless it has CAP_SYS_ADMIN. It returns the syscall's result (the
// listener descriptor with SECCOMP_FILTER_FLAG_NEW_LISTENER) or its
// errno: EINVAL or ENOSYS (no seccomp filters, Linux < 3.17 for the
// syscall), EACCES (no no_new_privs), EBUSY (a second listener). An
// empty prog is EINVAL without a syscall. Minimum kernel 3.17.
func SetModeFilter(prog []unix.SockFilter, flags uintptr) (uintptr, error) {
	if len(prog) == 0 || len(prog) > MaxInsns {
		return 0, unix.EINVAL
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r1, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return 0, errno
	}
	return r1, nil
}
