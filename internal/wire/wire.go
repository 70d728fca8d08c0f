// Package wire is the compact binary encoding of what a landjail process
// hands the user-namespace stage it re-executes (internal/nsinit's Spec
// and Ahead, internal/nsview's View): both ends are the same binary, so
// no version is negotiated. Encoding/json did the same for ≈0.6 ms of
// CPU a run (the reflection caches built at the first use of each type,
// in landjail and again in the stage: round 9 of issue 25); these
// encoders and decoders are a few appends and slices.
//
// Integers are varints (encoding/binary), strings and byte slices a
// uvarint length and the bytes, lists a uvarint count and the elements,
// booleans one byte 0 or 1. A Reader fails closed: a length or count
// beyond what is left, a boolean other than 0 or 1, a varint that does
// not end, an integer out of its type's range, or bytes left over once
// the value is read (Reader.Done) all make Err non-nil, and every later
// read returns the zero value.
package wire

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrMalformed is what a Reader fails with.
var ErrMalformed = errors.New("wire: malformed encoding")

// AppendUint appends u as a uvarint.
func AppendUint(b []byte, u uint64) []byte { return binary.AppendUvarint(b, u) }

// AppendInt appends i as a varint.
func AppendInt(b []byte, i int) []byte { return binary.AppendVarint(b, int64(i)) }

// AppendBool appends 1 for true, 0 for false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendString appends s's length and s.
func AppendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// AppendBytes appends p's length and p.
func AppendBytes(b, p []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(p))), p...)
}

// AppendStrings appends the count of ss and each string.
func AppendStrings(b []byte, ss []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(ss)))
	for _, s := range ss {
		b = AppendString(b, s)
	}
	return b
}

// Reader reads what the Append functions wrote, in the same order.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b (not copied: strings are copied out of it, byte
// slices are not).
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first failure, nil when none.
func (r *Reader) Err() error { return r.err }

// Done fails the Reader when bytes are left, and returns Err.
func (r *Reader) Done() error {
	if r.err == nil && len(r.b) > 0 {
		r.fail()
	}
	return r.err
}

func (r *Reader) fail() {
	r.err, r.b = ErrMalformed, nil
}

// Uint reads a uvarint.
func (r *Reader) Uint() uint64 {
	if r.err != nil {
		return 0
	}
	u, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return u
}

// Uint32 reads a uvarint that fits 32 bits.
func (r *Reader) Uint32() uint32 {
	u := r.Uint()
	if u > math.MaxUint32 {
		r.fail()
		return 0
	}
	return uint32(u)
}

// Int reads a varint that fits an int.
func (r *Reader) Int() int {
	if r.err != nil {
		return 0
	}
	i, n := binary.Varint(r.b)
	if n <= 0 || i < math.MinInt || i > math.MaxInt {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return int(i)
}

// Bool reads one byte, 0 or 1.
func (r *Reader) Bool() bool {
	if r.err != nil {
		return false
	}
	if len(r.b) == 0 || r.b[0] > 1 {
		r.fail()
		return false
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v
}

// length reads a uvarint no larger than the bytes left divided by min
// (the smallest encoding of one element), or fails.
func (r *Reader) length(min int) int {
	u := r.Uint()
	if r.err != nil {
		return 0
	}
	if u > uint64(len(r.b)/min) {
		r.fail()
		return 0
	}
	return int(u)
}

// Bytes reads a byte slice (a subslice of the Reader's bytes; nil when
// empty).
func (r *Reader) Bytes() []byte {
	n := r.length(1)
	if r.err != nil || n == 0 {
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// String reads a string.
func (r *Reader) String() string { return string(r.Bytes()) }

// Strings reads a list of strings (nil when empty).
func (r *Reader) Strings() []string {
	n := r.length(1) // each string is at least its length's byte
	if r.err != nil || n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.String()
	}
	if r.err != nil {
		return nil
	}
	return ss
}
