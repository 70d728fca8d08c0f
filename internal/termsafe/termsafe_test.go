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

// TestEscape: a message's controls and invalid bytes are escaped, its
// printable text (tabs too) kept; control: a plain message is unchanged.
func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"walk /w/p: too many names":           "walk /w/p: too many names",
		"a\tb":                                "a\tb",
		"walk /w/\x1b]52;c;ZXZpbA==\x07x: no": `walk /w/\x1b]52;c;ZXZpbA==\ax: no`,
		"/w/\x1b[2J\nlandjail: ok":            `/w/\x1b[2J\nlandjail: ok`,
		"bad \xff byte, zero\u200bwidth":      `bad \xff byte, zero\u200bwidth`,
	} {
		assert.Equal(t, want, Escape(in), "%q", in)
	}
}
