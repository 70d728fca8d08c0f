// Command landjail-netproxy serves the --allow-domain proxy of one
// landjail command (landjail run, or one bash call of landjail-mcp): an
// internal/netproxy.Proxy for the allowlist given as arguments.
//
// Its standard input is a UNIX stream socket to landjail. landjail starts
// it before the command; it checks its list and answers "R" (ready) or "E"
// and the reason it refused an entry (then exits 2), and landjail starts
// the command only after "R". landjail then sends one byte carrying the
// listening TCP socket (SCM_RIGHTS) once the command started: made inside the command's
// network namespace when landjail has one (the socket keeps that
// namespace, while this process dials out from the host's). It serves
// until the socket reaches end of file (landjail closes its end once the
// command was reaped, and the kernel does when landjail dies), then
// closes every client and tunnel, writes the refused requests to standard
// output as one JSON array of {"host", "port", "count", "reason"}
// objects, and exits 0; end of file before a listener came means there
// was nothing to serve ("[]").
//
// It is a binary of its own so that the HTTP proxy library (net/http,
// crypto/tls and goproxy, whose package initialisation alone costs about
// a millisecond) stays out of the start of every "landjail run". landjail
// takes it only from next to its own executable (never from PATH: it runs
// unconfined) and starts it through a descriptor it opened and checked
// (internal/selfbin).
//
// Exit codes: 0 after serving, 2 on bad arguments (an allowlist entry
// that does not parse, standard input not a socket, a message without
// exactly one listening socket).
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/netproxy"
	"github.com/landjail/landjail/internal/netproxy/allowlist"
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
	// Started from a memfd, the process would be named after the
	// descriptor's number in ps and /proc/PID/comm.
	if name, err := unix.BytePtrFromString("landjail-netpro"); err == nil { // 15 bytes: comm's limit
		unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(name)), 0, 0, 0)
	}
	ctl, err := control()
	if err == nil {
		err = run(os.Args[1:], ctl, os.Stdout)
	}
	if err != nil {
		// A refused list landjail was told about ("E") is landjail's
		// to print, once, with its own prefix.
		if !errors.Is(err, errToldLandjail) {
			fmt.Fprintf(os.Stderr, "landjail-netproxy: %v\n", err)
		}
		os.Exit(2)
	}
}

// errToldLandjail wraps run's error when it was sent to landjail as its
// "E" message already: landjail prints it, so main does not.
var errToldLandjail = errors.New("sent to landjail")

func run(allow []string, ctl *net.UnixConn, stdout io.Writer) error {
	// The run's --cpus (cliopts.NetproxyCPUsEnv): this process works
	// for the command outside its control group (R23c-4).
	cpus, _ := strconv.ParseFloat(os.Getenv("LANDJAIL_NETPROXY_CPUS"), 64)
	p, err := netproxy.New(netproxy.Config{Allow: allow, CPUs: cpus})
	if ctl != nil {
		// landjail waits for this before it starts the command.
		msg := []byte("R")
		if err != nil {
			msg = append([]byte("E"), err.Error()...)
		}
		// A failed write means landjail stopped already: the read below
		// then sees end of file.
		if _, werr := ctl.Write(msg); werr == nil && err != nil {
			return fmt.Errorf("%w (%w)", err, errToldLandjail)
		}
	}
	if err != nil {
		return err
	}
	l, egress, err := receiveListener(ctl)
	if err != nil {
		return err
	}
	if l != nil {
		go p.Serve(l)
		serveEgress(p, egress)
		io.Copy(io.Discard, ctl) // until landjail closes it, or dies
	}
	p.Close()
	out := []refusal{}
	for _, r := range p.Refused() {
		out = append(out, refusal{Host: r.Host, Port: r.Port, Count: r.Count, Reason: r.Reason})
	}
	return json.NewEncoder(stdout).Encode(out)
}

// control returns standard input as the UNIX socket landjail passes.
func control() (*net.UnixConn, error) {
	c, err := net.FileConn(os.Stdin)
	if err != nil {
		return nil, fmt.Errorf("standard input: %w", err)
	}
	u, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("standard input is not a UNIX socket")
	}
	return u, nil
}

// receiveListener reads landjail's one message: the byte 0 carrying
// exactly one descriptor, a listening TCP socket; or, with transparent
// egress, the byte 'T' carrying that listener, the DNS responder's UDP
// socket and the transparent TCP listeners (returned as egress). It
// returns nil, nil, nil when the socket reaches end of file first
// (landjail stopped before the command started).
func receiveListener(ctl *net.UnixConn) (net.Listener, []*os.File, error) {
	var b [1]byte
	// Room to see (and close) extra descriptors.
	oob := make([]byte, unix.CmsgSpace(4*(allowlist.MaxTransparentPorts+4)))
	n, oobn, flags, _, err := ctl.ReadMsgUnix(b[:], oob)
	if errors.Is(err, io.EOF) || (err == nil && n == 0 && oobn == 0) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	want := "one listening socket"
	ok := n == 1 && b[0] == 0 && len(fds) == 1
	if n == 1 && b[0] == 'T' {
		want = "a listening socket, a UDP socket and transparent listeners"
		ok = len(fds) >= 3
	}
	if !ok || flags&unix.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, nil, fmt.Errorf("control socket: a message with %d descriptors, want %s", len(fds), want)
	}
	f := os.NewFile(uintptr(fds[0]), "listener")
	defer f.Close()
	var egress []*os.File
	for _, fd := range fds[1:] {
		egress = append(egress, os.NewFile(uintptr(fd), "egress"))
	}
	l, err := net.FileListener(f)
	if err != nil {
		for _, e := range egress {
			e.Close()
		}
		return nil, nil, fmt.Errorf("control socket: %w", err)
	}
	return l, egress, nil
}

// serveEgress serves transparent egress: files[0] is the DNS responder's
// UDP socket, the rest are transparent TCP listeners. A descriptor of
// the wrong kind is closed and not served (landjail made them: cannot
// happen). It takes ownership of files.
func serveEgress(p *netproxy.Proxy, files []*os.File) {
	for i, f := range files {
		if i == 0 {
			if pc, err := net.FilePacketConn(f); err == nil {
				go p.ServeDNS(pc)
			} else {
				fmt.Fprintf(os.Stderr, "landjail-netproxy: DNS socket: %v\n", err)
			}
		} else if l, err := net.FileListener(f); err == nil {
			go p.ServeTransparent(l)
		} else {
			fmt.Fprintf(os.Stderr, "landjail-netproxy: transparent listener: %v\n", err)
		}
		f.Close()
	}
}
