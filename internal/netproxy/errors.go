package netproxy

import (
	"errors"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
)

var (
	// ErrBadAllowEntry is returned (wrapped, with the entry quoted) by
	// [New] and [allowlist.ParseAllow] for an allowlist entry that is not a host
	// name, a "*."-prefixed wildcard, or an IP literal, optionally followed
	// by ":port" or ":*".
	ErrBadAllowEntry = allowlist.ErrBadAllowEntry

	// ErrClosed is returned by [Proxy.Serve] after [Proxy.Close].
	ErrClosed = errors.New("netproxy: proxy closed")

	// ErrRefused is wrapped by [allowlist.ParseTarget] for a destination that does
	// not parse, and by the proxy's internal dialer if it is ever asked to
	// dial without a prior allowlist decision (cannot happen; fail closed).
	ErrRefused = allowlist.ErrRefused
)
