package landlock

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestCloseKept: closeKept closes exactly the descriptors it is given,
// in any order, with runs of consecutive numbers interrupted by
// descriptors that are not its own (which stay open), single ones, and
// one run far from the others. Shown able to fail: with one
// close_range over the lowest to the highest number given, the foreign
// descriptors in between close too; with the range's end off by one
// (fds[j-1]-1), a kept one stays open.
func TestCloseKept(t *testing.T) {
	open := func() int {
		fd, err := unix.Open("/", unix.O_PATH|unix.O_CLOEXEC, 0)
		require.NoError(t, err)
		return fd
	}
	isOpen := func(fd int) bool {
		_, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		return err == nil
	}
	var ours, foreign []int
	for _, n := range []int{8, -1, 3, -1, 1, -2, 1, 1, -1, 5} { // n > 0: n of ours; -n: n foreign
		for range max(n, -n) {
			if n > 0 {
				ours = append(ours, open())
			} else {
				foreign = append(foreign, open())
			}
		}
	}
	// A run far from the others: dup to a high free number.
	far, err := unix.FcntlInt(uintptr(ours[0]), unix.F_DUPFD_CLOEXEC, 900)
	require.NoError(t, err)
	next, err := unix.FcntlInt(uintptr(far), unix.F_DUPFD_CLOEXEC, far+1)
	require.NoError(t, err)
	ours = append(ours, far, next)
	t.Cleanup(func() {
		for _, fd := range append(ours, foreign...) {
			unix.Close(fd)
		}
	})
	rand.Shuffle(len(ours), func(i, j int) { ours[i], ours[j] = ours[j], ours[i] })
	given := append([]int(nil), ours...)
	closeKept(given)
	assert.Equal(t, ours, given, "closeKept reordered its argument")
	for _, fd := range ours {
		assert.False(t, isOpen(fd), "descriptor %d given to closeKept is still open", fd)
	}
	for _, fd := range foreign {
		assert.True(t, isOpen(fd), "descriptor %d not given to closeKept was closed", fd)
	}
	ours = nil // closed: the cleanup must not close numbers reused since
}
