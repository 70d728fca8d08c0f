package nsview

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/osthread"
)

// TestEnterMountLimit: fs.mount-max is one global sysctl, so the test
// lowers the limit Enter reads (mountMax) rather than the host's. A view
// of 30 masks (3 directories) against a limit that leaves room for one
// mount fewer than the view itself adds is refused with ErrMountLimit,
// naming the 30 masks, before anything is done: the thread is still in
// the mount namespace of the process. Control: the same view against
// the real limit is built, its masks hold (a masked file reads empty)
// and the thread is in a new namespace. Shown red by removing the
// checkMountLimit call from enter (the lowered limit is then ignored and
// the view is built).
func TestEnterMountLimit(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	var masks []string
	for i := range 30 {
		p := filepath.Join(ws, fmt.Sprintf("d%d", i%3), fmt.Sprintf("s%d.env", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("SECRET"), 0o600))
		masks = append(masks, p)
	}
	v := New().Writable(ws).Mask(masks...).PrivateTmp()
	n, err := v.Mounts()
	require.NoError(t, err)
	assert.Equal(t, 30+3+2+1, n, "30 masks, 3 pinned directories, /tmp and /dev/shm, the writable root")
	realMax, err := mountMax()
	require.NoError(t, err)
	budget, err := MountBudget()
	require.NoError(t, err)
	inUse := realMax - budget
	require.Positive(t, inUse)

	mntNS := func() uint64 {
		var st unix.Stat_t
		require.NoError(t, unix.Stat("/proc/thread-self/ns/mnt", &st))
		return st.Ino
	}
	hostNS := mntNS()
	type result struct {
		err  error
		ns   uint64
		data string
	}
	enter := func(limit int) result {
		saved := mountMax
		mountMax = func() (int, error) { return limit, nil }
		defer func() { mountMax = saved }()
		var r result
		r.err = osthread.Run(func() error {
			err := v.Enter()
			r.ns = mntNS()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(masks[7])
			r.data = string(b)
			return err
		})
		return r
	}

	r := enter(inUse + n - 1)
	require.ErrorIs(t, r.err, ErrMountLimit)
	assert.ErrorContains(t, r.err, "30 masks")
	assert.Equal(t, hostNS, r.ns, "refused before unshare: nothing was built")

	layer := kerneltest.ExpectNamespaces(t, Probe())
	r = enter(realMax)
	if !layer {
		assert.ErrorIs(t, r.err, ErrUnavailable)
		return
	}
	require.NoError(t, r.err)
	assert.NotEqual(t, hostNS, r.ns)
	assert.Empty(t, r.data, "masked")
}

// TestUnescapeMountinfo: mount points with a space, tab, newline or
// backslash are octal-escaped in mountinfo (proc(5)).
func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		"/plain":              "/plain",
		`/a\040b`:             "/a b",
		`/t\011ab\012nl\134x`: "/t\tab\nnl\\x",
		`/trailing\04`:        `/trailing\04`,
		`/not\999octal`:       `/not\999octal`,
	} {
		assert.Equal(t, want, unescapeMountinfo(in), in)
	}
}
