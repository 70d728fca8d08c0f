package main

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/cliopts"
)

// TestLoadRunFastSameAsLibrary: for argument vectors of "landjail run",
// whatever cliopts.LoadRunFast reads must be what urfave/cli and
// cliopts.Load read from the whole command tree (the same Options, the
// same command, no error), and the vectors of the shape it is for must be
// read by it (so that the comparison is not empty): every bool, string
// and repeatable string flag of run alone, by each name, as "--NAME
// VALUE" and "--NAME=VALUE", a repeatable flag given three times, and 400
// random combinations of them; vectors it must leave to the library
// (single dash, "=" on a bool, an int or duration flag, a flag twice, a
// value that starts with "-", no "--", --config, --print-rules, help)
// must be refused. A vector of the shape is read exactly when the library
// reads it without an error. Red with the fast parser keeping only the last
// value of a repeatable flag, or taking "--NAME=false" for true.
func TestLoadRunFastSameAsLibrary(t *testing.T) {
	ws := wsDir(t)
	library := func(t *testing.T, args []string) string {
		t.Helper()
		var got string
		app := newApp(strings.NewReader(""), io.Discard, io.Discard, "", args)
		app.Commands[0].Action = func(_ context.Context, cmd *cli.Command) error {
			o, err := cliopts.Load(cmd)
			if err != nil {
				return err
			}
			got = pointers.ReplaceAllString(fmt.Sprintf("%#v\nargs %q\nprint-rules %v", *o, cmd.Args().Slice(), cmd.Bool("print-rules")), "(0x…)")
			return nil
		}
		err := app.Run(context.Background(), args)
		return fmt.Sprintf("%s\nerror %v", got, err)
	}
	fast := func(args []string) (string, bool) {
		o, argv, ok := loadRunFast(invoked(args), args)
		if !ok {
			return "", false
		}
		return pointers.ReplaceAllString(fmt.Sprintf("%#v\nargs %q\nprint-rules %v", *o, argv, false), "(0x…)") + "\nerror <nil>", true
	}

	// A value Load accepts for each flag that takes one.
	value := map[string]string{
		"workspace": ws, "home": ws, "user": "0", "net": "host", "pids": "max", "memory": "max",
		"cpus": "max", "nofile": "max", "max-file-size": "max", "preset": "go", "env": "A=1",
		"connect-tcp": "443", "bind-tcp": "8080", "allow-domain": "example.com", "learn": ws + "/learn.toml",
		"report": ws + "/report.json",
	}
	valueOf := func(name string) string {
		if v, ok := value[name]; ok {
			return v
		}
		return "/opt"
	}
	type flag struct {
		names []string
		kind  string // "bool", "string", "strings"
	}
	var flags []flag
	for _, f := range cliopts.RunFlags() {
		switch f.(type) {
		case *cli.BoolFlag:
			flags = append(flags, flag{f.Names(), "bool"})
		case *cli.StringFlag:
			flags = append(flags, flag{f.Names(), "string"})
		case *cli.StringSliceFlag:
			flags = append(flags, flag{f.Names(), "strings"})
		}
	}
	require.NotEmpty(t, flags)
	spell := func(f flag, name string, eq bool) []string {
		if f.kind == "bool" {
			return []string{"--" + name}
		}
		if eq {
			return []string{"--" + name + "=" + valueOf(f.names[0])}
		}
		return []string{"--" + name, valueOf(f.names[0])}
	}
	withCmd := func(a ...string) []string {
		return append(append([]string{"landjail", "run"}, a...), "--", "cmd", "--rw", "-x")
	}
	var mustTake [][]string
	for _, f := range flags {
		if f.names[0] == "print-rules" || f.names[0] == "config" {
			continue
		}
		for _, n := range f.names {
			mustTake = append(mustTake, withCmd(spell(f, n, false)...), withCmd(spell(f, n, true)...))
		}
		if f.kind == "strings" {
			v := valueOf(f.names[0])
			mustTake = append(mustTake, withCmd("--"+f.names[0], v, "--"+f.names[len(f.names)-1]+"="+v, "--"+f.names[0], "/c"))
		}
	}
	mustTake = append(mustTake,
		withCmd("--no-namespaces", "--workspace", ws),
		[]string{"landjail", "run", "--workspace", ws, "--", "sh", "-c", "exit 0", "--", "x"},
		// Values the library might split, trim or read as something else.
		withCmd("--ro=/a,b", "--ro", "/c d", "--deny", "*.pem", "--env", "A=B=C", "--env=B= x "),
		withCmd("--workspace="+ws+"/", "--rw", "=x", "--deny", "**/.env"),
		// Relative paths: made absolute against the working directory
		// (Load does not require them to exist).
		withCmd("--workspace", "sub", "--ro", "./a/../b", "--rw=c"),
	)
	rng := rand.New(rand.NewSource(6))
	var random [][]string
	for range 400 {
		var a []string
		used := map[string]bool{}
		for range rng.Intn(6) {
			f := flags[rng.Intn(len(flags))]
			if f.names[0] == "print-rules" || f.names[0] == "config" || (used[f.names[0]] && f.kind != "strings") {
				continue
			}
			used[f.names[0]] = true
			a = append(a, spell(f, f.names[rng.Intn(len(f.names))], rng.Intn(2) == 0)...)
		}
		random = append(random, withCmd(a...))
	}
	mustRefuse := [][]string{
		{"landjail", "run", "-no-namespaces", "--", "x"},
		{"landjail", "run", "--no-namespaces=true", "--", "x"},
		{"landjail", "run", "--no-namespaces=false", "--", "x"},
		{"landjail", "run", "--no-namespaces", "--no-namespaces", "--", "x"},
		{"landjail", "run", "--workspace", ws, "--workspace", ws, "--", "x"},
		{"landjail", "run", "--timeout", "3s", "--", "x"},
		{"landjail", "run", "--connect-tcp", "-1", "--", "x"},
		{"landjail", "run", "--env", "--", "x"},
		{"landjail", "run", "--env=", "--", "x"},
		{"landjail", "run", "--workspace", ws, "ls", "-l"},
		{"landjail", "run", "--workspace", ws, "--"},
		{"landjail", "run", "--print-rules", "--", "x"},
		{"landjail", "run", "--config", ws + "/c.toml", "--", "x"},
		{"landjail", "run", "--help", "--", "x"},
		{"landjail", "run", "--bogus", "--", "x"},
		{"landjail", "run", "-", "x"},
		{"landjail", "run", "--strict", "--best-effort", "--", "x"},
	}
	// In the shape: read by LoadRunFast exactly when the library reads it
	// without an error (an error of Load is left to the library's path).
	taken := 0
	for _, v := range append(mustTake, random...) {
		want := library(t, v)
		got, ok := fast(v)
		if strings.HasSuffix(want, "\nerror <nil>") {
			if assert.True(t, ok, "not read by LoadRunFast: %q", v) {
				assert.Equal(t, want, got, "%q", v)
				taken++
			}
		} else {
			assert.False(t, ok, "read by LoadRunFast, an error for the library: %q: %s", v, want)
		}
	}
	assert.Greater(t, taken, 300, "vectors read by LoadRunFast")
	_, ok := fast(withCmd("--workspace", "sub", "--ro", "./a/../b", "--rw=c"))
	assert.True(t, ok, "relative paths read by LoadRunFast")
	for _, v := range mustRefuse {
		_, ok := fast(v)
		assert.False(t, ok, "read by LoadRunFast: %q", v)
	}
	_ = os.Remove(ws + "/learn.toml")
}
