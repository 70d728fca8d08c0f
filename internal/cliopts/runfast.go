package cliopts

import (
	"strings"
	"time"
)

// LoadRunFast is Load for the arguments of "landjail run" (args: after
// "run") without urfave/cli, for the one shape it reads exactly as the
// library does: flags spelt "--NAME" (a bool flag), "--NAME=VALUE" or
// "--NAME VALUE" (a string or repeatable string flag, VALUE not empty
// and not starting with "-"), each naming a flag of RunFlags, then "--" and
// the command. It returns the Options Load would return for the same
// command line, the command's argument vector, and true; or nil, nil and
// false for anything else, and the caller parses with the library, which
// then gives its own result or error: a single "-", an "=" on a bool flag,
// another kind of flag (int, duration), a flag given twice (but for
// repeatable ones), "help" or a flag not in flags, a value that starts
// with "-", the command without "--" before it, no command, --config,
// --print-rules, and an error of Load (its text is the library path's).
// The flags it reads are the ones runFastKind names, which
// TestRunFastKinds holds equal to RunFlags' bool, string and repeatable
// string flags whose definitions leave the library nothing to do but
// store the value (no Required, Sources, Action, Validator, Destination,
// Deprecated, OnlyOnce, TrimSpace or Count): RunFlags is not built.
//
// Building the library's state and parsing with it costs every run
// ≈0.1 ms of its start-up (BENCHMARKS.md, round 6); most runs are in
// this shape. TestLoadRunFastSameAsLibrary compares the two on argument
// vectors made from every flag of RunFlags.
func LoadRunFast(args []string) (*Options, []string, bool) {
	vals, isSet, argv, ok := parseRunFast(args)
	if !ok {
		return nil, nil, false
	}
	o, err := loadFrom(vals, isSet)
	if err != nil {
		return nil, nil, false
	}
	return o, argv, true
}

// fastValue is one flag's value as parseRunFast read it.
type fastValue struct {
	kind fastKind
	str  string   // fastString
	list []string // fastStrings, in the order given
}

type fastKind uint8

const (
	fastBool fastKind = iota + 1
	fastString
	fastStrings
)

// fastValues holds the flags parseRunFast read, under every name of each
// (aliases included), as the library answers a lookup by any name.
type fastValues map[string]*fastValue

func (v fastValues) Bool(name string) bool {
	f := v[name]
	return f != nil && f.kind == fastBool
}

func (v fastValues) String(name string) string {
	if f := v[name]; f != nil && f.kind == fastString {
		return f.str
	}
	return ""
}

func (v fastValues) StringSlice(name string) []string {
	if f := v[name]; f != nil && f.kind == fastStrings {
		return f.list
	}
	return nil
}

// The kinds parseRunFast refuses are never set: their lookups read zero,
// as loadFrom reads a value only for a name isSet holds.
func (fastValues) IntSlice(string) []int         { return nil }
func (fastValues) Int(string) int                { return 0 }
func (fastValues) Duration(string) time.Duration { return 0 }

// parseRunFast parses args as LoadRunFast describes: the values, the
// names set (every name of each flag given), the command's arguments.
func parseRunFast(args []string) (fastValues, map[string]bool, []string, bool) {
	vals := fastValues{}
	isSet := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if i+1 == len(args) {
				return nil, nil, nil, false // no command: the library's error
			}
			return vals, isSet, args[i+1:], true
		}
		if !strings.HasPrefix(a, "--") {
			return nil, nil, nil, false // "-NAME", "-", or the command without "--"
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		if name == flagConfig || name == "print-rules" {
			return nil, nil, nil, false
		}
		kind, names := runFastKind(name)
		if kind == 0 {
			return nil, nil, nil, false
		}
		if kind == fastBool {
			if hasValue || isSet[name] {
				return nil, nil, nil, false
			}
		} else {
			if !hasValue {
				if i+1 == len(args) {
					return nil, nil, nil, false
				}
				i++
				value = args[i]
			}
			if value == "" || strings.HasPrefix(value, "-") {
				return nil, nil, nil, false
			}
		}
		if prev := vals[name]; prev != nil {
			if kind != fastStrings {
				return nil, nil, nil, false // given twice
			}
			prev.list = append(prev.list, value) // every name shares it
			continue
		}
		v := &fastValue{kind: kind}
		switch kind {
		case fastString:
			v.str = value
		case fastStrings:
			v.list = []string{value}
		}
		for _, n := range names {
			vals[n] = v
			isSet[n] = true
		}
	}
	return nil, nil, nil, false // no "--": the library decides
}

// runFastKind is the kind of run's flag name as parseRunFast reads it,
// and every name of the flag; 0 for a name it leaves to the library.
// TestRunFastKinds compares it with RunFlags: a bool, string or
// repeatable string flag added there must be added here (the test fails
// until it is), and one whose definition gains a hook (Action, Sources,
// Required, ...) removed.
func runFastKind(name string) (fastKind, []string) {
	switch name {
	case "allow-dangerous-syscalls", "allow-dns", "allow-unix-sockets", "best-effort", "deny-secrets",
		"explain", "explain-all", "git-identity", "no-carve", "no-hardlinked-writes", "no-namespaces",
		"no-pid-namespace", "no-scope", "no-seccomp", "no-system", "no-xdev", "print-rules",
		"protect-agent-config", "self-test", "strict":
		return fastBool, []string{name}
	case "config", "cpus", "home", "learn", "max-file-size", "memory", "net", "nofile", "pids", "report",
		"user", "workspace":
		return fastString, []string{name}
	case "allow-domain", "allow-unix", "deny", "env", "preset", "read-only", "ro", "rox":
		return fastStrings, []string{name}
	case "rw", "rwx":
		return fastStrings, []string{"rw", "rwx"}
	}
	return 0, nil
}
