// Package denials collects the accesses Landlock denied to a confined child
// from the kernel's audit records, for `landjail run --explain/--report`.
//
// Source: Documentation/admin-guide/LSM/landlock.rst (Linux 6.15+, Landlock
// ABI 7). A denied access produces an AUDIT_LANDLOCK_ACCESS (1423) record
//
//	audit(1729738800.268:30): domain=1a6fdc66f blockers=fs.refer path="/usr/bin" dev="vda2" ino=351
//
// and, in the same event the first time its domain denies something, an
// AUDIT_LANDLOCK_DOMAIN (1424) record
//
//	audit(1729738800.268:30): domain=1a6fdc66f status=allocated mode=enforcing pid=286 uid=0 exe="/root/sandboxer" comm="sh"
//
// naming the process that called landlock_restrict_self(2); when the domain
// is freed a "status=deallocated denials=N" record follows. Denials after
// execve(2) are only logged when the domain was created with
// LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON.
//
// The parsing (ParseRecord, Dedup, Blocker tables) is pure and kernel-free;
// the Collector (Linux only) reads the records from the audit netlink
// multicast group AUDIT_NLGRP_READLOG.
package denials

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Audit record types (include/uapi/linux/audit.h).
const (
	// TypeLandlockAccess is AUDIT_LANDLOCK_ACCESS: one denied access.
	TypeLandlockAccess = 1423
	// TypeLandlockDomain is AUDIT_LANDLOCK_DOMAIN: a domain's allocation or
	// deallocation.
	TypeLandlockDomain = 1424
)

// Record is one parsed audit record.
type Record struct {
	Type   uint16            // audit record type, e.g. TypeLandlockAccess
	Serial uint64            // event serial: records of one event share it
	Time   string            // "SEC.MSEC" as printed by the kernel
	Fields map[string]string // values unquoted and hex-decoded
	Order  []string          // field names in the order they appeared
	Raw    string            // the record's text as received
}

// untrusted lists the fields the kernel writes with
// audit_log_untrustedstring/audit_log_d_path: quoted when printable without
// spaces or quotes, else as upper-case hex of the raw bytes, unquoted.
var untrusted = map[string]bool{
	"path": true, "name": true, "exe": true, "comm": true,
	"ocomm": true, "oexe": true, "cwd": true, "dev": true,
}

// ParseRecord parses the text of one audit record of type typ as the
// kernel sends it on the audit netlink socket ("audit(SEC.MSEC:SERIAL): "
// followed by space-separated key=value pairs). Values in double quotes are
// unquoted; unquoted values of the fields the kernel hex-encodes (path,
// name, exe, comm, ocomm, dev, cwd) are hex-decoded when they are valid
// hex, so a path with a space or a quote in it comes back verbatim. A
// trailing NUL is ignored. It returns an error wrapping ErrMalformed when
// the header is missing or a pair has no "=". An audit record is never
// split over netlink messages (the kernel caps one at MAX_AUDIT_MESSAGE_LENGTH
// = 8970 bytes and sends it in one skb), so one message is one record.
func ParseRecord(typ uint16, text string) (Record, error) {
	text = strings.TrimRight(text, "\x00\n")
	r := Record{Type: typ, Fields: map[string]string{}, Raw: text}
	if !strings.HasPrefix(text, "audit(") {
		return r, fmt.Errorf("%w: no audit( header: %.60q", ErrMalformed, text)
	}
	end := strings.Index(text, "): ")
	if end < 0 {
		// a record with no fields
		if !strings.HasSuffix(text, "):") {
			return r, fmt.Errorf("%w: unterminated header: %.60q", ErrMalformed, text)
		}
		end = len(text) - 2
	}
	stamp := text[len("audit("):end]
	ts, serial, ok := strings.Cut(stamp, ":")
	if !ok {
		return r, fmt.Errorf("%w: header %q has no serial", ErrMalformed, stamp)
	}
	n, err := strconv.ParseUint(serial, 10, 64)
	if err != nil {
		return r, fmt.Errorf("%w: serial %q: %v", ErrMalformed, serial, err)
	}
	r.Time, r.Serial = ts, n
	rest := ""
	if end+3 <= len(text) {
		rest = text[end+3:]
	}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			break
		}
		eq := strings.IndexByte(rest, '=')
		sp := strings.IndexByte(rest, ' ')
		if eq < 0 || (sp >= 0 && sp < eq) {
			return r, fmt.Errorf("%w: field without '=' in %.60q", ErrMalformed, rest)
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			close := strings.IndexByte(rest[1:], '"')
			if close < 0 {
				return r, fmt.Errorf("%w: unterminated quote in field %q", ErrMalformed, key)
			}
			val, rest = rest[1:1+close], rest[2+close:]
		} else {
			if sp := strings.IndexByte(rest, ' '); sp >= 0 {
				val, rest = rest[:sp], rest[sp:]
			} else {
				val, rest = rest, ""
			}
			if untrusted[key] && val != "(null)" && val != "?" {
				if b, err := hex.DecodeString(val); err == nil && len(val) > 0 {
					val = string(b)
				}
			}
		}
		if _, dup := r.Fields[key]; !dup {
			r.Order = append(r.Order, key)
		}
		r.Fields[key] = val
	}
	return r, nil
}
