// Command outer runs a command under an outer seccomp filter that makes
// openat2 and the Landlock syscalls fail, as a container runtime's profile
// or an old kernel would, without telling the command: LANDJAIL_EMULATE is
// removed from its environment, so the test binaries it starts see a
// kernel that lacks the features rather than an emulation they know of.
// It checks that `go test ./...` passes (skips allowed) on such a kernel,
// as the README promises:
//
//	go run ./internal/kerneltest/outer -- go test ./...
//	go run ./internal/kerneltest/outer -spec all=EPERM -- go test ./...
//
// -spec takes the LANDJAIL_EMULATE syntax (default all=ENOSYS). The filter
// is installed with kerneltest.Install on every thread (no_new_privs set),
// then the command replaces this process (execve), so the filter is
// inherited by it and everything it starts and cannot be removed.
// Linux only (amd64, arm64); exit status 2 when the filter cannot be
// installed, else the command's.
package main

import (
	"flag"
	"fmt"
	"os"
	osexec "os/exec"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

func main() {
	spec := flag.String("spec", "all=ENOSYS", "features to block and their errno, in "+kerneltest.EnvEmulate+" syntax")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: outer [-spec all=ENOSYS] -- command [args...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	path, err := osexec.LookPath(flag.Arg(0))
	if err != nil {
		fmt.Fprintf(os.Stderr, "outer: %v\n", err)
		os.Exit(2)
	}
	if err := kerneltest.Install(*spec); err != nil {
		fmt.Fprintf(os.Stderr, "outer: installing %s: %v\n", *spec, err)
		os.Exit(2)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, kerneltest.EnvEmulate+"=")
	})
	err = unix.Exec(path, flag.Args(), env)
	fmt.Fprintf(os.Stderr, "outer: exec %s: %v\n", path, err)
	os.Exit(2)
}
