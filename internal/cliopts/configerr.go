package cliopts

import (
	"fmt"
	"strings"
)

// tomlDecodeError matches BurntSushi/toml's decoding errors, which are
// plain fmt.Errorf text (only syntax errors are a *toml.ParseError):
// `toml: line 1 (last key "strict"): incompatible types: TOML value has
// type string; destination has type boolean`.
var (
	tomlDecodeError = lazyRegexp(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): (.*)$`)
	tomlTypes       = lazyRegexp(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)
)

// configError says what is wrong with a --config file's value in the
// file's terms: `line 1: "strict" must be true or false, got a string`
// rather than the decoder's Go types ("destination has type boolean",
// "[]interface {}"). Any other error is returned as it is.
func configError(err error) error {
	m := tomlDecodeError().FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	where := fmt.Sprintf("%q", m[2])
	if m[1] != "" {
		where = "line " + m[1] + ": " + where
	}
	msg := m[3]
	if t := tomlTypes().FindStringSubmatch(msg); t != nil {
		return fmt.Errorf("%s must be %s, got %s", where, tomlWant(t[2]), tomlGot(t[1]))
	}
	if strings.HasPrefix(msg, "time: ") {
		return fmt.Errorf("%s: not a duration, e.g. \"90s\", \"10m\", \"1h30m\" (%s)", where, strings.TrimPrefix(msg, "time: "))
	}
	return fmt.Errorf("%s: %s", where, msg)
}

// tomlWant names the TOML value a destination kind takes.
func tomlWant(kind string) string {
	switch kind {
	case "bool", "boolean":
		return "true or false"
	case "slice", "array":
		return `a list (["a", "b"])`
	case "string":
		return "a string (in quotes)"
	case "integer", "int", "int64", "uint16", "uint64":
		return "an integer"
	case "float":
		return "a number"
	case "map", "struct":
		return "a table"
	}
	return "a value of another type"
}

// tomlGot names a decoded TOML value's Go type as TOML says it.
func tomlGot(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a table"
	case strings.HasPrefix(goType, "time."):
		return "a date or time"
	}
	return "a value of another type"
}
