// Package termsafe prints names a confined command chose (paths, command
// names, error texts that embed them) in landjail's own messages without
// letting them carry terminal escape sequences.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns s as it is when it is valid UTF-8 made only of printable
// characters, else Go-quoted (strconv.Quote: escapes visible), so that a
// name cannot recolour, retitle or erase landjail's lines.
func Quote(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
