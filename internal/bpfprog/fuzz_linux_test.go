package bpfprog_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// FuzzCompileVM is a differential test of the compiler: a random Program
// (rules with random conditions, sometimes malformed, sometimes behind
// hundreds of padding rules so that jumps need trampolines) and random
// seccomp_data are decided twice, by the compiled program in the BPF VM
// and by evalProgram, a direct reading of the decision list Program
// documents. Compile must fail exactly when the Program is malformed
// (validProgram), and otherwise the two verdicts must agree on every
// input.
func FuzzCompileVM(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{0, 1, 2, 3})
	f.Add([]byte{1, 0xff, 0x10, 2, 3, 1, 0, 4, 0, 0, 0, 1, 2, 0, 0, 0, 5}, []byte{0, 3, 0, 0, 0, 5})
	f.Add([]byte{0, 2, 3, 200, 4, 2, 1, 1, 0, 0, 0, 1, 3, 3, 0, 7, 0, 0, 0, 3, 1, 9}, []byte{0, 0x83, 1, 2, 3})
	f.Add([]byte{2, 0, 0, 0}, []byte{1, 1})
	f.Fuzz(func(t *testing.T, progBytes, dataBytes []byte) {
		p := genProgram(&byteSource{b: progBytes})
		prog, err := p.Compile()
		if err != nil {
			if strings.Contains(err.Error(), "BPF_MAXINSNS") {
				return // too long: a legitimate refusal genProgram cannot predict
			}
			if validProgram(p) {
				t.Fatalf("Compile refused a valid program: %v\n%+v", err, p)
			}
			return
		}
		if !validProgram(p) {
			t.Fatalf("Compile accepted a malformed program:\n%+v", p)
		}
		vm, err := bpfprog.NewVM(prog)
		if err != nil {
			t.Fatalf("the VM refuses the compiled program: %v", err)
		}
		src := &byteSource{b: dataBytes}
		for range 1 + len(dataBytes)/8 {
			d := genData(src, p)
			got, err := vm.Run(d)
			if err != nil {
				t.Fatalf("VM: %v", err)
			}
			if want := evalProgram(p, d); got != want {
				t.Fatalf("data %+v: compiled program says %v, the decision list %v\nprogram %+v", d, got, want, p)
			}
		}
	})
}

// byteSource hands out fuzz bytes, then zeros.
type byteSource struct{ b []byte }

func (s *byteSource) byte() byte {
	if len(s.b) == 0 {
		return 0
	}
	c := s.b[0]
	s.b = s.b[1:]
	return c
}

func (s *byteSource) u32() uint32 {
	return uint32(s.byte()) | uint32(s.byte())<<8 | uint32(s.byte())<<16 | uint32(s.byte())<<24
}

// word returns a value likely to meet the small constants conditions use.
func (s *byteSource) word() uint32 {
	switch c := s.byte(); c % 4 {
	case 0, 1:
		return uint32(c>>2) % 8
	case 2:
		return 1 << (c >> 3 % 32)
	}
	return s.u32()
}

var fuzzActions = []bpfprog.Action{
	bpfprog.Allow, bpfprog.KillProcess, bpfprog.UserNotif,
	bpfprog.Errno(unix.EPERM), bpfprog.Errno(unix.EACCES), bpfprog.Errno(unix.ENOSYS),
}

func (s *byteSource) action() bpfprog.Action { return fuzzActions[int(s.byte())%len(fuzzActions)] }

// fuzzNr is a syscall number from a small set (so rules and data meet),
// sometimes with the x32 bit.
func (s *byteSource) nr() uint32 {
	c := s.byte()
	nr := uint32(c % 8)
	if c&0x80 != 0 {
		nr |= bpfprog.X32SyscallBit
	}
	return nr
}

