package mountinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnescape: mountinfo's octal escapes (proc(5)) are undone, a
// backslash without three octal digits is kept.
func TestUnescape(t *testing.T) {
	assert.Equal(t, "/a b\tc\nd\\e", Unescape(`/a\040b\011c\012d\134e`))
	assert.Equal(t, `/x\0`, Unescape(`/x\0`))
	assert.Equal(t, `/x\9zz`, Unescape(`/x\9zz`))
	assert.Equal(t, "/plain", Unescape("/plain"))
	for in, want := range map[string]string{
		`/a\040b`:             "/a b",
		`/t\011ab\012nl\134x`: "/t\tab\nnl\\x",
		`/trailing\04`:        `/trailing\04`,
		`/not\999octal`:       `/not\999octal`,
	} {
		assert.Equal(t, want, Unescape(in), in)
	}
}
