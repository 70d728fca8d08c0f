package cliopts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/egressns"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"github.com/landjail/landjail/internal/selfbin"
	"github.com/landjail/landjail/landlock"
)

// Network modes of an --allow-domain proxy, as the enforcement report's
// "network" field and the warnings name them.
// Network is the --allow-domain mode of a run: how much of the allowlist
// the kernel enforces. The zero value, NetworkNone, is a run without
// --allow-domain. It marshals as the text the report always had
// ("proxy (airtight)", ...; "" for NetworkNone).
type Network uint8

const (
	// NetworkNone: no --allow-domain, no proxy.
	NetworkNone Network = iota
	// NetworkAirtight: the command runs in a network namespace holding
	// only loopback, where the proxy listens; nothing else is reachable.
	NetworkAirtight
	// NetworkAdvisory: no network namespace; Landlock lets the command
	// connect over TCP only to the proxy's port, but on any host.
	NetworkAdvisory
	// NetworkNotEnforced: neither a network namespace nor Landlock TCP
	// rules: the proxy variables are set, nothing stops a direct
	// connection.
	NetworkNotEnforced
	// NetworkUnreachable: no network namespace and Landlock below ABI 4,
	// so the seccomp layer refuses every IP socket: the command cannot
	// reach the proxy either (fail closed; --no-seccomp would make the
	// list NetworkNotEnforced instead).
	NetworkUnreachable
)

var networkWords = [...]string{"", "airtight", "advisory", "not enforced", "unreachable"}

// Word is the mode in one or two words ("airtight", "not enforced"; ""
// for NetworkNone).
func (n Network) Word() string {
	if int(n) < len(networkWords) {
		return networkWords[n]
	}
	return fmt.Sprintf("Network(%d)", uint8(n))
}

// String is the mode as the report and stderr say it: "proxy (WORD)",
// "" for NetworkNone.
func (n Network) String() string {
	if n == NetworkNone {
		return ""
	}
	return "proxy (" + n.Word() + ")"
}

// MarshalText is String (the report's JSON field "network").
func (n Network) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (n *Network) UnmarshalText(b []byte) error {
	for i := range networkWords {
		if Network(i).String() == string(b) {
			*n = Network(i)
			return nil
		}
	}
	return fmt.Errorf("unknown network mode %q", b)
}

// ErrAllowlistNotEnforced is returned (wrapped, with the reason) by
// AllowProxy.Decide under --strict when the allowlist would be advisory or
// not enforced at all.
var ErrAllowlistNotEnforced = errors.New("the --allow-domain list cannot be enforced airtight here")

// NetproxyBinary is the name of the proxy's own binary
// (cmd/landjail-netproxy), which serves the listener AllowProxy makes.
const NetproxyBinary = "landjail-netproxy"

// NetproxyPath, when not empty, is used instead of NetproxyBinary next
// to the executable (tests set it to a binary they built). It is checked
// and pinned the same way.
var NetproxyPath string

// NetproxySealed makes the pinned landjail-netproxy a sealed in-memory
// copy (selfbin.Binary.Sealed, ~1 ms per MB, once per process) instead of
// a descriptor of the installed file. landjail-mcp sets it: it starts a
// proxy per tool call while processes of earlier calls may still run,
// and those could write to an installed file they can reach. landjail run
// does not need it: it starts the proxy before the command.
var NetproxySealed bool

// netproxyPins holds the pinned landjail-netproxy of this process, by
// installed path: pinned once, before the first confined command starts,
// and reused by every later proxy (landjail-mcp's bash calls).
var netproxyPins struct {
	mu   sync.Mutex
	pins map[string]*selfbin.Binary
}

// pinNetproxy pins landjail-netproxy (selfbin.Open: only next to the
// running executable, never from PATH — it runs unconfined, and a
// confined command may write to a directory on PATH) unless this process
// did already.
func pinNetproxy() (*selfbin.Binary, error) {
	path := NetproxyPath
	if path == "" {
		var err error
		if path, err = selfbin.Next(NetproxyBinary); err != nil {
			return nil, fmt.Errorf("--%s: %w", flagAllowDomain, err)
		}
	}
	netproxyPins.mu.Lock()
	defer netproxyPins.mu.Unlock()
	if b := netproxyPins.pins[path]; b != nil {
		return b, nil
	}
	b, err := selfbin.Open(path)
	if err == nil && NetproxySealed {
		var sealed *selfbin.Binary
		sealed, err = b.Sealed()
		b.Close()
		b = sealed
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--%s needs the %s binary next to %s (%s; go install ./cmd/... in a checkout of landjail installs both)", flagAllowDomain, NetproxyBinary, filepath.Base(os.Args[0]), path)
	}
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagAllowDomain, err)
	}
	if netproxyPins.pins == nil {
		netproxyPins.pins = map[string]*selfbin.Binary{}
	}
	netproxyPins.pins[path] = b
	return b, nil
}

