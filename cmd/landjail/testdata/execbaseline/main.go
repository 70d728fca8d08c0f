// Command execbaseline execve's its arguments and nothing else: the floor
// BenchmarkRunTrue compares "landjail run -- /bin/true" against (a Go
// binary's start-up plus one execve).
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: execbaseline /path/to/cmd [args...]")
		os.Exit(125)
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "execbaseline:", err)
	os.Exit(126)
}
