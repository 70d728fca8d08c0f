package cliopts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/netproxy"
	"github.com/landjail/landjail/landlock"
)

// Network modes of an --allow-domain proxy, as the enforcement report's
// "network" field and the warnings name them.
const (
	// NetworkAirtight: the command runs in a network namespace holding
	// only loopback, where the proxy listens; nothing else is reachable.
	NetworkAirtight = "proxy (airtight)"
	// NetworkAdvisory: no network namespace; Landlock lets the command
	// connect over TCP only to the proxy's port, but on any host.
	NetworkAdvisory = "proxy (advisory)"
	// NetworkNotEnforced: neither a network namespace nor Landlock TCP
	// rules: the proxy variables are set, nothing stops a direct
	// connection.
	NetworkNotEnforced = "proxy (not enforced)"
	// NetworkUnreachable: no network namespace and Landlock below ABI 4,
	// so the seccomp layer refuses every IP socket: the command cannot
	// reach the proxy either (fail closed; --no-seccomp would make the
	// list NetworkNotEnforced instead).
	NetworkUnreachable = "proxy (unreachable)"
)

// ErrAllowlistNotEnforced is returned (wrapped, with the reason) by
// AllowProxy.Decide under --strict when the allowlist would be advisory or
// not enforced at all.
var ErrAllowlistNotEnforced = errors.New("the --allow-domain list cannot be enforced airtight here")

// AllowProxy is the --allow-domain proxy of one child (landjail run) or
// one bash call (landjail-mcp): an internal/netproxy.Proxy, the port it
// listens on, and where it listens. Use: NewAllowProxy before compiling
// the Ruleset (its port goes into landlock.Options.ProxyTCP, see Ports);
// Decide with the compiled Ruleset; Wire the Cmd; Serve after Start;
// Finish after Wait. Close releases everything on any path. A nil
// *AllowProxy (no --allow-domain) does nothing in every method.
type AllowProxy struct {
	proxy *netproxy.Proxy
	port  uint16
	host  net.Listener // listener on the host's 127.0.0.1; closed when airtight

	mu     sync.Mutex
	inNS   net.Listener // made by the InNamespace hook (airtight)
	mode   string
	reason string
	served bool
	done   chan struct{}
}

// NewAllowProxy returns the proxy for o.AllowDomain, listening on the
// host's 127.0.0.1 on a port the kernel picks, or nil when the list is
// empty. The listener serves the advisory modes; when the command gets
// its own network namespace (Decide) it is closed and the same port is
// listened on inside that namespace instead. Errors: the list's
// (wrapping netproxy.ErrBadAllowEntry; Load has checked it already) and
// listen(2)'s. log receives the proxy's first refusal of each kind (nil
// discards).
func (o *Options) NewAllowProxy(log *slog.Logger) (*AllowProxy, error) {
	if len(o.AllowDomain) == 0 {
		return nil, nil
	}
	p, err := netproxy.New(netproxy.Config{Allow: o.AllowDomain, Log: log})
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagAllowDomain, err)
	}
	l, err := listenTCP("127.0.0.1:0")
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("--%s: proxy listener: %w", flagAllowDomain, err)
	}
	return &AllowProxy{proxy: p, port: uint16(l.Addr().(*net.TCPAddr).Port), host: l, done: make(chan struct{})}, nil
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
// NetworkNotEnforced otherwise (no Landlock TCP rules, --no-seccomp).
// noSeccomp adds that UDP and raw sockets are not refused. With strict,
// a mode other than NetworkAirtight is an error wrapping
// ErrAllowlistNotEnforced. A private network namespace below ABI 4 is
// NetworkUnreachable too: the seccomp layer does not know about the
// namespace and refuses the IP socket the command would reach the proxy
// with.
func (a *AllowProxy) Decide(rs *landlock.Ruleset, noNamespaces, noSeccomp, strict bool) (mode, reason string, err error) {
	if a == nil {
		return "", "", nil
	}
	rep := rs.Report()
	_, hasView := rs.View()
	switch {
	case rep.ABI < 4 && !noSeccomp:
		mode = NetworkUnreachable
		reason = fmt.Sprintf("Landlock ABI %d < 4 cannot restrict TCP, so the seccomp layer refuses every IP socket: the command cannot reach the proxy (or anything else) over the network; --no-seccomp would make the list not enforced at all", rep.ABI)
	case hasView && rep.Layer == landlock.LayerNamespaces && rep.PrivateNetwork:
		mode = NetworkAirtight
	case rs.Enforced() && containsPort(rep.ProxyTCP, a.port):
		mode = NetworkAdvisory
		reason = "no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + "): Landlock lets the command connect only to TCP port " + strconv.Itoa(int(a.port)) + ", but on any host, and programs that ignore the proxy variables fail instead of going through it"
		if noSeccomp {
			reason += "; --no-seccomp: UDP and raw sockets are not refused"
		}
	default:
		mode = NetworkNotEnforced
		why := "no usable Landlock (level " + rep.Level + ")"
		if rs.Enforced() {
			why = fmt.Sprintf("Landlock ABI %d has no TCP rules (ABI 4, Linux 6.7)", rep.ABI)
		}
		reason = "no private network namespace (" + noNamespaceWhy(rep, noNamespaces) + ") and " + why + ": the command can connect anywhere directly; only programs that honour HTTP_PROXY go through the list"
	}
	a.mu.Lock()
	a.mode, a.reason = mode, reason
	a.mu.Unlock()
	if strict && mode != NetworkAirtight {
		return mode, reason, fmt.Errorf("%w: the allowlist would be %s: %s (--strict)", ErrAllowlistNotEnforced, strings.TrimSuffix(strings.TrimPrefix(mode, "proxy ("), ")"), reason)
	}
	return mode, reason, nil
}

