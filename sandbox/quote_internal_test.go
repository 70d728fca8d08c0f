package sandbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/landlock"
)

// TestWarnFrozenQuotes: a frozen directory's name, which a command may
// have chosen in an earlier run, is printed quoted when it holds an
// escape sequence (red team round 2 N3: "\x1b[2K\r" erased the line).
func TestWarnFrozenQuotes(t *testing.T) {
	var b strings.Builder
	warnFrozen(&b, &landlock.Report{Layer: landlock.LayerLandlockOnly, FrozenDirs: []string{"/ws/a\x1b[2K\rb", "/ws/plain"}}, true)
	assert.NotContains(t, b.String(), "\x1b")
	assert.Contains(t, b.String(), `"/ws/a\x1b[2K\rb"`)
	assert.Contains(t, b.String(), "frozen directory /ws/plain:", "printable names stay as they are")
}
