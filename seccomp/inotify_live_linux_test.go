package seccomp

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
)

// threadBroker is a Broker on a locked thread of its own, unconfined:
// what package exec builds, without the Landlock domain (exec's tests
// cover the domain's decisions).
type threadBroker struct {
	req    chan func()
	closed chan struct{}
}

func newThreadBroker() *threadBroker {
	b := &threadBroker{req: make(chan func()), closed: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		for fn := range b.req {
			fn()
		}
		close(b.closed)
	}()
	return b
}

func (b *threadBroker) OpenAt(dirfd int, unsafePath string, flags int, inRoot bool) (fd int, err error) {
	done := make(chan struct{})
	b.req <- func() {
		err = unix.ENOSYS
		if inRoot {
			fd, err = unix.Openat2(dirfd, unsafePath, &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_IN_ROOT})
		}
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) { // as exec's broker
			fd, err = unix.Openat(dirfd, unsafePath, flags, 0)
		}
		close(done)
	}
	<-done
	return fd, err
}

func (b *threadBroker) Connect(sock int, sa []byte) (err error) {
	done := make(chan struct{})
	b.req <- func() {
		var p unsafe.Pointer
		if len(sa) > 0 {
			p = unsafe.Pointer(&sa[0])
		}
		_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(sa)))
		if e != 0 {
			err = e
		}
		close(done)
	}
	<-done
	return err
}

func (b *threadBroker) Close() { close(b.req) }

// onBrokeredThread is onFilteredThread with InstallBroker(b), on a fresh
// thread that dies afterwards (osthread.Run).
func onBrokeredThread(t testing.TB, f *Filter, b Broker, fn func()) {
	t.Helper()
	require.NoError(t, osthread.Run(func() error {
		if err := f.InstallBroker(b); err != nil {
			return err
		}
		fn()
		return nil
	}))
}

// TestInotifyLive: installed with a broker, inotify_add_watch answers
// with a watch descriptor on the path's inode (the watch is in the
// calling thread's own inotify instance: fdinfo lists it) and passes
// errors through; installed with Install it fails with EPERM. Control:
// the same call on an unfiltered thread succeeds.
func TestInotifyLive(t *testing.T) {
	requireSeccomp(t)
	f, err := Build(Options{LandlockABI: 7})
	require.NoError(t, err)
	dir := t.TempDir()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(dir, &st))
	watch := func(path string, mask uint32) (int, error) {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		require.NoError(t, err)
		defer unix.Close(fd)
		return unix.InotifyAddWatch(fd, path, mask)
	}
	_, err = watch(dir, unix.IN_ALL_EVENTS)
	require.NoError(t, err, "control: unfiltered")

	b := newThreadBroker()
	onBrokeredThread(t, f, b, func() {
		wd, err := watch(dir, unix.IN_ALL_EVENTS)
		assert.NoError(t, err)
		assert.Equal(t, 1, wd)
		_, err = watch(dir+"/missing", unix.IN_ALL_EVENTS)
		assert.ErrorIs(t, err, unix.ENOENT)
		_, err = watch("", unix.IN_ALL_EVENTS)
		assert.ErrorIs(t, err, unix.ENOENT)
		_, err = unix.InotifyAddWatch(999, dir, unix.IN_ALL_EVENTS)
		assert.ErrorIs(t, err, unix.EBADF)
	})
	onFilteredThread(t, f, func() {
		_, err := watch(dir, unix.IN_ALL_EVENTS)
		assert.ErrorIs(t, err, unix.EPERM, "Install: no broker")
	})
}

// BenchmarkInotifyAddWatch is the price of one inotify_add_watch through
// the broker (notification, /proc/TID/root and cwd, status, the path
// copied, NOTIF_ID_VALID, pidfd_getfd, an open on the broker's thread,
// inotify_add_watch on /proc/self/fd/N, the answer) against the direct
// call. The watch is the same inode each time (the kernel updates it).
func BenchmarkInotifyAddWatch(b *testing.B) {
	requireSeccomp(b)
	f, err := Build(Options{LandlockABI: 7})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	loop := func(b *testing.B) {
		fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(fd)
		for b.Loop() {
			if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_MODIFY); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", loop)
	b.Run("brokered", func(b *testing.B) { onBrokeredThread(b, f, newThreadBroker(), func() { loop(b) }) })
}
