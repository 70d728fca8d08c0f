//go:build !linux

package sysclone

// Start does nothing off Linux.
func Start(exe string, privateNetwork bool) {}

// Take returns nil off Linux.
func Take() *Stage { return nil }

// Wait does nothing off Linux.
func Wait() {}
