package wire

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func encodeAll() []byte {
	b := AppendUint(nil, math.MaxUint32)
	b = AppendInt(b, -1)
	b = AppendInt(b, math.MaxInt)
	b = AppendBool(b, true)
	b = AppendBool(b, false)
	b = AppendString(b, "a\x00b")
	b = AppendBytes(b, []byte{1, 2, 3})
	b = AppendStrings(b, []string{"", "x", "yz"})
	return AppendStrings(b, nil)
}

// TestRoundTrip: every kind read back as written, in order, and nothing
// left.
func TestRoundTrip(t *testing.T) {
	r := NewReader(encodeAll())
	assert.Equal(t, uint32(math.MaxUint32), r.Uint32())
	assert.Equal(t, -1, r.Int())
	assert.Equal(t, math.MaxInt, r.Int())
	assert.True(t, r.Bool())
	assert.False(t, r.Bool())
	assert.Equal(t, "a\x00b", r.String())
	assert.Equal(t, []byte{1, 2, 3}, r.Bytes())
	assert.Equal(t, []string{"", "x", "yz"}, r.Strings())
	assert.Nil(t, r.Strings())
	require.NoError(t, r.Done())
}

// TestMalformed: every truncation of a valid encoding, a trailing byte,
// a boolean other than 0 or 1, a length or count beyond the bytes left,
// a 33-bit Uint32 and a varint that does not end fail with ErrMalformed,
// and reads after a failure return zero values.
func TestMalformed(t *testing.T) {
	read := func(b []byte) error {
		r := NewReader(b)
		r.Uint32()
		r.Int()
		r.Int()
		r.Bool()
		r.Bool()
		_ = r.String()
		r.Bytes()
		r.Strings()
		r.Strings()
		return r.Done()
	}
	full := encodeAll()
	require.NoError(t, read(full))
	for n := range len(full) {
		assert.ErrorIs(t, read(full[:n]), ErrMalformed, "truncated to %d of %d bytes", n, len(full))
	}
	assert.ErrorIs(t, read(append(full, 0)), ErrMalformed, "a trailing byte")

	r := NewReader([]byte{2})
	assert.False(t, r.Bool())
	assert.ErrorIs(t, r.Err(), ErrMalformed, "a boolean of 2")
	assert.Equal(t, "", r.String(), "a read after the failure")

	assert.ErrorIs(t, func() error { r := NewReader(AppendUint(nil, 4)); r.Bytes(); return r.Err() }(), ErrMalformed, "a length beyond the end")
	assert.ErrorIs(t, func() error { r := NewReader(AppendUint(nil, 1<<40)); r.Strings(); return r.Err() }(), ErrMalformed, "a count beyond the end")
	assert.ErrorIs(t, func() error { r := NewReader(AppendUint(nil, 1<<32)); r.Uint32(); return r.Err() }(), ErrMalformed, "33 bits")
	assert.ErrorIs(t, func() error { r := NewReader([]byte{0x80, 0x80}); r.Uint(); return r.Err() }(), ErrMalformed, "a varint that does not end")
	assert.ErrorIs(t, func() error { r := NewReader([]byte{0x80}); r.Int(); return r.Err() }(), ErrMalformed, "a varint that does not end")
}
