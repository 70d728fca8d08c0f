package denials

import "errors"

// Sentinel errors of this package; match them with errors.Is.
var (
	// ErrUnavailable: Landlock audit records cannot be collected here (not
	// root / no CAP_AUDIT_READ or CAP_AUDIT_CONTROL, kernel without audit,
	// Landlock ABI < 7, or audit locked off). The wrapping error says why.
	ErrUnavailable = errors.New("denials: Landlock audit records unavailable")
	// ErrMalformed: a record's text is not "audit(SEC.MSEC:SERIAL): key=value ...".
	ErrMalformed = errors.New("denials: malformed audit record")
	// ErrTruncated: Stop's denials are incomplete because more records
	// arrived than a Collector keeps (the kernel's own losses show as ENOBUFS).
	ErrTruncated = errors.New("denials: too many audit records, some not kept")
	// ErrStopped: Stop was called twice.
	ErrStopped = errors.New("denials: collector already stopped")
)