// AllowProxy is the --allow-domain proxy of one child (landjail run) or
// one bash call (landjail-mcp): the port it listens on, where it listens,
// and the landjail-netproxy process that serves that listener (the HTTP
// proxy library stays out of landjail's own binary). Use: NewAllowProxy
// before compiling the Ruleset (its port goes into
// landlock.Options.ProxyTCP, see Ports); Decide with the compiled Ruleset;
// Wire the Cmd; Serve after it started; Finish after Wait. Close releases
// everything on any path. A nil *AllowProxy (no --allow-domain) does
// nothing in every method.
type AllowProxy struct {
	allow  []string
	cpus   float64         // the run's --cpus, for the proxy's own share (NetproxyCPUsEnv)
	bin    *selfbin.Binary // landjail-netproxy, pinned
	stderr io.Writer
	port   uint16

	mu     sync.Mutex
	host   net.Listener // listener on the host's 127.0.0.1; closed when airtight
	inNS   net.Listener // made by the InNamespace hook (airtight)
	mode   Network
	reason string
	helper *osexec.Cmd
	ctl    *net.UnixConn // our end of the helper's stdin: its ready byte comes back, the listener goes over it, EOF stops it
	out    *bytes.Buffer // the helper's stdout
	done   bool
	result []Refusal

	transparent bool              // transparent egress in force (Decide; see egress.go)
	egress      *egressns.Sockets // made by the InNamespace hook when transparent

	readyDone bool  // the proxy's first message was read (Decide)
	readyErr  error // what it said, when not ready
}

// NewAllowProxy returns the proxy for o.AllowDomain, listening on the
// host's 127.0.0.1 on a port the kernel picks, or nil when the list is
// empty. The listener serves the advisory modes; when the command gets
// its own network namespace (Decide) it is closed and the same port is
// listened on inside that namespace instead. It starts the
// landjail-netproxy process (from the binary next to the executable,
// pinned by internal/selfbin the first time a process calls this), which
// checks the list and then waits for the listener (Serve); Decide waits
// until it is ready. stderr receives that process's own errors. Errors: the list's (wrapping
// allowlist.ErrBadAllowEntry; Load has checked it already), a
// landjail-netproxy missing next to the executable (fs.ErrNotExist) or
// unsafe (selfbin.ErrUnsafe), and listen(2)'s.
func (o *Options) NewAllowProxy(stderr io.Writer) (*AllowProxy, error) {
	if len(o.AllowDomain) == 0 {
		return nil, nil
	}
	if _, err := allowlist.ParseAllow(o.AllowDomain); err != nil {
		return nil, fmt.Errorf("--%s: %w", flagAllowDomain, err)
	}
	bin, err := pinNetproxy()
	if err != nil {
		return nil, err
	}
	l, err := listenTCP("127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("--%s: proxy listener: %w", flagAllowDomain, err)
	}
	a := &AllowProxy{allow: o.AllowDomain, bin: bin, stderr: stderr, port: uint16(l.Addr().(*net.TCPAddr).Port), host: l}
	if spec, err := limits.ParseFlags(o.LimitFlags()); err == nil {
		a.cpus = spec.CPUs
	}
	// Started now, before the command exists (nothing confined can have
	// written to the binary; once it runs the kernel refuses writes to
	// it, ETXTBSY), so that its start-up overlaps the Ruleset's.
	if err := a.start(); err != nil {
		l.Close()
		return nil, err
	}
	return a, nil
}

// Ports returns the proxy's port for landlock.Options.ProxyTCP (nil
// without a proxy).
func (a *AllowProxy) Ports() []uint16 {
	if a == nil {
		return nil
	}
	return []uint16{a.port}
}