func genProgram(s *byteSource) bpfprog.Program {
	p := bpfprog.Program{}
	switch s.byte() % 8 {
	case 6:
		p.Arch = bpfprog.ArchAArch64
	case 7:
		p.Arch = bpfprog.Arch(s.u32()) // mostly unknown: refused
	default:
		p.Arch = bpfprog.ArchX86_64
	}
	p.ForeignArch, p.X32, p.Default = s.action(), s.action(), s.action()
	flags := s.byte()
	p.PassX32 = flags&1 != 0
	// Padding: up to 255 rules on numbers the data never uses, each with
	// a condition, ahead of the others: far jumps get trampolines.
	if flags&2 != 0 {
		for i := range int(s.byte()) {
			p.Rules = append(p.Rules, bpfprog.Rule{Nr: uint32(1000 + i),
				Conds: []bpfprog.Cond{bpfprog.ArgIn(i%6, uint32(i), uint32(i+1))}, Action: s.action()})
		}
	}
	for range int(s.byte() % 12) {
		r := bpfprog.Rule{Nr: s.nr(), Action: s.action()}
		for range int(s.byte() % 4) {
			c := bpfprog.Cond{Arg: int(s.byte() % 6)}
			k := s.byte()
			c.High = k&1 != 0
			if k&2 != 0 {
				c.Mask = s.word()
			}
			c.Op = bpfprog.Op(1 + int(k>>2)%3)
			n := 1 + int(k>>4)%4
			if k>>6 == 3 { // malformed now and then
				switch s.byte() % 4 {
				case 0:
					c.Arg = 6 + int(s.byte()%3)
				case 1:
					c.Op = bpfprog.Op(0)
				case 2:
					n = 0
				case 3:
					c.Op = bpfprog.AnyBits
				}
			}
			if c.Op == bpfprog.AnyBits && k>>6 != 3 {
				n = 1
			}
			for range n {
				c.Vals = append(c.Vals, s.word())
			}
			if c.Op == bpfprog.AnyBits && k>>6 != 3 && c.Vals[0] == 0 {
				c.Vals[0] = 1
			}
			r.Conds = append(r.Conds, c)
		}
		p.Rules = append(p.Rules, r)
	}
	return p
}

func genData(s *byteSource, p bpfprog.Program) bpfprog.Data {
	d := bpfprog.Data{Arch: p.Arch, Nr: s.nr()}
	switch c := s.byte(); c % 8 {
	case 6:
		d.Arch = bpfprog.ArchAArch64
		if p.Arch == bpfprog.ArchAArch64 {
			d.Arch = bpfprog.ArchX86_64
		}
	case 7:
		d.Nr = 1000 + uint32(s.byte())
	}
	for i := range d.Args {
		d.Args[i] = uint64(s.word()) | uint64(s.word())<<32
	}
	return d
}

// validProgram is Compile's documented refusals (less MaxInsns).
func validProgram(p bpfprog.Program) bool {
	if p.Arch != bpfprog.ArchX86_64 && p.Arch != bpfprog.ArchAArch64 {
		return false
	}
	for _, r := range p.Rules {
		for _, c := range r.Conds {
			switch {
			case c.Arg < 0 || c.Arg > 5, len(c.Vals) == 0:
				return false
			case c.Op == bpfprog.AnyBits && (len(c.Vals) != 1 || c.Vals[0] == 0):
				return false
			case c.Op != bpfprog.In && c.Op != bpfprog.NotIn && c.Op != bpfprog.AnyBits:
				return false
			}
		}
	}
	return true
}

// evalProgram decides d by Program's decision list, read literally.
func evalProgram(p bpfprog.Program, d bpfprog.Data) bpfprog.Action {
	if d.Arch != p.Arch {
		return p.ForeignArch
	}
	if p.Arch.HasX32() && !p.PassX32 && d.Nr&bpfprog.X32SyscallBit != 0 {
		return p.X32
	}
	for _, r := range p.Rules {
		if r.Nr != d.Nr {
			continue
		}
		holds := true
		for _, c := range r.Conds {
			holds = holds && condHolds(c, d)
		}
		if holds {
			return r.Action
		}
	}
	return p.Default
}

func condHolds(c bpfprog.Cond, d bpfprog.Data) bool {
	w := uint32(d.Args[c.Arg])
	if c.High {
		w = uint32(d.Args[c.Arg] >> 32)
	}
	if c.Op == bpfprog.AnyBits {
		return w&c.Vals[0] != 0
	}
	if c.Mask != 0 {
		w &= c.Mask
	}
	in := false
	for _, v := range c.Vals {
		in = in || w == v
	}
	if c.Op == bpfprog.In {
		return in
	}
	return !in
}
