package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/cliopts"
)

// TestPrunedTreeSame runs argument vectors of "landjail run" through the
// whole command tree and through the tree newApp builds for "run" alone
// (what runMain uses for them), and requires the same exit code, stdout
// and stderr: the pruned tree is a start-up saving, never a second
// parser. The vectors cover help, every kind of flag error, a missing
// command, config and workspace errors, and --print-rules (which prepares
// the whole run and prints it). Red when the pruned tree's run command
// differs (checked by giving it no OnUsageError).
func TestPrunedTreeSame(t *testing.T) {
	// A vector's failed execve leaves the process in its workspace (Exec
	// changes the whole process's working directory before it, and its
	// caller exits on error): the test's own directory is put back at
	// the end, or later tests run in a removed one.
	t.Chdir(".")
	ws := wsDir(t)
	vectors := [][]string{
		{"run", "--help"},
		{"run", "-h"},
		{"run", "--no-namespaces", "--help"},
		{"run", "help"},
		{"run", "h"},
		{"run", "--workspace", ws, "h"},
		{"run", "--help=false", "--", "x"},
		{"run", "-h=true"},
		{"run"},
		{"run", "--"},
		{"run", "--workspace", ws},
		{"run", "--bogus", "--", "/bin/true"},
		{"run", "-x", "--", "/bin/true"},
		{"run", "--workspace"},
		{"run", "--pids", "many", "--workspace", ws, "--", "/bin/true"},
		{"run", "--memory", "1x", "--workspace", ws, "--", "/bin/true"},
		{"run", "--timeout", "soon", "--workspace", ws, "--", "/bin/true"},
		{"run", "--no-namespaces=maybe", "--workspace", ws, "--", "/bin/true"},
		{"run", "--net", "bogus", "--workspace", ws, "--", "/bin/true"},
		{"run", "--config", ws + "/missing.toml", "--", "/bin/true"},
		{"run", "--workspace", ws + "/missing", "--", "/bin/true"},
		{"run", "--workspace", ws, "--workspace", ws + "/missing", "--", "/bin/true"},
		{"run", "--no-namespaces", "--workspace", ws, "--", ws + "/no-such-command"},
		{"run", "--print-rules", "--no-namespaces", "--workspace", ws},
		{"run", "--print-rules", "--ro", ws, "--rw", "/nonexistent", "--workspace", ws},
	}
	for _, v := range vectors {
		t.Run(strings.Join(v, " "), func(t *testing.T) {
			args := append([]string{"landjail"}, v...)
			assert.Equal(t, "run", invoked(args))
			var out1, err1, out2, err2 bytes.Buffer
			code1 := runTreeOwnThread("", args, &out1, &err1)
			code2 := runTreeOwnThread(invoked(args), args, &out2, &err2)
			assert.Equal(t, code1, code2, "exit code")
			assert.Equal(t, out1.String(), out2.String(), "stdout")
			assert.Equal(t, err1.String(), err2.String(), "stderr")
		})
	}
	// Anything else gets the whole tree.
	for _, args := range [][]string{{"landjail"}, {"landjail", "--help"}, {"landjail", "help", "run"}, {"landjail", "resolve"}, {"landjail", "runx"}} {
		assert.Equal(t, "", invoked(args), args)
	}
}

// runTreeOwnThread is runTree on a goroutine of its own: a run that fails
// only at its execve has confined its (locked) thread by then, which the
// goroutine's end then destroys.
func runTreeOwnThread(only string, args []string, stdout, stderr *bytes.Buffer) int {
	code := make(chan int)
	go func() {
		code <- runTree(context.Background(), only, args, strings.NewReader(""), stdout, stderr)
	}()
	return <-code
}

