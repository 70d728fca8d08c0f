package cliopts

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/urfave/cli/v3"
)

// TestFlagsNamed: which flags an argument vector names, and when every
// flag is needed instead. Red with the required and environment guards
// removed (the two rows that leave such a flag out then return true).
func TestFlagsNamed(t *testing.T) {
	base := func() []cli.Flag {
		return []cli.Flag{
			&cli.StringFlag{Name: "workspace"},
			&cli.BoolFlag{Name: "quiet"},
			&cli.StringSliceFlag{Name: "rw", Aliases: []string{"rwx"}},
			&cli.StringFlag{Name: "env"},
		}
	}
	names := func(fs []cli.Flag) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Names()[0])
		}
		return out
	}
	for _, c := range []struct {
		name  string
		flags []cli.Flag
		args  []string
		want  []string // nil with ok false
		ok    bool
	}{
		{"none", base(), []string{"--", "cmd", "--rw"}, nil, true},
		{"order of the flags", base(), []string{"--rwx=/x", "-workspace", "w", "--", "x"}, []string{"workspace", "rw"}, true},
		{"a value that looks like a flag", base(), []string{"--env", "--quiet", "--", "x"}, []string{"quiet", "env"}, true},
		{"-- as a value", base(), []string{"--env", "--", "--rw", "/x", "--", "x"}, []string{"rw", "env"}, true},
		{"-- after =", base(), []string{"--env=a", "--", "--rw"}, []string{"env"}, true},
		{"-- after a bool", base(), []string{"--quiet", "--", "--rw"}, []string{"quiet"}, true},
		{"unknown name", base(), []string{"--bogus", "--", "x"}, nil, false},
		{"a command's flag without --", base(), []string{"ls", "-l"}, nil, false},
		{"dash alone", base(), []string{"-", "x"}, nil, false},
		{"help flag", base(), []string{"--help"}, nil, false},
		{"help word", base(), []string{"help"}, nil, false},
		{"h after --", base(), []string{"--", "h"}, nil, false},
		{"required left out", append(base(), &cli.StringFlag{Name: "must", Required: true}), []string{"--quiet"}, nil, false},
		{"required named", append(base(), &cli.StringFlag{Name: "must", Required: true}), []string{"--must", "x"}, []string{"must"}, true},
		{"environment left out", append(base(), &cli.StringFlag{Name: "fromenv", Sources: cli.EnvVars("LANDJAIL_TEST_FROMENV")}), []string{"--quiet"}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := FlagsNamed(c.flags, c.args)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, names(got))
		})
	}
}
