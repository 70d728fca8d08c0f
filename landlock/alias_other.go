//go:build !linux

package landlock

// maskAliases: no namespace view outside Linux.
func maskAliases(masks []string) []string { return nil }

// carveAliases: no mountinfo outside Linux.
func carveAliases(carves []carve) []carve { return nil }