// noNamespaceWhy says why the Ruleset has no private network namespace.
func noNamespaceWhy(rep *landlock.Report, noNamespaces bool) string {
	switch {
	case noNamespaces:
		return "--no-namespaces"
	case rep.Layer != landlock.LayerNamespaces && rep.LayerReason != "":
		return "namespace layer unavailable: " + rep.LayerReason
	case rep.Layer != landlock.LayerNamespaces:
		return "namespace layer unavailable"
	case len(rep.BindTCP) > 0:
		return "--bind-tcp keeps the host network"
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
// network namespace (the host listener is closed then). Call it after
// Decide and after c.Env is set.
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
		return nil
	}
	if a.host != nil {
		a.host.Close()
		a.host = nil
	}
}

// Serve starts serving the proxy (on the namespace listener when
// airtight, else on the host listener) from an ordinary goroutine: its
// upstream connections leave from the host's network namespace. Call it
// after c.Start succeeded. It returns an error only when there is nothing
// to serve (an airtight Cmd whose hook did not run).
func (a *AllowProxy) Serve() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	l := a.inNS
	if a.mode != NetworkAirtight {
		l = a.host
		a.host = nil
	}
	if l == nil || a.served {
		a.mu.Unlock()
		return errors.New("--allow-domain: no proxy listener to serve (cannot happen)")
	}
	a.served = true
	a.mu.Unlock()
	go func() {
		defer close(a.done)
		_ = a.proxy.Serve(l) // ErrClosed after Close
	}()
	return nil
}

// Finish stops the proxy (every client and tunnel ends) and returns the
// refused requests, sorted. Call it after the command was reaped.
func (a *AllowProxy) Finish() []netproxy.Refusal {
	if a == nil {
		return nil
	}
	a.Close()
	return a.proxy.Refused()
}

// Close stops the proxy and closes its listeners. Idempotent.
func (a *AllowProxy) Close() {
	if a == nil {
		return
	}
	a.proxy.Close()
	a.mu.Lock()
	served := a.served
	for _, l := range []net.Listener{a.host, a.inNS} {
		if l != nil {
			l.Close()
		}
	}
	a.host = nil
	a.mu.Unlock()
	if served {
		<-a.done
	}
}

// Refusal is one kind of request the proxy refused, as the enforcement
// report lists it.
type Refusal struct {
	Host   string `json:"host"` // as requested, non-printable bytes replaced by '?'
	Port   uint16 `json:"port"` // 0 when the request named none that parsed
	Count  int    `json:"count"`
	Reason string `json:"reason"`
}

// Refusals converts the proxy's list for the report.
func Refusals(rs []netproxy.Refusal) []Refusal {
	out := make([]Refusal, len(rs))
	for i, r := range rs {
		out[i] = Refusal{Host: r.Host, Port: r.Port, Count: r.Count, Reason: r.Reason}
	}
	return out
}

// FormatRefusal is the one line (no newline) printed on stderr, or put in
// a bash result, for a refusal: "proxy refused HOST:PORT N time(s) (WHY)".
func FormatRefusal(r netproxy.Refusal) string {
	times := "times"
	if r.Count == 1 {
		times = "time"
	}
	return fmt.Sprintf("proxy refused %s %d %s (%s)", net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port))), r.Count, times, r.Reason)
}

// proxyEnvNames are the variables netproxy.Env sets.
var proxyEnvNames = map[string]bool{
	"HTTP_PROXY": true, "http_proxy": true, "HTTPS_PROXY": true, "https_proxy": true,
	"ALL_PROXY": true, "all_proxy": true, "NO_PROXY": true, "no_proxy": true,
}

// WithProxyEnv returns env without any proxy variable (HTTP_PROXY,
// HTTPS_PROXY, ALL_PROXY, NO_PROXY in either case) followed by
// netproxy.Env(addr): a proxy or NO_PROXY the caller passed with --env
// cannot send the command around landjail's proxy.
func WithProxyEnv(env []string, addr string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); proxyEnvNames[name] {
			continue
		}
		out = append(out, kv)
	}
	return append(out, netproxy.Env(addr)...)
}

// Mode returns the mode Decide chose and its reason ("", "" before
// Decide or without a proxy).
func (a *AllowProxy) Mode() (mode, reason string) {
	if a == nil {
		return "", ""
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
