package netproxy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrintable(t *testing.T) {
	assert.Equal(t, "a?[31mb??", printable("a\x1b[31mb\r\n"))
	assert.Equal(t, "??", printable("é"))
	assert.Len(t, printable(strings.Repeat("x", 1000)), 255)
}
