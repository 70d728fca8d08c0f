package allowlist

import "errors"

var (
	// ErrBadAllowEntry is returned (wrapped, with the entry quoted) by
	// [ParseAllow] for an allowlist entry that is not a host name, a
	// "*."-prefixed wildcard, or an IP literal, optionally followed by
	// ":port" or ":*".
	ErrBadAllowEntry = errors.New("netproxy: bad allowlist entry")

	// ErrRefused is wrapped by [ParseTarget] for a destination that does
	// not parse.
	ErrRefused = errors.New("netproxy: destination refused")
)
