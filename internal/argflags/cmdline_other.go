//go:build !linux

package argflags

// Cmdline returns nil off Linux.
func Cmdline() []string { return nil }
