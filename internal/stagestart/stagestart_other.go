//go:build !linux

package stagestart

func take() *Stage { return nil }

func waitEarly() {}

// StartEarly does nothing off Linux.
func StartEarly(exe string, privateNetwork bool) {}
