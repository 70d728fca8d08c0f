package cliopts

import (
	"strings"
	"time"

	"github.com/urfave/cli/v3"
)

// LoadRunFast is Load for the arguments of "landjail run" (args: after
// "run") without urfave/cli, for the one shape it reads exactly as the
// library does: flags spelt "--NAME" (a bool flag), "--NAME=VALUE" or
// "--NAME VALUE" (a string or repeatable string flag, VALUE not empty
// and not starting with "-"), each naming a flag of flags, then "--" and
// the command. It returns the Options Load would return for the same
// command line, the command's argument vector, and true; or nil, nil and
// false for anything else, and the caller parses with the library, which
// then gives its own result or error: a single "-", an "=" on a bool flag,
// another kind of flag (int, duration), a flag given twice (but for
// repeatable ones), "help" or a flag not in flags, a value that starts
// with "-", the command without "--" before it, no command, --config,
// --print-rules, and an error of Load (its text is the library path's).
// A flag whose definition makes the library do more than store the value
// (Required, Sources, Action, Validator, Destination, Deprecated,
// OnlyOnce, TrimSpace, Count) is refused too.
//
// Building the library's state and parsing with it costs every run
// ≈0.1 ms of its start-up (BENCHMARKS.md, round 6); most runs are in
// this shape. TestLoadRunFastSameAsLibrary compares the two on argument
// vectors made from every flag of RunFlags.
func LoadRunFast(flags []cli.Flag, args []string) (*Options, []string, bool) {
	vals, isSet, argv, ok := parseRunFast(flags, args)
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
func parseRunFast(flags []cli.Flag, args []string) (fastValues, map[string]bool, []string, bool) {
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
		kind, names := fastFlag(flags, name)
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

// fastFlag finds the flag of flags named name and returns the kind
// parseRunFast reads and every name of the flag; kind 0 when there is no
// such flag, or it is of another kind, or its definition makes the
// library do more than store the value. A type switch on the concrete
// types: no interface conversion, so no itab made at run time (the
// runtime's table grows at the 11th; BENCHMARKS.md, round 6).
func fastFlag(flags []cli.Flag, name string) (fastKind, []string) {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			if hasName(f.Name, f.Aliases, name) {
				if !plainFlag(f.Required, f.Sources, f.Action == nil && f.Validator == nil && f.Destination == nil, f.Deprecated, f.OnlyOnce) || f.Config.Count != nil {
					return 0, nil
				}
				return fastBool, append([]string{f.Name}, f.Aliases...)
			}
		case *cli.StringFlag:
			if hasName(f.Name, f.Aliases, name) {
				if !plainFlag(f.Required, f.Sources, f.Action == nil && f.Validator == nil && f.Destination == nil, f.Deprecated, f.OnlyOnce) || f.Config.TrimSpace {
					return 0, nil
				}
				return fastString, append([]string{f.Name}, f.Aliases...)
			}
		case *cli.StringSliceFlag:
			if hasName(f.Name, f.Aliases, name) {
				if !plainFlag(f.Required, f.Sources, f.Action == nil && f.Validator == nil && f.Destination == nil, f.Deprecated, f.OnlyOnce) || f.Config.TrimSpace {
					return 0, nil
				}
				return fastStrings, append([]string{f.Name}, f.Aliases...)
			}
		default:
			// Another kind: refused only when it is the one named.
			if flagHasName(f, name) {
				return 0, nil
			}
		}
	}
	return 0, nil
}

func hasName(n string, aliases []string, name string) bool {
	if n == name {
		return true
	}
	for _, a := range aliases {
		if a == name {
			return true
		}
	}
	return false
}

// flagHasName reports whether f answers to name (Flag.Names, an
// interface method: no conversion).
func flagHasName(f cli.Flag, name string) bool {
	for _, n := range f.Names() {
		if n == name {
			return true
		}
	}
	return false
}

// plainFlag reports whether a flag's definition leaves the library
// nothing to do but store its value.
func plainFlag(required bool, sources cli.ValueSourceChain, noHooks bool, deprecated string, onlyOnce bool) bool {
	return !required && len(sources.Chain) == 0 && noHooks && deprecated == "" && !onlyOnce
}
