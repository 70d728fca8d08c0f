package seccomp

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkSupervisedListen is the cost of one syscall answered by the
// supervisor (SECCOMP_RET_USER_NOTIF: the notification, pidfd_open,
// NOTIF_ID_VALID, pidfd_getfd, the checks, listen in this process, the
// answer) against the same listen(2) made directly: the per-call price a
// broker for another syscall (inotify_add_watch) would start from.
func BenchmarkSupervisedListen(b *testing.B) {
	requireSeccomp(b)
	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, AllowUnixSockets: true})
	if err != nil {
		b.Fatal(err)
	}
	listenLoop := func(b *testing.B) {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: filepath.Join(b.TempDir(), "s")}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if err := unix.Listen(fd, 4); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", listenLoop)
	b.Run("supervised", func(b *testing.B) { onFilteredThread(b, f, func() { listenLoop(b) }) })
}
