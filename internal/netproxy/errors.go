package netproxy

import "errors"

var (
	// ErrBadAllowEntry is returned (wrapped, with the entry quoted) by
	// [New] and [ParseAllow] for an allowlist entry that is not a host
	// name, a "*."-prefixed wildcard, or an IP literal, optionally followed
	// by ":port" or ":*".
	ErrBadAllowEntry = errors.New("netproxy: bad allowlist entry")

	// ErrClosed is returned by [Proxy.Serve] after [Proxy.Close].
	ErrClosed = errors.New("netproxy: proxy closed")

	// ErrRefused is wrapped by the error the proxy's dialer returns when a
	// dial was attempted without a prior allowlist decision (a bug, never
	// expected), and by [Decide]'s callers' errors; see [Refusal] for the
	// reasons recorded.
	ErrRefused = errors.New("netproxy: destination refused")
)
