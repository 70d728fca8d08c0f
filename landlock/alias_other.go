//go:build !linux

package landlock

// maskAliases: no namespace view outside Linux.
func maskAliases(masks []string) []string { return nil }
