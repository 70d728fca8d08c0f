package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
	ws := wsDir(t)
	vectors := [][]string{
		{"run", "--help"},
		{"run", "-h"},
		{"run", "--no-namespaces", "--help"},
		{"run", "help"},
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
