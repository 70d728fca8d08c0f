//go:build !linux

package nsinit

import "os"

// Main does nothing outside Linux.
func Main() {}

// Registered is false outside Linux.
func Registered() bool { return false }

// Exe returns nil outside Linux.
func Exe() *os.File { return nil }
