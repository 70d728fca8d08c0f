package seccomp

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExplainOpen is the price of Options.Explain on the calls it
// observes: an openat of a regular file under the plain filter and under
// the explaining one (notification, path copy, O_PATH open in the
// caller's root, fstat, fstatfs, SECCOMP_USER_NOTIF_FLAG_CONTINUE), and a
// refused socket (notification, the rule walk, the errno).
func BenchmarkExplainOpen(b *testing.B) {
	requireSeccomp(b)
	file := filepath.Join(b.TempDir(), "f")
	if err := unix.Close(must(unix.Open(file, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o644))); err != nil {
		b.Fatal(err)
	}
	for _, explain := range []bool{false, true} {
		f, err := Build(Options{LandlockABI: 7, NetRestricted: true, Explain: explain})
		if err != nil {
			b.Fatal(err)
		}
		name := map[bool]string{false: "plain", true: "explain"}[explain]
		b.Run("openat/"+name, func(b *testing.B) {
			onFilteredThread(b, f, func() {
				for b.Loop() {
					fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
					if err != nil {
						b.Fatal(err)
					}
					unix.Close(fd)
				}
			})
		})
		b.Run("refused-socket/"+name, func(b *testing.B) {
			onFilteredThread(b, f, func() {
				for b.Loop() {
					if _, err := sysSocket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != unix.EPERM {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func must(fd int, err error) int {
	if err != nil {
		panic(err)
	}
	return fd
}