// Addr is the proxy's address as the command reaches it: "127.0.0.1:PORT"
// (the host's loopback, or the loopback of the command's network
// namespace).
func (a *AllowProxy) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(a.port)))
}

// Decide chooses the mode from the compiled Ruleset and returns it with
// the reason when it is not airtight: NetworkAirtight when rs has a
// namespace view with a private network (Report().Layer "namespaces" and
// PrivateNetwork); NetworkAdvisory when Landlock enforces the proxy's
// port as the only TCP connect rule (ABI 4); NetworkUnreachable when
// Landlock cannot restrict TCP (ABI < 4) and the seccomp layer is on (it
// then refuses every IP socket: seccomp.Options.NetRestricted);
// NetworkNotEnforced otherwise (no Landlock TCP rules), with noSeccomp
// below Landlock ABI 9 (the seccomp layer is what refuses UNIX sockets
// there, and the host's pathname sockets reach the network), and without
// a private network namespace when noSeccomp (Landlock's TCP rules hook
// connect and bind only: TCP Fast Open's sendto, MPTCP, UDP and raw
// sockets need the seccomp layer). With strict,
// a mode other than NetworkAirtight is an error wrapping
// ErrAllowlistNotEnforced. It first waits (up to 10 s) for the
// landjail-netproxy process to accept the list: an entry it refuses (a
// wildcard over a public suffix), or a process that died, is an error.
// A private network namespace below ABI 4 is
// NetworkUnreachable too: the seccomp layer does not know about the
// namespace and refuses the IP socket the command would reach the proxy
// with.
func (a *AllowProxy) Decide(rs *landlock.Ruleset, noNamespaces, noSeccomp, strict bool) (mode Network, reason string, err error) {
	if a == nil {
		return NetworkNone, "", nil
	}
	a.mu.Lock()
	err = a.ready()
	a.mu.Unlock()
	if err != nil {
		return NetworkNone, "", err
	}
	rep := rs.Report()
	mode, reason = NetworkMode(rep, rs.Enforced() && containsPort(rep.ProxyTCP, a.port), noNamespaces, noSeccomp)
	a.mu.Lock()
	a.mode, a.reason = mode, reason
	a.transparent = a.transparentFor(mode, rep)
	a.mu.Unlock()
	if strict && mode != NetworkAirtight {
		return mode, reason, fmt.Errorf("%w: the allowlist would be %s: %s (--strict)", ErrAllowlistNotEnforced, mode.Word(), reason)
	}
	return mode, reason, nil
}

// NetworkMode is the --allow-domain mode, and the reason when it is not
// NetworkAirtight, for a Ruleset's report: proxyRule says Landlock
// enforces a TCP connect rule for the proxy's port. Decide uses it at run
// time and --print-rules ahead of it (the port is not known then).
func NetworkMode(rep *landlock.Report, proxyRule, noNamespaces, noSeccomp bool) (mode Network, reason string) {
	const tcpOnly = "Landlock's TCP rules cover connect(2) and bind(2) only: TCP Fast Open (sendto with MSG_FASTOPEN), MPTCP sockets, UDP and raw sockets reach any host directly"
	private := rep.Layer == landlock.LayerNamespaces && rep.PrivateNetwork
	switch {
	case rep.ABI < 4 && !noSeccomp:
		return NetworkUnreachable, fmt.Sprintf("Landlock ABI %d < 4 cannot restrict TCP, so the seccomp layer refuses every IP socket: the command cannot reach the proxy (or anything else) over the network; --no-seccomp would make the list not enforced at all", rep.ABI)
	case noSeccomp && rep.ABI < 9:
		// Only the seccomp layer refuses socket(AF_UNIX) below ABI 9,
		// and a network namespace does not hide the host's pathname
		// sockets: a local proxy's or daemon's reaches the network.
		reason = fmt.Sprintf("--no-seccomp: below Landlock ABI 9 (here %d) nothing refuses connecting to the host's pathname UNIX sockets (a local proxy's, a container runtime's), which reach the network around the proxy", rep.ABI)
		if !private {
			reason += "; and with no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + ") " + tcpOnly
		}
		return NetworkNotEnforced, reason
	case private:
		return NetworkAirtight, ""
	case proxyRule && noSeccomp:
		// The seccomp layer is what refuses the rest.
		return NetworkNotEnforced, "no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + ") and --no-seccomp: " + tcpOnly
	case proxyRule:
		return NetworkAdvisory, "no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + "): Landlock lets the command connect over TCP only to the proxy's port, but on any host, and programs that ignore the proxy variables fail instead of going through it"
	}
	why := "no usable Landlock (level " + rep.Level + ")"
	if rep.Level == landlock.LevelLandlock {
		why = fmt.Sprintf("Landlock ABI %d has no TCP rules (ABI 4, Linux 6.7)", rep.ABI)
	}
	return NetworkNotEnforced, "no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + ") and " + why + ": the command can connect anywhere directly; only programs that honour HTTP_PROXY go through the list"
}

