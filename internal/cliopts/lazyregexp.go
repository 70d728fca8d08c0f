package cliopts

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles pattern at its first use, not in the package's init:
// only an error message is matched, and every landjail start would pay
// the compile (issue 25).
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
