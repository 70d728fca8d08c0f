package cmdcheck

import (
	"fmt"
	"slices"
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
			if err := static(part, f); err != nil {
				return nil, err
			}
			if l, ok := part.(*syntax.Lit); ok {
				unquotedLit(&b, l.Value, &f.glob)
				continue
			}
			// A quoted part: expand.Literal removes the quotes and the
			// backslashes that escape $ ` " \ and newline in double quotes.
			// Alone in its word, the part is never tilde-expanded.
			v, err := expand.Literal(nil, &syntax.Word{Parts: []syntax.WordPart{part}})
			if err != nil {
				return nil, unverifiable(f, "%w", err)
			}
			b.WriteString(v)
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

// static returns nil when part's value is known without running anything:
// literal text, single quotes ($'...' only without escapes), double quotes
// holding only literal text. (The parser drops NUL bytes from the source, so
// expand.Literal, which would cut a value at one, never meets one.)
func static(part syntax.WordPart, f field) error {
	switch p := part.(type) {
	case *syntax.Lit:
		return nil
	case *syntax.SglQuoted:
		if p.Dollar && strings.ContainsRune(p.Value, '\\') {
			return unverifiable(f, "$'...' with escapes")
		}
		return nil
	case *syntax.DblQuoted:
		for _, dp := range p.Parts {
			if _, ok := dp.(*syntax.Lit); !ok {
				return unverifiable(f, "%s", describe(dp))
			}
		}
		return nil
	}
	return unverifiable(f, "%s", describe(part))
}

// unquotedLit appends an unquoted literal after quote removal (a backslash
// escapes the next byte) and records the first unquoted glob character.
// expand.Literal cannot stand in here: it keeps the backslashes of an
// unquoted literal (it gives `a\ b` for the word a\ b, where bash gives
// "a b") and cannot say where a glob character was unquoted.
func unquotedLit(b *strings.Builder, v string, glob *int) {
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

// heredocText returns the body of a heredoc as the shell feeds it, if it is
// known statically: the text as written when the delimiter is quoted, else
// (expand.Document) with the backslashes before $ ` \ and newline removed,
// when it has no expansions.
func (c *checker) heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		b.WriteString(l.Value)
	}
	quoted := slices.ContainsFunc(r.Word.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return !ok || strings.ContainsRune(l.Value, '\\')
	})
	if quoted {
		return b.String(), true
	}
	body, err := expand.Document(nil, r.Hdoc)
	return body, err == nil
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