// noNamespaceWhy says why the Ruleset has no private network namespace.
func noNamespaceWhy(rep *landlock.Report, noNamespaces bool) string {
	switch {
	case noNamespaces:
		return "--no-namespaces"
	case rep.UserNamespace:
		return "not root: the user-namespace stage cannot make the proxy's socket inside the command's network namespace"
	case rep.Layer != landlock.LayerNamespaces && rep.LayerReason != "":
		return "namespace layer unavailable: " + rep.LayerReason
	case rep.Layer != landlock.LayerNamespaces:
		return "namespace layer unavailable"
	}
	return "the view has no network namespace"
}

func containsPort(ports []uint16, p uint16) bool {
	for _, q := range ports {
		if q == p {
			return true
		}
	}
	return false
}

// Warn prints the start-up warning for a mode other than airtight on w:
// "landjail: warning: allowlist is advisory: WHY (--strict refuses)", or
// "... is not enforced at all: WHY ...".
func (a *AllowProxy) Warn(w io.Writer) {
	if a == nil {
		return
	}
	a.mu.Lock()
	mode, reason := a.mode, a.reason
	a.mu.Unlock()
	switch mode {
	case NetworkAdvisory:
		fmt.Fprintf(w, "landjail: warning: allowlist is advisory: %s (--strict refuses)\n", reason)
	case NetworkNotEnforced:
		fmt.Fprintf(w, "landjail: warning: allowlist is not enforced at all: %s (--strict refuses)\n", reason)
	case NetworkUnreachable:
		fmt.Fprintf(w, "landjail: warning: allowlist unusable, no network at all: %s\n", reason)
	}
}

// Wire prepares c for the proxy: the proxy variables in its environment
// (WithProxyEnv: they replace any the caller passed) and, when airtight,
// c.InNamespace listening on the proxy's port inside the command's
// network namespace (the host listener is closed then), and with
// transparent egress (Transparent) making its route and sockets there
// too (egress.go). Call it after Decide and after c.Env is set.
func (a *AllowProxy) Wire(c *exec.Cmd) {
	if a == nil {
		return
	}
	env := c.Env
	if env == nil {
		env = exec.DefaultEnv(c.Workspace, nil)
	}
	c.Env = WithProxyEnv(env, a.Addr())
	a.mu.Lock()
	airtight := a.mode == NetworkAirtight
	a.mu.Unlock()
	if !airtight {
		return
	}
	c.InNamespace = func() error {
		// On the spawner thread, inside the view: the socket belongs
		// to the command's network namespace. Only loopback is up there.
		l, err := listenTCP(a.Addr())
		if err != nil {
			return fmt.Errorf("--%s: proxy listener in the command's network namespace: %w", flagAllowDomain, err)
		}
		a.mu.Lock()
		if a.inNS != nil { // a second spawn with one AllowProxy: refuse
			a.mu.Unlock()
			l.Close()
			return errors.New("--allow-domain: one proxy per command")
		}
		a.inNS = l
		a.mu.Unlock()
		return a.setupEgress()
	}
	a.mu.Lock()
	if a.host != nil {
		a.host.Close()
		a.host = nil
	}
	a.mu.Unlock()
}

