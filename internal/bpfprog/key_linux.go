package bpfprog

import "strconv"

// Key returns a canonical text encoding of p: every field Compile reads
// (Arch, ForeignArch, X32, PassX32, Default, and each Rule's Nr, Action
// and Conds with Arg, High, Mask, Op and Vals, in order), so two Programs
// with the same Key compile to the same instructions and errors. Callers
// use it to look up a program compiled earlier (package seccomp's table
// generated at build time) instead of compiling again.
// TestKeyCoversProgram fails when a field is added to Program, Rule or
// Cond and Key is not extended.
func (p Program) Key() string {
	b := make([]byte, 0, 64+24*len(p.Rules))
	hex := func(v uint64) { b = strconv.AppendUint(b, v, 16); b = append(b, ' ') }
	hex(uint64(p.Arch))
	hex(uint64(p.ForeignArch))
	hex(uint64(p.X32))
	if p.PassX32 {
		b = append(b, "passx32 "...)
	}
	hex(uint64(p.Default))
	for _, r := range p.Rules {
		b = append(b, ';')
		hex(uint64(r.Nr))
		hex(uint64(r.Action))
		for _, c := range r.Conds {
			b = append(b, '(')
			hex(uint64(c.Arg))
			if c.High {
				b = append(b, "high "...)
			}
			hex(uint64(c.Mask))
			hex(uint64(c.Op))
			for _, v := range c.Vals {
				hex(uint64(v))
			}
			b = append(b, ')')
		}
	}
	return string(b)
}
