//go:build !linux

package early

func cmdline() []string { return nil }
