// Command interleave times whole commands for .ci/bench: every round runs
// each command once, in turn (A B C A B C ...), so that all of them see
// the same machine load, and prints a Markdown table of medians with
// their spread (10th–90th percentile) and the ratio of medians to the
// first command.
//
//	go run ./.ci/interleave -runs 300 -warmup 20 'NAME=CMD ARG...' ...
//
// Commands are split on spaces (no shell, no quoting); stdin is
// /dev/null, stdout and stderr are pipes (so landjail run execve's the
// command, as in a script or container). A command that exits non-zero
// stops the measurement with its output.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	runs := flag.Int("runs", 300, "timed runs of each command")
	warmup := flag.Int("warmup", 20, "untimed runs of each command first")
	flag.Parse()
	type command struct {
		name string
		argv []string
		t    []time.Duration
	}
	var cmds []*command
	for _, a := range flag.Args() {
		name, line, ok := strings.Cut(a, "=")
		if !ok || strings.TrimSpace(line) == "" {
			fmt.Fprintf(os.Stderr, "interleave: %q: want NAME=CMD ARG...\n", a)
			os.Exit(2)
		}
		cmds = append(cmds, &command{name: name, argv: strings.Fields(line)})
	}
	if len(cmds) == 0 {
		fmt.Fprintln(os.Stderr, "interleave: no command")
		os.Exit(2)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		fmt.Fprintln(os.Stderr, "interleave:", err)
		os.Exit(1)
	}
	run := func(c *command) time.Duration {
		cmd := exec.Command(c.argv[0], c.argv[1:]...)
		var out bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, &out, &out
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			fmt.Fprintf(os.Stderr, "interleave: %s: %v\n%s", c.name, err, out.Bytes())
			os.Exit(1)
		}
		return d
	}
	for i := 0; i < *warmup; i++ {
		for _, c := range cmds {
			run(c)
		}
	}
	for i := 0; i < *runs; i++ {
		for _, c := range cmds {
			c.t = append(c.t, run(c))
		}
	}
	pct := func(t []time.Duration, p int) float64 {
		return float64(t[(len(t)-1)*p/100].Microseconds()) / 1000
	}
	fmt.Println("| Command | Median [ms] | p10–p90 [ms] | × first |")
	fmt.Println("|:---|---:|---:|---:|")
	var base float64
	for i, c := range cmds {
		slices.Sort(c.t)
		med := pct(c.t, 50)
		if i == 0 {
			base = med
		}
		fmt.Printf("| %s | %.2f | %.2f–%.2f | %.2f |\n", c.name, med, pct(c.t, 10), pct(c.t, 90), med/base)
	}
}
