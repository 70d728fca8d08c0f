package nsview

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/wire"
)

// TestViewBinary: the binary form (what the parent sends the user-namespace
// stage) decodes to what the JSON form it replaced decodes to, for the
// empty view, a full one and one with empty strings; every truncation, a
// trailing byte and a wrong tag fail with wire.ErrMalformed and leave the
// view as it was.
func TestViewBinary(t *testing.T) {
	full := New().Writable("/w", "/w2").ReadOnly("/r").Mask("/m", "/m/x").PrivateTmp().SharedMemory("/s").NoNetwork().WritableTmp()
	for name, v := range map[string]View{"empty": New(), "full": full, "blank": New().Writable("").SharedMemory("")} {
		t.Run(name, func(t *testing.T) {
			j, err := json.Marshal(v)
			require.NoError(t, err)
			var fromJSON View
			require.NoError(t, json.Unmarshal(j, &fromJSON))

			b, err := v.AppendBinary([]byte("prefix"))
			require.NoError(t, err)
			b = b[len("prefix"):]
			var fromBinary View
			require.NoError(t, fromBinary.UnmarshalBinary(b))
			assert.Equal(t, fromJSON, fromBinary)

			for n := range len(b) {
				got := full
				assert.ErrorIs(t, got.UnmarshalBinary(b[:n]), wire.ErrMalformed, "truncated to %d of %d bytes", n, len(b))
				assert.Equal(t, full, got, "a failed decode changed the view")
			}
			assert.ErrorIs(t, new(View).UnmarshalBinary(append(b, 0)), wire.ErrMalformed, "a trailing byte")
			bad := append([]byte{'S'}, b[1:]...)
			assert.ErrorIs(t, new(View).UnmarshalBinary(bad), wire.ErrMalformed, "another tag")
		})
	}
}
