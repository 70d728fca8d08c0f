package cmdcheck

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// fields expands a word as the shell would if its value is static: brace
// expansion, then quote removal, tilde left in place for path. Anything
// dynamic is unverifiable.
func (c *checker) fields(w *syntax.Word, s *scope) ([]field, error) {
	tok := c.render(w, s)
	words := []*syntax.Word{w}
	if syntax.SplitBraces(w) {
		words = words[:0]
		for bw, err := range expand.BracesSeq(nil, w) {
			if err != nil {
				return nil, unverifiable(field{arg: s.arg, tok: tok}, "brace expansion: %w", err)
			}
			if len(words) == maxFields {
				return nil, unverifiable(field{arg: s.arg, tok: tok}, "brace expansion to more than %d words", maxFields)
			}
			words = append(words, bw)
		}
	}
	out := make([]field, 0, len(words))
	for _, bw := range words {
		f := field{glob: -1, arg: s.arg, tok: tok}
		var b strings.Builder
		for _, part := range bw.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				unescapeLit(&b, p.Value, &f.glob)
			case *syntax.SglQuoted:
				if p.Dollar && strings.ContainsRune(p.Value, '\\') {
					return nil, unverifiable(f, "$'...' with escapes")
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, dp := range p.Parts {
					l, ok := dp.(*syntax.Lit)
					if !ok {
						return nil, unverifiable(f, "%s", describe(dp))
					}
					b.WriteString(unescapeDQ(l.Value, "$`\"\\\n"))
				}
			default:
				return nil, unverifiable(f, "%s", describe(part))
			}
		}
		f.s = b.String()
		if strings.Contains(f.s, "$(") || strings.Contains(f.s, "${") || strings.Contains(f.s, "`") {
			// let, printf -v, declare, read and [[ -v ]] evaluate array
			// subscripts in strings: 'a[$(cat /etc/shadow)]' runs.
			return nil, unverifiable(f, "text that bash may evaluate as code")
		}
		out = append(out, f)
	}
	return out, nil
}

// unescapeLit appends an unquoted literal after quote removal and records
// the first unquoted glob character.
func unescapeLit(b *strings.Builder, v string, glob *int) {
	for i := 0; i < len(v); i++ {
		switch ch := v[i]; {
		case ch == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case ch == '*' || ch == '?' || ch == '[':
			if *glob < 0 {
				*glob = b.Len()
			}
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
}

// unescapeDQ removes the backslashes that escape one of special, as inside
// double quotes; a backslash-newline disappears.
func unescapeDQ(v, special string) string {
	if !strings.ContainsRune(v, '\\') {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte(special, v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func describe(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.ParamExp:
		return "parameter expansion"
	case *syntax.CmdSubst:
		if n.Backquotes {
			return "command substitution (backquotes)"
		}
		return "command substitution"
	case *syntax.ProcSubst:
		return "process substitution"
	case *syntax.ArithmExp:
		return "arithmetic expansion"
	case *syntax.ExtGlob:
		return "extended glob"
	}
	return fmt.Sprintf("%T", n)
}

// render returns the source text of n for Error.Token.
func (c *checker) render(n syntax.Node, s *scope) string {
	var b strings.Builder
	if s.printer == nil || s.printer.Print(&b, n) != nil {
		return ""
	}
	return b.String()
}

func (c *checker) nodeField(n syntax.Node, s *scope) field {
	return field{glob: -1, arg: s.arg, tok: c.render(n, s)}
}
