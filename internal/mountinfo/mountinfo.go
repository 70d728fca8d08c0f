// Package mountinfo decodes the fields of /proc/self/mountinfo
// (proc(5)): one place for its escapes, which landjail's doctor, the
// limits probe, the namespace view and the mask aliases all read.
package mountinfo

import (
	"strconv"
	"strings"
)

// Unescape undoes the octal escapes the kernel writes in mountinfo's
// root and mount-point fields (\040 space, \011 tab, \012 newline, \134
// backslash: show_path and seq_escape). A backslash without three octal
// digits after it is kept as it is.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
