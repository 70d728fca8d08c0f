package termsafe

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQuote: names with escape sequences (a command named
// "\x1b[31mX\x1b]0;T\a") are printed quoted, plain ones as they are.
func TestQuote(t *testing.T) {
	assert.Equal(t, "/ws/a b.txt", Quote("/ws/a b.txt"))
	assert.Equal(t, "héllo", Quote("héllo"))
	assert.Equal(t, `"\x1b[31mX\x1b]0;T\a"`, Quote("\x1b[31mX\x1b]0;T\a"))
	assert.Equal(t, `"a\x9bb"`, Quote("a\x9bb")) // C1 CSI, invalid UTF-8
	assert.Equal(t, `"a\u009bb"`, Quote("a\u009bb"))
}
