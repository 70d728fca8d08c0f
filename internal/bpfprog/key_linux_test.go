package bpfprog

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeyCoversProgram: every field Compile reads changes Key (one
// mutation per field, each from the same base), and Program, Rule and Cond
// have no field Key does not know (a new one fails here until Key encodes
// it). Shown able to fail: with Cond.High left out of Key the "cond high"
// case fails.
func TestKeyCoversProgram(t *testing.T) {
	for typ, n := range map[reflect.Type]int{
		reflect.TypeFor[Program](): 6,
		reflect.TypeFor[Rule]():    3,
		reflect.TypeFor[Cond]():    5,
	} {
		assert.Equal(t, n, typ.NumField(), "%v: a field was added or removed: extend Key and this test", typ)
	}
	base := func() Program {
		return Program{Arch: ArchX86_64, ForeignArch: KillProcess, X32: KillProcess, Default: Allow,
			Rules: []Rule{
				{Nr: 1, Action: Errno(1), Conds: []Cond{{Arg: 0, Mask: 0, Op: In, Vals: []uint32{1, 2}}}},
				{Nr: 2, Action: Errno(2)},
			}}
	}
	seen := map[string]string{base().Key(): "base"}
	for name, mutate := range map[string]func(p *Program){
		"arch":         func(p *Program) { p.Arch = ArchAArch64 },
		"foreign arch": func(p *Program) { p.ForeignArch = Errno(5) },
		"x32":          func(p *Program) { p.X32 = Errno(38) },
		"pass x32":     func(p *Program) { p.PassX32 = true },
		"default":      func(p *Program) { p.Default = Errno(1) },
		"rule nr":      func(p *Program) { p.Rules[1].Nr = 3 },
		"rule action":  func(p *Program) { p.Rules[1].Action = Errno(3) },
		"rule order":   func(p *Program) { p.Rules[0], p.Rules[1] = p.Rules[1], p.Rules[0] },
		"rules fewer":  func(p *Program) { p.Rules = p.Rules[:1] },
		"cond arg":     func(p *Program) { p.Rules[0].Conds[0].Arg = 1 },
		"cond high":    func(p *Program) { p.Rules[0].Conds[0].High = true },
		"cond mask":    func(p *Program) { p.Rules[0].Conds[0].Mask = 0xff },
		"cond op":      func(p *Program) { p.Rules[0].Conds[0].Op = NotIn },
		"cond vals":    func(p *Program) { p.Rules[0].Conds[0].Vals = []uint32{1, 3} },
		"cond vals n":  func(p *Program) { p.Rules[0].Conds[0].Vals = []uint32{1} },
		"conds more":   func(p *Program) { p.Rules[1].Conds = []Cond{{Arg: 0, Op: In, Vals: []uint32{1}}} },
		// The same values moved from one Cond or Rule to the next must not
		// read the same.
		"vals split": func(p *Program) {
			p.Rules[0].Conds = []Cond{{Arg: 0, Op: In, Vals: []uint32{1}}, {Arg: 0, Op: In, Vals: []uint32{2}}}
		},
	} {
		p := base()
		mutate(&p)
		k := p.Key()
		if prev, dup := seen[k]; dup {
			t.Errorf("%s: same Key as %s: %q", name, prev, k)
		}
		seen[k] = name
	}
}
