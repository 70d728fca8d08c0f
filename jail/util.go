package jail

import (
	"syscall"
	"unsafe"
)

// unsafeStat views a syscall.Stat_t as the identical unix.Stat_t.
func unsafeStat(st *syscall.Stat_t) unsafe.Pointer { return unsafe.Pointer(st) }
