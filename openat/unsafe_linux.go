package openat

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func unsafePointer(st *unix.Stat_t) unsafe.Pointer { return unsafe.Pointer(st) }
