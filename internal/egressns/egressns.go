// Package egressns prepares a command's network namespace for
// transparent egress (landjail run --allow-domain in the airtight mode):
// it routes allowlist.SyntheticPrefix to loopback and makes the sockets
// the proxy serves there, all on the calling thread, which must be in
// that namespace (exec.Cmd.InNamespace). It links no HTTP library.
package egressns

import (
	"errors"
	"os"
)

// Sockets are the transparent-egress sockets made inside a network
// namespace: the DNS responder's UDP socket and one TCP listener per
// port. The caller owns the files and closes them.
type Sockets struct {
	DNS *os.File   // UDP, bound to allowlist.DNSAddr
	TCP []*os.File // listening on 0.0.0.0:port, in the order of the ports asked for
}

// Close closes every socket. Idempotent.
func (s *Sockets) Close() {
	if s == nil {
		return
	}
	if s.DNS != nil {
		s.DNS.Close()
	}
	for _, f := range s.TCP {
		f.Close()
	}
	s.DNS, s.TCP = nil, nil
}

// Files returns the DNS socket followed by the TCP listeners.
func (s *Sockets) Files() []*os.File {
	return append([]*os.File{s.DNS}, s.TCP...)
}

// ErrUnsupported is wrapped by Setup on systems other than Linux.
var ErrUnsupported = errors.ErrUnsupported
