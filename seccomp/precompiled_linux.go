package seccomp

import "github.com/landjail/landjail/internal/bpfprog"

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
