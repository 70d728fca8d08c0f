// Package argflags reads the flag names of a "landjail run" command line
// before its command, without parsing it: for the package initializers
// that start work before main (internal/limits/early,
// internal/prenet/early, internal/stagestart/early), which cannot wait
// for the command-line library and must read argv the same way.
package argflags

// Run calls f with the name of each flag of args (args[0] the program)
// before "--": each argument with its leading dashes and any "=VALUE"
// removed ("--print-rules" and "-print-rules=x" are "print-rules"; a
// flag's separate value is passed too, as a name no flag has). It stops
// when f returns false. It reports whether args is a "landjail run"
// (args[1] is "run"); f is not called otherwise. No allocation.
func Run(args []string, f func(name string) bool) bool {
	if len(args) < 2 || args[1] != "run" {
		return false
	}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		name := a
		for len(name) > 0 && name[0] == '-' {
			name = name[1:]
		}
		for i := 0; i < len(name); i++ {
			if name[i] == '=' {
				name = name[:i]
				break
			}
		}
		if !f(name) {
			break
		}
	}
	return true
}
