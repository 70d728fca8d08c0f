// Command landjail-netproxy serves the --allow-domain proxy of one
// landjail command (landjail run, or one bash call of landjail-mcp): an
// internal/netproxy.Proxy for the allowlist given as arguments, on the
// listening TCP socket landjail passes as file descriptor 3 (made inside
// the command's network namespace when landjail has one: the socket keeps
// that namespace, while this process dials out from the host's).
//
// It serves until its standard input reaches end of file (landjail closes
// its end once the command was reaped, and the kernel does when landjail
// dies), then closes every client and tunnel, writes the refused requests
// to standard output as one JSON array of {"host", "port", "count",
// "reason"} objects, and exits 0. It is a binary of its own so that the
// HTTP proxy library (net/http, crypto/tls and goproxy, whose package
// initialisation alone costs about a millisecond) stays out of the start
// of every "landjail run"; landjail looks for it next to its own
// executable, then in PATH.
//
// Exit codes: 0 after serving, 2 on bad arguments (an allowlist entry
// that does not parse, no socket on descriptor 3).
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/netproxy"
)

// refusal is one line of the output, as landjail's report lists it.
type refusal struct {
	Host   string `json:"host"`
	Port   uint16 `json:"port"`
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

func main() {
	// The end is landjail's to decide (end of file on stdin): signals
	// meant for the command's terminal or group do not cut the report.
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGTERM, unix.SIGPIPE)
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "landjail-netproxy: %v\n", err)
		os.Exit(2)
	}
}

func run(allow []string, stdin io.Reader, stdout io.Writer) error {
	p, err := netproxy.New(netproxy.Config{Allow: allow})
	if err != nil {
		return err
	}
	f := os.NewFile(3, "listener")
	if f == nil {
		return fmt.Errorf("no listening socket on descriptor 3")
	}
	l, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("descriptor 3: %w", err)
	}
	go p.Serve(l)
	io.Copy(io.Discard, stdin) // until landjail closes it, or dies
	p.Close()
	out := []refusal{}
	for _, r := range p.Refused() {
		out = append(out, refusal{Host: r.Host, Port: r.Port, Count: r.Count, Reason: r.Reason})
	}
	return json.NewEncoder(stdout).Encode(out)
}
