package argflags

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCmdline: /proc/self/cmdline read with plain system calls is this
// process's argv, the test binary's flags included (os.Args, which the
// runtime fills from the same vector). Shown able to fail: with the
// split at NUL bytes off by one (start = i) every argument after the
// first began with a NUL.
func TestCmdline(t *testing.T) {
	assert.Equal(t, os.Args, Cmdline())
	assert.Greater(t, len(os.Args), 1, "control: the test binary has flags")
}
