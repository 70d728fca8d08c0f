// Package termsafe prints names a confined command chose (paths, command
// names, error texts that embed them) in landjail's own messages without
// letting them carry terminal escape sequences.
package termsafe

import (
	"io"
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

// Escape returns the message s with every character that is not printable
// (escape sequences' ESC and CSI, other controls, newlines too) and every
// byte of invalid UTF-8 written as a Go escape (\x1b, \n, \u200b), the
// rest as it is: for a whole message, such as an error's text, that
// embeds names a confined command chose, when printed to the caller's
// terminal (red team round 22, R22c-6: a planted directory's name in
// landlock.ErrLinkNames' text cleared the screen and set the clipboard).
// A tab is kept.
func Escape(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return r != '\t' && !unicode.IsPrint(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case r != '\t' && !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Lines returns a writer that writes to w what it is given with each
// line's text passed through Escape, line ends kept: for a listing made
// of many lines that name paths (landjail run --print-rules: its rules
// and frozen directories, red team round 22, R22c-6). A line is written
// once it ends; Flush writes an unfinished one.
func Lines(w io.Writer) *LineWriter { return &LineWriter{w: w} }

// LineWriter is Lines' writer.
type LineWriter struct {
	w   io.Writer
	buf []byte
}

// Write buffers p and writes every line it completes, escaped. It
// reports len(p) unless w fails.
func (l *LineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		if _, err := io.WriteString(l.w, Escape(string(l.buf[:i]))+"\n"); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
	}
}

// Flush writes what is left of an unfinished line, escaped.
func (l *LineWriter) Flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(l.w, Escape(string(l.buf)))
	l.buf = nil
	return err
}
