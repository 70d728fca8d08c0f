package seccomp

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// swapBroker refuses every open (as Landlock would) and, in between,
// re-points the link the child named: the moment a command's swap lands.
type swapBroker struct {
	link, to string
}

func (b *swapBroker) OpenAt(int, string, int, bool) (int, error) {
	os.Remove(b.link)
	os.Symlink(b.to, b.link)
	return -1, unix.EACCES
}
func (b *swapBroker) Connect(int, []byte) error { return unix.EPERM }
func (b *swapBroker) Close()                    {}

// TestObserveControlPinned (red team round 15, R15b-4): the unconfined
// control open of --explain's read classification reopens the file the
// first look pinned, not the path: a link swapped after that look (here
// to a FIFO with no writer, which an open of the path would reach) does
// not make the supervisor open what the child may not. The event still
// comes (the pinned file is readable: Landlock's refusal). Red before:
// the path was opened again (with the link swapped to a missing name, no
// event; swapped to the FIFO, the FIFO was opened).
func TestObserveControlPinned(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	reg, fifo, link := filepath.Join(dir, "regular"), filepath.Join(dir, "fifo"), filepath.Join(dir, "lnk")
	require.NoError(t, os.WriteFile(reg, []byte("x"), 0o644))
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	nr, ok := syscallNumbers()["openat"]
	require.True(t, ok)
	for _, swapTo := range []string{"", fifo, filepath.Join(dir, "missing")} {
		os.Remove(link)
		require.NoError(t, os.Symlink(reg, link))
		name := append([]byte(link), 0)
		req := &seccompNotif{pid: uint32(unix.Gettid()), nr: int32(nr)}
		cwd := int32(unix.AT_FDCWD)
		req.args[0] = uint64(uint32(cwd))
		req.args[1] = uint64(uintptr(unsafe.Pointer(&name[0])))
		req.args[2] = unix.O_RDONLY
		b := &swapBroker{link: link, to: reg}
		if swapTo != "" {
			b.to = swapTo
		}
		e, got := observe(req, b)
		require.True(t, got, "swapped to %q: the pinned file decides", swapTo)
		assert.Equal(t, LandlockRead, e.Why)
		assert.Equal(t, link, e.Path)
	}
}
