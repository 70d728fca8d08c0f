package cliopts

import "strings"

// notDefinedPrefix starts urfave/cli's (and package flag's) error for an
// unknown option: "flag provided but not defined: -bogus". The library
// has no error type for it, so its message is the only way to tell;
// cmd/landjail's TestUnknownOption fails if a new version words it otherwise.
const notDefinedPrefix = "flag provided but not defined: -"

// UnknownOption returns the option err says is unknown, written as
// the user would ("--bogus", "-x"), and whether err is that error.
func UnknownOption(err error) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), notDefinedPrefix)
	if !ok || name == "" {
		return "", false
	}
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name, true
	}
	return "--" + name, true
}
