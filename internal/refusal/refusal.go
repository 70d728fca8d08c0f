// Package refusal is the one record of an access the sandbox refused,
// whatever layer refused it: Landlock (its audit records), the namespace
// view (a read-only mount, a mode-0000 mask, a noexec root), seccomp (a
// refused syscall), the domain proxy (a refused request) or the path checks
// of the fallback (a command's arguments and working directory).
//
// A Refusal says what was refused in the words of the policy: the path or
// host, the right, the rule that refused it, and the exact flag that would
// allow it, or that nothing does (ByDesign). --explain prints them, --report
// and the MCP bash tool carry them as data, --learn turns them into flags.
//
// The package only holds and aggregates records; it reads nothing from the
// kernel. A Set is not safe for concurrent use; a Log is.
package refusal

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Layer is the layer of the sandbox that refused an access.
type Layer uint8

// Layers. The zero value is invalid (String "layer(0)").
const (
	// Landlock refused it; the record comes from Landlock's audit records
	// (Landlock ABI 7, CAP_AUDIT_READ: root).
	Landlock Layer = iota + 1
	// View: the namespace layer's view of the file system refused it
	// before Landlock was asked (EROFS outside the writable roots, EACCES
	// on a mode-0000 mask, EACCES executing from a noexec mount).
	View
	// Seccomp: the seccomp filter refused a syscall (a socket family or
	// type, a set-ID mode, a syscall outside the sandbox's model).
	Seccomp
	// Proxy: the --allow-domain proxy refused a request.
	Proxy
	// PathCheck: the fallback's path checks refused a command's argument
	// or working directory before it started.
	PathCheck
)

var layerNames = [...]string{Landlock: "landlock", View: "view", Seccomp: "seccomp", Proxy: "proxy", PathCheck: "pathcheck"}

// String returns the layer's name: "landlock", "view", "seccomp", "proxy",
// "pathcheck", or "layer(N)" for another value.
func (l Layer) String() string {
	if int(l) < len(layerNames) && layerNames[l] != "" {
		return layerNames[l]
	}
	return "layer(" + strconv.Itoa(int(l)) + ")"
}

// MarshalText returns String's name; it fails for a value without one.
func (l Layer) MarshalText() ([]byte, error) {
	s := l.String()
	if strings.HasPrefix(s, "layer(") {
		return nil, fmt.Errorf("refusal: no layer %d", uint8(l))
	}
	return []byte(s), nil
}

// UnmarshalText parses a name MarshalText returns.
func (l *Layer) UnmarshalText(b []byte) error {
	for i, n := range layerNames {
		if n != "" && n == string(b) {
			*l = Layer(i)
			return nil
		}
	}
	return fmt.Errorf("refusal: unknown layer %q", b)
}

// Rights, the words Refusal.Right uses. Landlock records keep Landlock's
// own names (read_file, make_reg, connect_tcp, ...; several joined by ",").
const (
	RightRead    = "read"
	RightWrite   = "write"   // open for writing, truncate
	RightCreate  = "create"  // a new file, directory, node or link
	RightExecute = "execute" // execve
	RightSocket  = "socket"  // socket(2), socketpair(2)
	RightConnect = "connect" // a TCP connection or a proxied request
	RightSyscall = "syscall" // another refused syscall (Rule names it)
)

// Refusal is one distinct access a layer refused, with how often.
//
// Path is set for file accesses (absolute, as the command's view of the
// file system names it); Host and Port for network ones (Port alone for a
// Landlock TCP port). Rule says which rule refused it, in words a user can
// act on ("outside every root", "read-only view", "deny pattern
// **/.env", "seccomp inet-non-tcp: UDP socket"). Flag is the exact flag
// that would allow it ("--rw /data", "--allow-domain proxy.golang.org");
// when no flag does, Flag is empty and ByDesign is true. A record with
// neither could not be attributed to a flag (Rule says why).
//
// Noise marks accesses that runtimes and loaders make speculatively and
// handle when refused (the Go runtime's cgroup and transparent huge page
// probes, glibc's and ld.so's optional files): listed apart, or dropped
// unless asked for.
type Refusal struct {
	Layer    Layer  `json:"layer"`
	Path     string `json:"path,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     uint16 `json:"port,omitempty"`
	Right    string `json:"right"`
	Rule     string `json:"rule"`
	Flag     string `json:"flag,omitempty"`
	ByDesign bool   `json:"by_design,omitempty"`
	// Count is how many times it was refused, at least 1.
	Count int  `json:"count"`
	Noise bool `json:"noise,omitempty"`
	// Comm is the program that was refused (its comm), when known and
	// the same for every occurrence.
	Comm string `json:"comm,omitempty"`
}

// key identifies a distinct refusal: Count, Noise and Comm are not part
// of it.
func (r Refusal) key() string {
	return r.Layer.String() + "\x00" + r.Path + "\x00" + r.Host + "\x00" + strconv.Itoa(int(r.Port)) +
		"\x00" + r.Right + "\x00" + r.Rule
}

// Target is what was refused, for a message: the path, "host:port",
// "host", or "TCP port N".
func (r Refusal) Target() string {
	switch {
	case r.Path != "":
		return r.Path
	case r.Host != "" && r.Port != 0:
		return r.Host + ":" + strconv.Itoa(int(r.Port))
	case r.Host != "":
		return r.Host
	case r.Port != 0:
		return "TCP port " + strconv.Itoa(int(r.Port))
	}
	return ""
}

// Remedy is Flag, "not allowed by design" when ByDesign, or "".
func (r Refusal) Remedy() string {
	switch {
	case r.Flag != "":
		return r.Flag
	case r.ByDesign:
		return "not allowed by design"
	}
	return ""
}

// Set aggregates refusals: Add merges a record into the one with the same
// layer, path, host, port, right and rule (adding its Count), keeping the
// order in which distinct refusals first came. The zero value is empty and
// ready. Not safe for concurrent use.
type Set struct {
	list  []Refusal
	index map[string]int
}

// Add merges r (a Count below 1 counts as 1). A merged record keeps the
// first Flag, is Noise only if every occurrence was, and keeps Comm only
// if every occurrence had the same one.
func (s *Set) Add(r Refusal) {
	if r.Count < 1 {
		r.Count = 1
	}
	k := r.key()
	if s.index == nil {
		s.index = map[string]int{}
	}
	i, ok := s.index[k]
	if !ok {
		s.index[k] = len(s.list)
		s.list = append(s.list, r)
		return
	}
	x := &s.list[i]
	x.Count += r.Count
	x.Noise = x.Noise && r.Noise
	if x.Comm != r.Comm {
		x.Comm = ""
	}
	if x.Flag == "" && !x.ByDesign {
		x.Flag, x.ByDesign = r.Flag, r.ByDesign
	}
}

// Len is the number of distinct refusals.
func (s *Set) Len() int { return len(s.list) }

// List returns the distinct refusals in first-seen order (a copy).
func (s *Set) List() []Refusal { return append([]Refusal(nil), s.list...) }

// Log is a Set safe for concurrent use, for recorders running beside the
// command (the seccomp supervisor). The zero value is ready.
type Log struct {
	mu  sync.Mutex
	set Set
}

// Add merges r, as Set.Add.
func (l *Log) Add(r Refusal) {
	l.mu.Lock()
	l.set.Add(r)
	l.mu.Unlock()
}

// List returns the distinct refusals so far, as Set.List.
func (l *Log) List() []Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set.List()
}
