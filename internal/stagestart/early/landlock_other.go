//go:build !linux

package early

func landlockAvailable() bool { return false }
