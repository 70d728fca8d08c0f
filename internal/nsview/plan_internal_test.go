package nsview

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompile: the mount order, without a kernel.
func TestCompile(t *testing.T) {
	for _, tc := range []struct {
		name               string
		view               View
		early, late, masks []string
		drops              int
		err                error
	}{
		{name: "empty", view: New()},
		{
			name:  "nested writable roots shallowest first, duplicates once",
			view:  New().Writable("/w/a/b", "/w", "/w/a/b", "/v"),
			early: []string{"/v", "/w", "/w/a/b"},
		},
		{
			name:  "roots under private dirs attached late",
			view:  New().Writable("/tmp/ws", "/home/u/p", "/dev/shm/x").PrivateTmp(),
			early: []string{"/home/u/p"},
			late:  []string{"/tmp/ws", "/dev/shm/x"},
		},
		{
			name:  "without PrivateTmp /tmp roots are early",
			view:  New().Writable("/tmp/ws"),
			early: []string{"/tmp/ws"},
		},
		{
			name:  "masks under a private dir and no writable root dropped",
			view:  New().Writable("/tmp/ws").Mask("/tmp/other/.env", "/tmp/ws/.env", "/tmpx/.env").PrivateTmp(),
			late:  []string{"/tmp/ws"},
			masks: []string{"/tmpx/.env", "/tmp/ws/.env"},
			drops: 1,
		},
		{
			name:  "mask below a masked directory dropped",
			view:  New().Mask("/w/secrets/key", "/w/secrets", "/w/secretsx"),
			masks: []string{"/w/secrets", "/w/secretsx"},
			drops: 1,
		},
		{name: "relative", view: New().Writable("w"), err: ErrInvalidPath},
		{name: "trailing slash", view: New().Mask("/w/"), err: ErrInvalidPath},
		{name: "dot dot", view: New().Mask("/w/../etc/shadow"), err: ErrInvalidPath},
		{name: "empty path", view: New().Mask(""), err: ErrInvalidPath},
		{name: "writable /", view: New().Writable("/"), err: ErrInvalidPath},
		{name: "writable /dev/shm with PrivateTmp", view: New().Writable("/dev/shm").PrivateTmp(), err: ErrInvalidPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.view.compile()
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.early, p.early, "early")
			assert.Equal(t, tc.late, p.late, "late")
			assert.Equal(t, tc.masks, p.masks, "masks")
			assert.Equal(t, tc.drops, p.ndrops, "dropped")
		})
	}
}

// TestViewIsAValue: methods return copies; the original is unchanged.
func TestViewIsAValue(t *testing.T) {
	a := New().Writable("/a")
	b := a.Writable("/b").Mask("/a/.env").PrivateTmp().NoNetwork()
	c := a.Writable("/c")
	assert.Equal(t, []string{"/a"}, a.writable)
	assert.Equal(t, []string{"/a", "/b"}, b.writable)
	assert.Equal(t, []string{"/a", "/c"}, c.writable)
	assert.False(t, a.privateTmp || a.noNetwork)
	assert.Empty(t, a.masks)
}
