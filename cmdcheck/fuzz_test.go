package cmdcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzCheck runs Check on bash -c SCRIPT against a fake policy
// allowing only /ws (and /usr read+execute). It must never panic, and when it
// accepts a script, every absolute path the shell lexer sees as a plain
// literal word must have been asked about and lie inside the policy.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"ls",
		"cat /etc/passwd",
		"cd /ws/sub && cat ../x",
		"echo hi > /tmp/x",
		"bash -c 'cat /etc/shadow'",
		"cat <<'EOF'\n/etc/x\nEOF\n",
		"cat /e{tc,x}/passwd",
		"f() { cat ../x; }; cd /ws; f",
	} {
		f.Add(s)
	}
	const root = "/ws"
	f.Fuzz(func(t *testing.T, script string) {
		p := &fakePolicy{root: root}
		err := Check([]string{"bash", "-c", script}, root+"/a", p.check)
		if err != nil {
			return
		}
		file, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
		if perr != nil {
			t.Fatalf("accepted a script that does not parse: %v", perr)
		}
		syntax.Walk(file, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Redirect:
				// Heredoc delimiters and bodies, here-strings: data.
				if n.Op == syntax.Hdoc || n.Op == syntax.DashHdoc || n.Op == syntax.WordHdoc {
					return false
				}
			case *syntax.Word:
				v, ok := plainLiteral(n)
				if !ok || !strings.HasPrefix(v, "/") || devices[v] {
					return true
				}
				if !p.asked(v, AccessRead) && !p.asked(v, AccessWrite) && !p.asked(v, AccessExecute) {
					t.Errorf("accepted without asking about %q; calls: %v", v, p.calls)
				}
				if c := filepath.Clean(v); !within(c, root) && !within(c, "/usr") {
					t.Errorf("accepted %q outside the policy", v)
				}
			}
			return true
		})
	})
}

// plainLiteral returns the value of a word made only of unescaped literal
// text and single quotes, without glob or brace characters: the words whose
// value the test can compute without a shell.
func plainLiteral(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, `\*?[{~`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		default:
			return "", false
		}
	}
	return b.String(), true
}