// start starts landjail-netproxy from the pinned binary in a session of
// its own (terminal signals do not reach it), from the calling
// goroutine's ordinary thread: its upstream connections leave from the
// host's network namespace.
func (a *AllowProxy) start() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("--%s: socketpair: %w", flagAllowDomain, err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "netproxy-control")
	defer theirs.Close()
	f := os.NewFile(uintptr(fds[0]), "netproxy-control")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("--%s: %w", flagAllowDomain, err)
	}
	cmd := osexec.Command(a.bin.Path(), a.allow...)
	cmd.Args[0] = NetproxyBinary
	cmd.Stdin = theirs
	a.out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = a.out, a.stderr
	if _, isFile := a.stderr.(*os.File); !isFile && a.stderr != nil {
		// os/exec copies into a Writer that is not a file from a
		// goroutine, through ReadFrom when it has one: a bytes.Buffer's
		// ReadFrom blocked in read(2) drops what others write meanwhile.
		// Plain Writes only append.
		cmd.Stderr = struct{ io.Writer }{a.stderr}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// --cpus bounds the proxy's own work for the command too (a process
	// of its own, outside the command's group: red team round 23,
	// R23c-4); netproxy.Config.CPUs.
	if a.cpus > 0 {
		cmd.Env = append(os.Environ(), NetproxyCPUsEnv+"="+strconv.FormatFloat(a.cpus, 'g', -1, 64))
	}
	if err := cmd.Start(); err != nil {
		c.Close()
		return fmt.Errorf("--%s: %s: %w", flagAllowDomain, NetproxyBinary, err)
	}
	a.helper, a.ctl = cmd, c.(*net.UnixConn)
	return nil
}

// NetproxyCPUsEnv names the variable that gives landjail-netproxy the
// run's --cpus (a decimal number of CPUs): netproxy.Config.CPUs.
const NetproxyCPUsEnv = "LANDJAIL_NETPROXY_CPUS"

// readyTimeout bounds how long Decide waits for landjail-netproxy to
// check its list and say it is ready.
const readyTimeout = 10 * time.Second

// ready waits for landjail-netproxy's first message: "R" when its list is
// accepted, "E" and the reason when it refused an entry (one the parser
// here accepts but the proxy does not, as a wildcard over a public
// suffix: the Public Suffix List lives in the proxy, whose HTTP stack
// landjail does not link). Later calls return the first answer.
func (a *AllowProxy) ready() error {
	if a.readyDone {
		return a.readyErr
	}
	a.readyDone = true
	a.ctl.SetReadDeadline(time.Now().Add(readyTimeout))
	defer a.ctl.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	n, err := a.ctl.Read(buf)
	switch {
	case n > 0 && buf[0] == 'R':
		return nil
	case n > 0 && buf[0] == 'E':
		a.readyErr = fmt.Errorf("--%s: %s", flagAllowDomain, buf[1:n])
	case err != nil:
		a.readyErr = fmt.Errorf("--%s: %s did not start: %w", flagAllowDomain, NetproxyBinary, err)
	default:
		a.readyErr = fmt.Errorf("--%s: %s: unexpected message %q", flagAllowDomain, NetproxyBinary, buf[:n])
	}
	return a.readyErr
}

// Serve hands landjail-netproxy the proxy's listener (the namespace one
// when airtight, else the host one) over its control socket
// (SCM_RIGHTS), and closes landjail's copy. Call it after c.Start
// succeeded. Errors: no listener to serve (an airtight Cmd whose
// hook did not run), no proxy process, and sendmsg(2)'s (the proxy died:
// EPIPE).
func (a *AllowProxy) Serve() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.inNS
	if a.mode != NetworkAirtight {
		l = a.host
	}
	if l == nil || a.helper == nil || a.done || !a.readyDone || a.readyErr != nil {
		return errors.New("--allow-domain: no proxy listener or ready process to serve it (cannot happen)")
	}
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		return fmt.Errorf("--%s: %w", flagAllowDomain, err)
	}
	defer f.Close()
	kind, fds := byte(0), []int{int(f.Fd())}
	if a.egress != nil {
		// 'T': the listener, then the DNS socket and the transparent
		// listeners (cmd/landjail-netproxy).
		kind = 'T'
		for _, e := range a.egress.Files() {
			fds = append(fds, int(e.Fd()))
		}
	}
	if _, _, err := a.ctl.WriteMsgUnix([]byte{kind}, unix.UnixRights(fds...), nil); err != nil {
		return fmt.Errorf("--%s: handing the listener to %s: %w", flagAllowDomain, NetproxyBinary, err)
	}
	// The process holds its copy of the sockets: ours go.
	l.Close()
	a.egress.Close()
	a.host, a.inNS, a.egress = nil, nil, nil
	return nil
}

