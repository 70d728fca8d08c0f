package cliopts

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// FlagsNamed returns the flags of flags that args name, in their order,
// and true; or nil and false when args may need more than those. args
// are a command's arguments after its name: every argument that starts
// with "-" must be "--" (the end of the flags) or name one of flags, as
// "-NAME", "--NAME" or with "=VALUE"; any other name, "-" alone, and
// "help" or "h" anywhere, with or without dashes (help lists every flag,
// and urfave/cli shows a command's help for "CMD help" too) return false.
//
// Every argument is looked at up to the first "--" that cannot be a flag's
// value (the argument before it is not a flag that takes one, spelt
// without "="): where "--" may be a value, the scan goes on.
//
// A command given only the flags its arguments name parses them as it
// would with all of them: urfave/cli recognises a flag only in an
// argument naming it, and every argument that could name one is looked
// at here, values included (a value that looks like a flag name only
// adds a flag). A flag left out must not act unnamed: false when one is
// required or has environment variables; and the caller must read an
// unset flag's value only through IsSet (a lookup of a flag left out
// returns the zero value, not its default: run's flags have none,
// TestRunFlagsZeroDefaults). Building the library's state for 80 flags costs every
// "landjail run" ≈0.2 ms (BENCHMARKS.md, round 4); most runs name two or
// three. The caller falls back to every flag on false.
func FlagsNamed(flags []cli.Flag, args []string) ([]cli.Flag, bool) {
	for _, a := range args {
		if name := flagName(a); name == "help" || name == "h" {
			return nil, false // "run help", "run -h", "run --help=true"...
		}
	}
	byName := make(map[string]int, len(flags))
	for i, f := range flags {
		for _, n := range f.Names() {
			byName[n] = i
		}
	}
	named := make([]bool, len(flags))
	valueNext := false // the argument before may be a flag whose value this is
	for _, a := range args {
		if a == "--" && !valueNext {
			break
		}
		valueNext = false
		if a == "--" || !strings.HasPrefix(a, "-") {
			continue // a value
		}
		i, ok := byName[flagName(a)]
		if !ok {
			return nil, false // the library's error, from every flag
		}
		named[i] = true
		if d, ok := flags[i].(cli.DocGenerationFlag); !strings.Contains(a, "=") && (!ok || d.TakesValue()) {
			valueNext = true
		}
	}
	var out []cli.Flag
	for i, f := range flags {
		if named[i] {
			out = append(out, f)
			continue
		}
		// A flag left out must be one the library would not act on
		// unnamed: not required, not read from the environment.
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			return nil, false
		}
		if d, ok := f.(cli.DocGenerationFlag); ok && len(d.GetEnvVars()) > 0 {
			return nil, false
		}
	}
	return out, true
}

// flagName is the flag name an argument spells ("--NAME=VALUE", "-NAME"),
// or the argument without its leading dashes.
func flagName(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	return name
}
