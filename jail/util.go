package jail

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// unsafeStat views a syscall.Stat_t as the identical unix.Stat_t.
func unsafeStat(st *syscall.Stat_t) unsafe.Pointer { return unsafe.Pointer(st) }

func readAll(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() < 1<<40 {
		size = int(fi.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}