// finishTimeout bounds how long Finish waits for landjail-netproxy to
// close its clients and report.
const finishTimeout = 10 * time.Second

// Finish stops the proxy (every client and tunnel ends) and returns the
// refused requests, sorted by host, port, reason. Call it after the
// command was reaped. A landjail-netproxy that does not report (it died,
// or is stuck past 10 s: then killed) is an error; the list is then
// empty. Later calls return the first result.
func (a *AllowProxy) Finish() ([]Refusal, error) {
	if a == nil {
		return nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return a.result, nil
	}
	a.done = true
	a.closeListeners()
	if a.helper == nil {
		return nil, nil
	}
	a.ctl.Close()
	waited := make(chan error, 1)
	go func() { waited <- a.helper.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(finishTimeout):
		a.helper.Process.Kill()
		<-waited
		err = fmt.Errorf("did not stop within %s (killed)", finishTimeout)
	}
	if a.readyErr != nil {
		return nil, nil // it refused its list: said already, by Decide
	}
	if err != nil {
		return nil, fmt.Errorf("--%s: %s: %w", flagAllowDomain, NetproxyBinary, err)
	}
	var rs []Refusal
	if err := json.Unmarshal(a.out.Bytes(), &rs); err != nil {
		return nil, fmt.Errorf("--%s: %s: report: %w", flagAllowDomain, NetproxyBinary, err)
	}
	if len(rs) == 0 {
		rs = nil
	}
	a.result = rs
	return rs, nil
}

// Close stops the proxy and closes its listeners. Idempotent.
func (a *AllowProxy) Close() {
	if a == nil {
		return
	}
	if _, err := a.Finish(); err != nil && a.stderr != nil {
		fmt.Fprintf(a.stderr, "landjail: %v\n", err)
	}
}

func (a *AllowProxy) closeListeners() {
	for _, l := range []net.Listener{a.host, a.inNS} {
		if l != nil {
			l.Close()
		}
	}
	a.egress.Close()
	a.host, a.inNS, a.egress = nil, nil, nil
}

// Refusal is one kind of request the proxy refused, as the enforcement
// report lists it.
type Refusal struct {
	Host   string `json:"host"` // as requested, non-printable bytes replaced by '?'
	Port   uint16 `json:"port"` // 0 when the request named none that parsed
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// FormatRefusal is the one line (no newline) printed on stderr, or put in
// a bash result, for a refusal: "proxy refused HOST:PORT N time(s) (WHY)";
// HOST alone when the port is 0.
func FormatRefusal(r Refusal) string {
	times := "times"
	if r.Count == 1 {
		times = "time"
	}
	target := r.Host // port 0: the request named no usable port (e.g. not a proxy request)
	if target == "" {
		target = "(no host)"
	}
	if r.Port != 0 {
		target = net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port)))
	}
	return fmt.Sprintf("proxy refused %s %d %s (%s)", target, r.Count, times, r.Reason)
}

// proxyEnvNames are the variables allowlist.Env sets.
var proxyEnvNames = map[string]bool{
	"HTTP_PROXY": true, "http_proxy": true, "HTTPS_PROXY": true, "https_proxy": true,
	"ALL_PROXY": true, "all_proxy": true, "NO_PROXY": true, "no_proxy": true,
}

// WithProxyEnv returns env without any proxy variable (HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY, NO_PROXY in either case) followed by
// allowlist.Env(addr): a proxy or NO_PROXY the caller passed with --env
// cannot send the command around landjail's proxy.
func WithProxyEnv(env []string, addr string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); proxyEnvNames[name] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, allowlist.Env(addr)...)
}

// Mode returns the mode Decide chose and its reason (NetworkNone, ""
// before Decide or without a proxy).
func (a *AllowProxy) Mode() (mode Network, reason string) {
	if a == nil {
		return NetworkNone, ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.mode, a.reason
}

// listenTCP listens on addr with plain TCP (Go's net.Listen uses MPTCP
// where the kernel has it, which Landlock's TCP rules do not cover; the
// proxy has no use for it).
func listenTCP(addr string) (net.Listener, error) {
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	return lc.Listen(context.Background(), "tcp4", addr)
}
