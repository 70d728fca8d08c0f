package selfproc

// oPath is O_PATH (Linux 2.6.39), 010000000 on every architecture Go
// supports on Linux (asm-generic/fcntl.h); the syscall package does not
// name it, and golang.org/x/sys/unix initializes too late for this
// package (see the package doc).
const oPath = 0o10000000
