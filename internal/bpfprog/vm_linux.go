package bpfprog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Data is the part of struct seccomp_data (include/uapi/linux/seccomp.h)
// a filter reads: the syscall number, its audit arch and its six
// arguments (instruction_pointer is left 0).
type Data struct {
	Arch Arch
	Nr   uint32
	Args [6]uint64
}

// Call returns the Data of syscall nr under arch with args (at most six;
// the rest are 0).
func Call(arch Arch, nr uint32, args ...uint64) Data {
	d := Data{Arch: arch, Nr: nr}
	copy(d.Args[:], args)
	return d
}

// VM runs a compiled program in golang.org/x/net/bpf's interpreter, for
// kernel-free tests of the decisions. Not safe for concurrent use.
type VM struct{ vm *bpf.VM }

// NewVM loads prog. It fails when prog does not disassemble completely
// or the interpreter rejects it (a jump past the end, no final return).
func NewVM(prog []unix.SockFilter) (*VM, error) {
	raw := make([]bpf.RawInstruction, len(prog))
	for i, r := range prog {
		raw[i] = bpf.RawInstruction{Op: r.Code, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		return nil, errors.New("bpfprog: program does not disassemble completely")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		return nil, fmt.Errorf("bpfprog: %w", err)
	}
	return &VM{vm: vm}, nil
}

// Run returns the program's action for d. The kernel's filter loads each
// 32-bit word of seccomp_data in the CPU's byte order, x/net/bpf's VM in
// network order: Run stores every word big-endian at its little-endian
// offset (an argument's low word at 16+8i, its high word 4 bytes later),
// so the program sees what it would see on amd64 or arm64.
func (v *VM) Run(d Data) (Action, error) {
	b := make([]byte, 64) // sizeof(struct seccomp_data)
	binary.BigEndian.PutUint32(b[offNr:], d.Nr)
	binary.BigEndian.PutUint32(b[offArch:], uint32(d.Arch))
	for i, a := range d.Args {
		binary.BigEndian.PutUint32(b[offArgs+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[offArgs+8*i+4:], uint32(a>>32))
	}
	r, err := v.vm.Run(b)
	if err != nil {
		return 0, fmt.Errorf("bpfprog: %w", err)
	}
	return Action(uint32(r)), nil
}
