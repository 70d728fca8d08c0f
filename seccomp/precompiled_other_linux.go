//go:build linux && !amd64

package seccomp

// precompiledPrograms is empty here: go generate compiles amd64's table
// only (see precompiledFor).
var (
	precompiledPrograms []precompiledProgram
	precompiledFilters  []precompiledFilterEntry
)
