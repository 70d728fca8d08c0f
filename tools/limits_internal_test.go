package tools

import (
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// endless is a reader that never ends, counting what it handed out.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestReadAllCappedBoundsTheRead: a reader whose size said 0 (a FIFO, a
// /proc file, a file that grew after fstat) is read only up to the cap
// plus one byte, then refused.
func TestReadAllCappedBoundsTheRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int64
		r       io.Reader
		limit   int64
		wantErr bool
	}{
		{"endless-size-0", 0, &endless{}, 1 << 20, true},
		{"size-over-cap-not-read", 1 << 40, &endless{}, 1 << 20, true},
		{"exactly-cap", 4, io.LimitReader(&endless{}, 4), 4, false},
		{"one-past-cap", 4, io.LimitReader(&endless{}, 5), 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := readAllCapped(tc.r, tc.size, tc.limit, "f")
			if !tc.wantErr {
				assert.NoError(t, err)
				assert.Len(t, data, int(tc.limit))
				return
			}
			assert.ErrorIs(t, err, ErrFileTooLarge)
			var pe interface{ Unwrap() error }
			assert.True(t, errors.As(err, &pe))
			if e, ok := tc.r.(*endless); ok {
				if tc.size > tc.limit {
					assert.Zero(t, e.n, "refused before any read")
				} else {
					assert.LessOrEqual(t, e.n, tc.limit+1+512, "read at most the cap and a buffer's slack")
				}
			}
		})
	}
}

// TestCallersMatchDefinitions: every defined tool has a caller and every
// caller a definition (Call would otherwise refuse a listed tool, or run
// one no client is told about).
func TestCallersMatchDefinitions(t *testing.T) {
	var defined, called []string
	for _, d := range definitions {
		defined = append(defined, d.Name)
	}
	for name := range callers {
		called = append(called, name)
	}
	assert.ElementsMatch(t, defined, called)
}
