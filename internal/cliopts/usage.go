package cliopts

import (
	"fmt"
	"strings"
)

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

// invalidValue matches urfave/cli's error for a flag value its type
// refuses: `invalid value "x" for flag -connect-tcp: strconv.ParseInt:
// parsing "x": invalid syntax` (its cause is formatted with %v, not
// wrapped, so the text is all there is).
var invalidValue = lazyRegexp(`^invalid value ("(?:[^"\\]|\\.)*") for flag -+([A-Za-z0-9][A-Za-z0-9-]*): (.*)$`)

// InvalidValue rewrites urfave/cli's error for a flag value that does not
// parse in the user's terms: `invalid value "x" for --connect-tcp: not a
// number` instead of `... for flag -connect-tcp: strconv.ParseInt:
// parsing "x": invalid syntax`. ok is false for any other error.
func InvalidValue(err error) (msg string, ok bool) {
	m := invalidValue().FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	cause := m[3]
	switch {
	case strings.Contains(cause, "time: "):
		cause = "not a duration (examples: 90s, 10m, 1h30m)"
	case strings.Contains(cause, "strconv.") && strings.HasSuffix(cause, "value out of range"):
		cause = "out of range"
	case strings.Contains(cause, "strconv.") && strings.HasSuffix(cause, "invalid syntax"):
		cause = "not a number"
	}
	opt := "--" + m[2]
	if len(m[2]) == 1 {
		opt = "-" + m[2]
	}
	return fmt.Sprintf("invalid value %s for %s: %s", m[1], opt, cause), true
}
