package learn

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Header is the first line of a file Merge creates.
const Header = "# landjail policy: grants learned by `landjail run --learn` (load it with --config)"

// commentsHeader precedes the comment lines Merge appends.
const commentsHeader = "# landjail run --learn did not grant these:"

// ReadGrants decodes the grants of a config file's text: the arrays ro,
// rox, rw (relative paths joined to dir, the file's directory, as
// --config reads them) and allow_domain. Other keys are left alone.
// Errors wrap ErrNotMergeable: not TOML, or one of these keys not an
// array of strings.
func ReadGrants(text []byte, dir string) (Grants, error) {
	var m map[string]any
	if _, err := toml.Decode(string(text), &m); err != nil {
		return nil, notMergeable("%v", err)
	}
	g := Grants{}
	for _, k := range Keys {
		v, ok := m[string(k)]
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return nil, notMergeable("%s is not an array", k)
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return nil, notMergeable("%s holds a value that is not a string", k)
			}
			if k != KeyAllowDomain && !filepath.IsAbs(s) {
				s = filepath.Join(dir, s)
			}
			g[k] = append(g[k], s)
		}
	}
	return g, nil
}

// Merge returns text with p applied: each entry inserted before the
// closing bracket of its key's array (a comma added after the last value
// when it has none), or a new array appended for a key the file lacks;
// each comment line not already in the file appended under one header. All
// other bytes of text are kept. An empty text (blanks only) gets Header
// first, and is Header alone when p adds nothing. Errors
// wrap ErrNotMergeable: a table header ([x] or [[x]]: a landjail config
// has none), a key whose statement the scanner cannot follow.
func Merge(text []byte, p Plan) ([]byte, error) {
	stmts, err := scanTop(text)
	if err != nil {
		return nil, err
	}
	type insert struct {
		at   int
		text string
	}
	var ins []insert
	var appendText strings.Builder
	byKey := map[Key][]Entry{}
	for _, e := range p.Add {
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	for _, k := range Keys {
		es := byKey[k]
		if len(es) == 0 {
			continue
		}
		var lines strings.Builder
		for _, e := range es {
			fmt.Fprintf(&lines, "  %s, # %s\n", Quote(e.Value), asciiComment(e.Note))
		}
		st, ok := stmts[string(k)]
		if !ok {
			fmt.Fprintf(&appendText, "%s = [\n%s]\n", k, lines.String())
			continue
		}
		if !st.array {
			return nil, notMergeable("%s is not an array", k)
		}
		if st.lastValueEnd >= 0 && !st.trailingComma {
			ins = append(ins, insert{st.lastValueEnd, ","})
		}
		// Before the closing bracket: at the start of its line when only
		// blanks precede it there, else on a new line.
		ls := bytes.LastIndexByte(text[:st.close], '\n') + 1
		if len(bytes.TrimSpace(text[ls:st.close])) == 0 {
			ins = append(ins, insert{ls, lines.String()})
		} else {
			ins = append(ins, insert{st.close, "\n" + lines.String()})
		}
	}
	lines := map[string]bool{} // text's lines, blanks around them trimmed
	for _, l := range strings.Split(string(text), "\n") {
		lines[strings.TrimSpace(l)] = true
	}
	var newComments []string
	for _, c := range p.Comments {
		line := "# " + c
		if !lines[line] {
			lines[line] = true
			newComments = append(newComments, line)
		}
	}
	if len(newComments) > 0 {
		if !lines[commentsHeader] {
			if appendText.Len() > 0 {
				appendText.WriteString("\n")
			}
			appendText.WriteString(commentsHeader + "\n")
		}
		for _, c := range newComments {
			appendText.WriteString(c + "\n")
		}
	}
	// Applied from the end of the text; of two at one place the one
	// added later first, so that the comma stays before the entries.
	sort.SliceStable(ins, func(i, j int) bool { return ins[i].at < ins[j].at })
	out := append([]byte(nil), text...)
	for i := len(ins) - 1; i >= 0; i-- {
		in := ins[i]
		out = append(out[:in.at], append([]byte(in.text), out[in.at:]...)...)
	}
	if appendText.Len() == 0 && len(bytes.TrimSpace(out)) == 0 {
		// A run that learned nothing still leaves a file that says what
		// it is.
		return []byte(Header + "\n"), nil
	}
	if appendText.Len() > 0 {
		switch {
		case len(bytes.TrimSpace(out)) == 0:
			out = []byte(Header + "\n\n")
		case out[len(out)-1] != '\n':
			out = append(out, "\n\n"...)
		default:
			out = append(out, '\n')
		}
		out = append(out, appendText.String()...)
	}
	return out, nil
}

// Quote is s as a TOML basic string: '"' and '\' escaped, every control
// character (U+0000 to U+001F, U+007F) as \uXXXX or its short escape, the
// rest as is. s must be valid UTF-8 (Decide never grants one that is not).
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || r == utf8.RuneError:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// stmt is where a top-level key's value lies in the text.
type stmt struct {
	array         bool
	close         int // index of the array's closing bracket
	lastValueEnd  int // index just after its last value, -1 when empty
	trailingComma bool
}

// scanTop finds the top-level key/value statements of a TOML text (a
// landjail config: keys and values, no tables). It follows strings (all
// four kinds), comments, arrays and inline tables, enough to find each
// array's last value and closing bracket.
func scanTop(b []byte) (map[string]stmt, error) {
	s := &scanner{b: b}
	out := map[string]stmt{}
	for {
		s.skip(true)
		if s.i >= len(b) {
			return out, nil
		}
		if b[s.i] == '[' {
			return nil, notMergeable("the file has a table header (line %d); a landjail config has none", s.line())
		}
		key, err := s.key()
		if err != nil {
			return nil, err
		}
		s.skip(false)
		if s.i >= len(b) || b[s.i] != '=' {
			return nil, notMergeable("expected = after %q (line %d)", key, s.line())
		}
		s.i++
		s.skip(false)
		var st stmt
		if s.i < len(b) && b[s.i] == '[' {
			st.array = true
			if err := s.array(&st); err != nil {
				return nil, err
			}
		} else if err := s.value(); err != nil {
			return nil, err
		}
		s.skip(false)
		if s.i < len(b) && b[s.i] != '\n' && b[s.i] != '\r' {
			return nil, notMergeable("unexpected text after the value of %q (line %d)", key, s.line())
		}
		out[key] = st
	}
}

type scanner struct {
	b []byte
	i int
}

func (s *scanner) line() int { return bytes.Count(s.b[:min(s.i, len(s.b))], []byte("\n")) + 1 }

// skip passes blanks and comments, and newlines too when nl.
func (s *scanner) skip(nl bool) {
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == ' ' || c == '\t':
			s.i++
		case nl && (c == '\n' || c == '\r'):
			s.i++
		case c == '#':
			for s.i < len(s.b) && s.b[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// key reads a bare or quoted key; a dotted key is refused.
func (s *scanner) key() (string, error) {
	start := s.i
	if s.i < len(s.b) && (s.b[s.i] == '"' || s.b[s.i] == '\'') {
		if err := s.str(); err != nil {
			return "", err
		}
		var m map[string]any
		if _, err := toml.Decode("k = "+string(s.b[start:s.i]), &m); err != nil {
			return "", notMergeable("key at line %d: %v", s.line(), err)
		}
		k, _ := m["k"].(string)
		return k, s.noDot()
	}
	for s.i < len(s.b) && isBare(s.b[s.i]) {
		s.i++
	}
	if s.i == start {
		return "", notMergeable("expected a key (line %d)", s.line())
	}
	return string(s.b[start:s.i]), s.noDot()
}

func (s *scanner) noDot() error {
	j := s.i
	for j < len(s.b) && (s.b[j] == ' ' || s.b[j] == '\t') {
		j++
	}
	if j < len(s.b) && s.b[j] == '.' {
		return notMergeable("dotted key (line %d); a landjail config has none", s.line())
	}
	return nil
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// str passes one string of any kind, s.i at its opening quote.
func (s *scanner) str() error {
	q := s.b[s.i]
	multi := bytes.HasPrefix(s.b[s.i:], []byte{q, q, q})
	if multi {
		s.i += 3
		end := []byte{q, q, q}
		for s.i < len(s.b) {
			if q == '"' && s.b[s.i] == '\\' {
				s.i += 2
				continue
			}
			if bytes.HasPrefix(s.b[s.i:], end) {
				s.i += 3
				// Up to two more quotes belong to the string.
				for k := 0; k < 2 && s.i < len(s.b) && s.b[s.i] == q; k++ {
					s.i++
				}
				return nil
			}
			s.i++
		}
		return notMergeable("unterminated string")
	}
	s.i++
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '\n':
			return notMergeable("newline in a string (line %d)", s.line())
		case q == '"' && c == '\\':
			s.i += 2
			continue
		case c == q:
			s.i++
			return nil
		}
		s.i++
	}
	return notMergeable("unterminated string")
}

// value passes one value: a string, an array, an inline table or a
// scalar (number, boolean, date without blanks).
func (s *scanner) value() error {
	if s.i >= len(s.b) {
		return notMergeable("missing value")
	}
	switch s.b[s.i] {
	case '"', '\'':
		return s.str()
	case '[':
		var st stmt
		return s.array(&st)
	case '{':
		s.i++
		for {
			s.skip(false)
			if s.i >= len(s.b) {
				return notMergeable("unterminated inline table")
			}
			switch c := s.b[s.i]; {
			case c == '}':
				s.i++
				return nil
			case c == '"' || c == '\'' || c == '[' || c == '{':
				if err := s.value(); err != nil {
					return err
				}
			case c == '\n':
				return notMergeable("newline in an inline table (line %d)", s.line())
			default:
				s.i++
			}
		}
	}
	start := s.i
	for s.i < len(s.b) && !bytes.ContainsRune([]byte(",]}#\r\n \t"), rune(s.b[s.i])) {
		s.i++
	}
	if s.i == start {
		return notMergeable("expected a value (line %d)", s.line())
	}
	return nil
}

// array passes an array, s.i at its '[', and records where its last
// value ends and its closing bracket is.
func (s *scanner) array(st *stmt) error {
	s.i++
	st.lastValueEnd = -1
	for {
		s.skip(true)
		if s.i >= len(s.b) {
			return notMergeable("unterminated array")
		}
		if s.b[s.i] == ']' {
			st.close = s.i
			s.i++
			return nil
		}
		if err := s.value(); err != nil {
			return err
		}
		st.lastValueEnd, st.trailingComma = s.i, false
		s.skip(true)
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			st.trailingComma = true
			continue
		}
		if s.i < len(s.b) && s.b[s.i] == ']' {
			continue
		}
		return notMergeable("expected , or ] in an array (line %d)", s.line())
	}
}

// Update is ReadGrants, Decide and Merge in one: text is the config
// file's content (nil or empty for a new file), dir its directory. It
// returns the new content and the plan that made it (no entries and no
// new comments: out equals text).
func Update(text []byte, dir string, refs []Refusal) (out []byte, p Plan, err error) {
	have, err := ReadGrants(text, dir)
	if err != nil {
		return nil, Plan{}, err
	}
	p = Decide(refs, have)
	out, err = Merge(text, p)
	return out, p, err
}
