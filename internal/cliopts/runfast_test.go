package cliopts

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
)

// TestRunFastKinds: runFastKind names exactly the flags of RunFlags that
// LoadRunFast may read without the library (bool, string and repeatable
// string flags whose definitions leave the library nothing to do but
// store the value), each by all its names, with its kind; every other
// name of RunFlags, and every name of its source's switch that RunFlags
// does not define, is refused. Red with a flag's kind changed in the
// switch (a string flag read as a bool), with a name RunFlags lacks added
// to it, or with a flag made Required in RunFlags.
func TestRunFastKinds(t *testing.T) {
	defined := map[string]bool{}
	for _, f := range RunFlags() {
		var want fastKind
		plain := func(required bool, sources cli.ValueSourceChain, hooks bool, deprecated string, onlyOnce bool) bool {
			return !required && len(sources.Chain) == 0 && !hooks && deprecated == "" && !onlyOnce
		}
		switch f := f.(type) {
		case *cli.BoolFlag:
			if plain(f.Required, f.Sources, f.Action != nil || f.Validator != nil || f.Destination != nil, f.Deprecated, f.OnlyOnce) && f.Config.Count == nil {
				want = fastBool
			}
		case *cli.StringFlag:
			if plain(f.Required, f.Sources, f.Action != nil || f.Validator != nil || f.Destination != nil, f.Deprecated, f.OnlyOnce) && !f.Config.TrimSpace {
				want = fastString
			}
		case *cli.StringSliceFlag:
			if plain(f.Required, f.Sources, f.Action != nil || f.Validator != nil || f.Destination != nil, f.Deprecated, f.OnlyOnce) && !f.Config.TrimSpace {
				want = fastStrings
			}
		}
		for _, n := range f.Names() {
			defined[n] = true
			kind, names := runFastKind(n)
			assert.Equal(t, want, kind, "--%s", n)
			if want != 0 {
				assert.ElementsMatch(t, f.Names(), names, "--%s", n)
			}
		}
	}
	for _, n := range []string{"help", "h", "version", "v", "bogus", ""} {
		kind, _ := runFastKind(n)
		assert.Zero(t, kind, "--%s", n)
	}
	src, err := os.ReadFile("runfast.go")
	require.NoError(t, err)
	body := string(src)
	i := strings.Index(body, "func runFastKind(")
	require.GreaterOrEqual(t, i, 0)
	body = body[i:]
	body = body[:strings.Index(body, "\n}\n")]
	names := regexp.MustCompile(`"([a-z0-9-]+)"`).FindAllStringSubmatch(body, -1)
	require.NotEmpty(t, names)
	for _, m := range names {
		assert.True(t, defined[m[1]], "runFastKind names --%s, which RunFlags does not define", m[1])
	}
}

// TestParseRunFastRefuses: the shapes LoadRunFast leaves to the library.
func TestParseRunFastRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-no-namespaces", "--", "x"},
		{"--no-namespaces=true", "--", "x"},
		{"--no-namespaces", "--no-namespaces", "--", "x"},
		{"--workspace", "/w", "--workspace", "/w", "--", "x"},
		{"--timeout", "3s", "--", "x"},
		{"--workspace", "--", "x"},
		{"--workspace=", "--", "x"},
		{"--workspace", "-w", "--", "x"},
		{"--workspace", "/w", "x"},
		{"--workspace", "/w", "--"},
		{"--workspace"},
		{"--print-rules", "--", "x"},
		{"--config", "/c.toml", "--", "x"},
		{"--help", "--", "x"},
		{"-", "x"},
		{"x"},
		{},
	} {
		_, _, _, ok := parseRunFast(args)
		assert.False(t, ok, "%q", args)
	}
	vals, isSet, argv, ok := parseRunFast([]string{"--rw", "/a", "--rwx=/b", "--no-namespaces", "--", "--rw", "/c"})
	require.True(t, ok)
	assert.Equal(t, []string{"--rw", "/c"}, argv)
	assert.Equal(t, []string{"/a", "/b"}, vals.StringSlice("rw"))
	assert.Equal(t, []string{"/a", "/b"}, vals.StringSlice("rwx"))
	assert.True(t, vals.Bool("no-namespaces"))
	assert.Equal(t, map[string]bool{"rw": true, "rwx": true, "no-namespaces": true}, isSet)
}