// TestRunFlagsNamedSameOptions parses argument vectors of "landjail run"
// that succeed with every flag (the whole tree) and with the flags they
// name (cliopts.FlagsNamed, what runMain does), and requires the same
// Options from cliopts.Load, the same command and the same print-rules
// answer: every kind of flag (bool, string, repeated slice, int slice,
// duration, an alias, "=VALUE", a single dash, "=false"), a value that
// looks like a flag, flag-like words after "--", a command without "--"
// (every flag then), and a --config file. Red with FlagsNamed leaving out
// the last flag it selects (the options differ, or the flag is unknown).
func TestRunFlagsNamedSameOptions(t *testing.T) {
	ws := wsDir(t)
	cfg := ws + "/policy.toml"
	require.NoError(t, os.WriteFile(cfg, []byte("ro = [\"/opt\"]\nallow_dns = true\n"), 0o644))
	vectors := [][]string{
		{"run", "--", "/bin/true"},
		{"run", "--no-namespaces", "--workspace", ws, "--", "/bin/true", "--rw", "-h"},
		{"run", "--workspace=" + ws, "--ro", "/usr", "--ro", "/opt", "--rwx", "/srv", "--", "x"},
		{"run", "-workspace", ws, "--connect-tcp", "443", "--connect-tcp=80", "--allow-dns", "--", "x"},
		{"run", "--timeout", "3s", "--pids", "max", "--memory", "64M", "--env", "A=1", "--env", "--rw", "--", "x"},
		{"run", "--strict", "--no-seccomp=false", "--deny-secrets", "--deny", "*.pem", "--net", "host", "--", "x"},
		{"run", "--print-rules", "--no-namespaces", "--preset", "go", "--workspace", ws},
		{"run", "--config", cfg, "--ro", "/etc", "--", "x"},
		{"run", "--workspace", ws, "ls", "-l"},
		{"run", "--workspace", ws, "--", "sh", "-c", "exit 0"},
		{"run", "--env", "--", "--rw", "/x", "--", "cmd"},
		{"run", "--env=--", "--", "--rw", "/x"},
		{"run", "--no-namespaces", "--", "--rw", "/x"},
		{"run", "--ro", "--rw", "--", "x"},
		{"run", "--timeout", "--", "x"},
		{"run", "-", "x"},
		{"run", "--rwx=/x", "---rw", "/y", "--", "x"},
	}
	parse := func(t *testing.T, only string, args []string) string {
		t.Helper()
		var got string
		app := newApp(strings.NewReader(""), io.Discard, io.Discard, only, args)
		app.Commands[0].Action = func(_ context.Context, cmd *cli.Command) error {
			o, err := cliopts.Load(cmd)
			require.NoError(t, err)
			// Pointers (a preset's resolution) differ between two loads.
			got = pointers.ReplaceAllString(fmt.Sprintf("%#v\nargs %q\nprint-rules %v", *o, cmd.Args().Slice(), cmd.Bool("print-rules")), "(0x…)")
			return nil
		}
		err := app.Run(context.Background(), args)
		return fmt.Sprintf("%s\nerror %v", got, err)
	}
	for _, v := range vectors {
		t.Run(strings.Join(v, " "), func(t *testing.T) {
			args := append([]string{"landjail"}, v...)
			assert.Equal(t, parse(t, "", args), parse(t, invoked(args), args))
		})
	}
}

// pointers matches the addresses %#v prints.
var pointers = regexp.MustCompile(`\(0x[0-9a-f]+\)`)

// TestRunFlagsZeroDefaults: every flag of run reads as its type's zero
// value when not given, so that a command built with only the flags its
// arguments name (cliopts.FlagsNamed) reads the same for the others.
func TestRunFlagsZeroDefaults(t *testing.T) {
	cmd := newRunCommand()
	cmd.Action = func(_ context.Context, cmd *cli.Command) error {
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			v := reflect.ValueOf(cmd.Value(name))
			zero := !v.IsValid() || v.IsZero() || (v.Kind() == reflect.Slice && v.Len() == 0)
			assert.True(t, zero, "--%s defaults to %v", name, cmd.Value(name))
		}
		return nil
	}
	require.NoError(t, cmd.Run(context.Background(), []string{"run", "--", "x"}))
}
