package nsinit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/wire"
)

func fullSpec() *Spec {
	view := nsview.New().Writable("/w").ReadOnly("/r").Mask("/m").PrivateTmp().SharedMemory("/s").NoNetwork()
	return &Spec{
		Path: "/bin/true", Argv: []string{"true", "", "a b"}, Env: []string{"A=1", "B="}, Dir: "/w",
		Setctty: true, Ctty: 7, NFiles: 5, Passed: true,
		LandlockFD: -1, LandlockFlags: 1 << 31, ExeFD: 9, KeepFD: 10,
		Seccomp: []byte{1, 2, 3, 4, 5, 6, 7, 8}, SeccompListener: true,
		View: &view, TmpAccess: 1<<63 | 5, Linger: true,
		Rlimits: []Rlimit{{Resource: 1, Cur: 1 << 20, Max: 1 << 20}, {Resource: 7, Cur: 64, Max: 1<<64 - 1}},
	}
}

// TestSpecBinary: a spec's binary form (the wire to the stage) decodes to
// what its JSON form (the wire before) decoded to, with and without a
// view, every field set and none; every truncation, a trailing byte and
// another tag fail with wire.ErrMalformed and leave the spec as it was.
func TestSpecBinary(t *testing.T) {
	noView := fullSpec()
	noView.View = nil
	for name, sp := range map[string]*Spec{"full": fullSpec(), "no view": noView, "zero": {}} {
		t.Run(name, func(t *testing.T) {
			j, err := json.Marshal(sp)
			require.NoError(t, err)
			var fromJSON Spec
			require.NoError(t, json.Unmarshal(j, &fromJSON))

			b, err := sp.AppendBinary(nil)
			require.NoError(t, err)
			var fromBinary Spec
			require.NoError(t, fromBinary.UnmarshalBinary(b))
			assert.Equal(t, fromJSON, fromBinary)

			for n := range len(b) {
				got := *noView
				assert.ErrorIs(t, got.UnmarshalBinary(b[:n]), wire.ErrMalformed, "truncated to %d of %d bytes", n, len(b))
				assert.Equal(t, *noView, got, "a failed decode changed the spec")
			}
			assert.ErrorIs(t, new(Spec).UnmarshalBinary(append(b, 0)), wire.ErrMalformed, "a trailing byte")
			assert.ErrorIs(t, new(Spec).UnmarshalBinary(append([]byte{aheadTag}, b[1:]...)), wire.ErrMalformed, "another tag")
		})
	}
}

// TestAheadBinary: the frame sent ahead round-trips, the view in it
// included; truncations and trailing bytes fail.
func TestAheadBinary(t *testing.T) {
	view := nsview.New().Writable("/w").PrivateTmp().NoNetwork()
	vb, err := view.AppendBinary(nil)
	require.NoError(t, err)
	for _, a := range []Ahead{{View: vb, Mounts: []string{"1 2 0:1 / / rw - ext4 /dev/x rw", ""}, MountMax: 100000}, {View: vb}} {
		b, err := a.AppendBinary(nil)
		require.NoError(t, err)
		var got Ahead
		require.NoError(t, got.UnmarshalBinary(b))
		assert.Equal(t, a, got)
		var v nsview.View
		require.NoError(t, v.UnmarshalBinary(got.View))
		assert.Equal(t, view, v)
		for n := range len(b) {
			assert.ErrorIs(t, new(Ahead).UnmarshalBinary(b[:n]), wire.ErrMalformed, "truncated to %d of %d bytes", n, len(b))
		}
		assert.ErrorIs(t, new(Ahead).UnmarshalBinary(append(b, 0)), wire.ErrMalformed, "a trailing byte")
	}
}

// TestStatusLines: the lines the stage writes without encoding/json are
// byte for byte what json.Encoder wrote, and ParseStatus and ParseExit
// read them, and anything else encoding/json reads, as json.Unmarshal
// does (a failed stage's line, other spellings, garbage).
func TestStatusLines(t *testing.T) {
	enc := func(v any) []byte {
		var b bytes.Buffer
		require.NoError(t, json.NewEncoder(&b).Encode(v))
		return b.Bytes()
	}
	for _, l := range []int{0, 1, 3, 99, 123456789} {
		assert.Equal(t, string(enc(Status{Listener: l})), string(statusLine(l)))
		got, err := ParseStatus(statusLine(l))
		require.NoError(t, err)
		assert.Equal(t, Status{Listener: l}, got)
	}
	for _, c := range []int{0, 1, 125, 137, 255} {
		assert.Equal(t, string(enc(Exit{Code: c})), string(exitLine(c)))
		got, err := ParseExit(exitLine(c))
		require.NoError(t, err)
		assert.Equal(t, Exit{Code: c}, got)
	}
	for _, line := range []string{
		`{"errno":2,"op":"fork/exec","msg":"no such file"}` + "\n",
		`{"listener":-3}`, `{"listener":03}`, `{"listener":+3}`, `{ "listener":3}`, `{"listener":3,"errno":5}`,
		`{"listener":1234567890}`, `{"code":-1}`, `{"code":300}`, `{}`, `{"code":1}x`, `garbage`, ``,
	} {
		var want Status
		wantErr := json.Unmarshal([]byte(line), &want)
		got, err := ParseStatus([]byte(line))
		assert.Equal(t, wantErr == nil, err == nil, "status %q: %v", line, err)
		assert.Equal(t, want, got, "status %q", line)
		var wantX Exit
		wantErr = json.Unmarshal([]byte(line), &wantX)
		gotX, err := ParseExit([]byte(line))
		assert.Equal(t, wantErr == nil, err == nil, "exit %q: %v", line, err)
		assert.Equal(t, wantX, gotX, "exit %q", line)
	}
}
