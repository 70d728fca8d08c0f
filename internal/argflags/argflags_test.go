package argflags

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRun: the names before "--", dashes and values removed; not a run:
// no call; f's false stops the loop.
func TestRun(t *testing.T) {
	var got []string
	ok := Run([]string{"landjail", "run", "--net=host", "-print-rules", "--ro", "x", "--", "--help"}, func(n string) bool {
		got = append(got, n)
		return true
	})
	assert.True(t, ok)
	assert.Equal(t, []string{"net", "print-rules", "ro", "x"}, got)
	got = nil
	assert.False(t, Run([]string{"landjail", "resolve", "--net"}, func(n string) bool { got = append(got, n); return true }))
	assert.False(t, Run([]string{"landjail"}, func(string) bool { return true }))
	assert.Empty(t, got)
	n := 0
	Run([]string{"landjail", "run", "--a", "--b"}, func(string) bool { n++; return false })
	assert.Equal(t, 1, n)
}
