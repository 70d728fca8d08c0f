package seccomp

import (
	"sync"

	"github.com/landjail/landjail/internal/bpfprog"
)

//go:generate go test -run TestPrecompiledPrograms -update-precompiled .

// precompiledProgram is one entry of precompiledPrograms: a compiled
// program and the bpfprog.Program.Key it was compiled from.
type precompiledProgram struct {
	key  string
	prog []sockFilter
}

// precompiledFor returns the program compiled at build time for p, or nil
// when the table has none. Compiling costs about 0.1 ms per program here
// (two per run: the brokered program and the plain one), a fifth of the
// CPU landjail spends before the execve of an unsupervised run; the table
// (zprecompiled_linux_amd64.go, go generate) holds the programs of the
// option sets every default run uses (precompiledOptions, each Landlock
// ABI). The entry is found by the whole Key, never a hash of it, so only
// a program that compiles to the same instructions is ever returned:
// TestPrecompiledPrograms regenerates the table and fails on any
// difference. The slice is shared: read only.
func precompiledFor(p bpfprog.Program) []sockFilter {
	key := p.Key()
	for i := range precompiledPrograms {
		if precompiledPrograms[i].key == key {
			return precompiledPrograms[i].prog
		}
	}
	return nil
}

// precompiledOptions are the option sets whose programs go generate
// compiles into the table: the defaults of landjail run in each mode
// (network restricted, or --net host; System V IPC refused without the
// namespace layer) for every Landlock ABI up to maxPrecompiledABI. Other
// options compile at run time, as before.
func precompiledOptions() []Options {
	var out []Options
	for abi := 0; abi <= maxPrecompiledABI; abi++ {
		for _, net := range []bool{true, false} {
			for _, ipc := range []bool{true, false} {
				out = append(out, Options{LandlockABI: abi, NetRestricted: net, DenySysVIPC: ipc})
			}
		}
	}
	return out
}

// maxPrecompiledABI is the highest Landlock ABI precompiledOptions covers:
// the rules change at ABI 1, 4, 6 and 9 (landlockABIUnixSockets); a
// kernel with a higher ABI gets the same rules as 9 and so the same Key.
const maxPrecompiledABI = landlockABIUnixSockets

// precompiledFilterEntry is one entry of precompiledFilters: what build
// makes for opt on amd64, by index into precompiledPrograms.
type precompiledFilterEntry struct {
	opt                                 Options
	prog, plain                         int
	brokered, supervised, plainListener bool
}

// precompiledFilter returns the Filter build makes for opt, from the
// table, without making its rules (Rules makes them when asked), or nil
// when opt is not in precompiledFilters (named UNIX sockets, bind ports,
// Explain, another architecture, a Landlock ABI above
// maxPrecompiledABI). TestPrecompiledPrograms checks every entry against
// buildRules.
func precompiledFilter(opt Options, tg bpfprog.Arch) *Filter {
	if tg != bpfprog.ArchX86_64 || len(opt.BindTCP) > 0 || len(opt.AllowUnix) > 0 {
		return nil
	}
	for i := range precompiledFilters {
		e := &precompiledFilters[i]
		if !sameScalarOptions(e.opt, opt) {
			continue
		}
		f := &Filter{
			prog:     precompiledPrograms[e.prog].prog,
			brokered: e.brokered, supervised: e.supervised, plainListener: e.plainListener,
			lazyRules: sync.OnceValue(func() []Rule {
				var out []Rule
				for _, r := range rulesFor(opt, tg.String(), tg.HasX32()) {
					out = append(out, r.Rule)
				}
				return out
			}),
		}
		plain := precompiledPrograms[e.plain].prog
		f.plain = func() ([]sockFilter, error) { return plain, nil }
		f.finishSupervised(opt)
		return f
	}
	return nil
}

// sameScalarOptions reports whether a and b agree on every Options field
// but the two lists (BindTCP, AllowUnix), which precompiledFilter requires
// empty. TestPrecompiledPrograms fails when a field is added to Options
// and not compared here.
func sameScalarOptions(a, b Options) bool {
	return a.LandlockABI == b.LandlockABI && a.AllowUnixSockets == b.AllowUnixSockets &&
		a.NetRestricted == b.NetRestricted && a.AllowDNS == b.AllowDNS &&
		a.UDPPrivateNetwork == b.UDPPrivateNetwork && a.AllowDangerous == b.AllowDangerous &&
		a.DenySysVIPC == b.DenySysVIPC && a.Explain == b.Explain && a.ExplainReads == b.ExplainReads
}
