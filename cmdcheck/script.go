package cmdcheck

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// of a script. st is the script statement it belongs to (nil for argv), pipe
// whether its standard input comes from a pipe.
func (c *checker) command(args []field, s *scope, st *syntax.Stmt, pipe bool) error {
	if len(args) == 0 {
		return nil
	}
	if name := args[0]; strings.ContainsRune(name.s, '/') {
		if name.glob >= 0 {
			return unverifiable(name, "glob in command name")
		}
		if err := c.path(name.s, AccessExecute, s, name); err != nil {
			return err
		}
	}
	for _, a := range args[1:] {
		if err := c.arg(a, s); err != nil {
			return err
		}
	}
	if s.script {
		if err := c.builtin(args, s); err != nil {
			return err
		}
	}
	for i, a := range args {
		if a.glob >= 0 && inCommandPosition(args, i) {
			// ba?h -c ...: the name depends on the files in the directory.
			return unverifiable(a, "glob as command name")
		}
		base := filepath.Base(a.s)
		if base == "env" {
			if err := c.envSplit(args[i+1:], s); err != nil {
				return err
			}
		}
		if !shells[base] {
			continue
		}
		mode, script := shellArgs(args[i+1:])
		switch mode {
		case shellScript:
			if script.glob >= 0 {
				return unverifiable(script, "glob as shell script")
			}
			in := pipe || st != nil && hasStdinData(st.Redirs)
			if err := c.script(script, s, in); err != nil {
				return err
			}
		case shellNoArg:
			return unverifiable(a, "%s -c without a script", a.s)
		case shellStdin:
			if !inCommandPosition(args, i) {
				continue
			}
			if err := c.stdinScript(a, s, st, pipe); err != nil {
				return err
			}
		}
	}
	return nil
}

// heredoc or here-string is the script; a pipe is unverifiable; otherwise
// the input is the caller's and is not inspected.
func (c *checker) stdinScript(sh field, s *scope, st *syntax.Stmt, pipe bool) error {
	if st != nil {
		for _, r := range slices.Backward(st.Redirs) {
			if r.N != nil && r.N.Value != "0" {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				body, ok := c.heredocText(r)
				if !ok {
					return unverifiable(sh, "heredoc script with expansions")
				}
				return c.script(field{s: body, glob: -1, arg: s.arg, tok: body}, s, false)
			case syntax.WordHdoc:
				fs, err := c.fields(r.Word, s)
				if err != nil {
					return err
				}
				for _, f := range fs {
					if err := c.script(f, s, false); err != nil {
						return err
					}
				}
				return nil
			case syntax.RdrIn, syntax.RdrInOut, syntax.DplIn:
				return nil // a file: not inspected, like sh script.sh
			}
		}
	}
	if pipe {
		return unverifiable(sh, "%s reads its script from a pipe", sh.s)
	}
	return nil
}

// script parses f as a shell script and checks it, one level deeper. stdin:
// the shell's standard input is data from the enclosing script.
func (c *checker) script(f field, parent *scope, stdin bool) error {
	if parent.depth >= maxScriptDepth {
		return unverifiable(f, "shells nested deeper than %d", maxScriptDepth)
	}
	s := &scope{
		dirs:    slices.Clone(parent.dirs),
		script:  true,
		depth:   parent.depth + 1,
		arg:     f.arg,
		parser:  parent.parser,
		printer: parent.printer,
	}
	if s.parser == nil {
		s.parser = syntax.NewParser(syntax.Variant(syntax.LangBash))
		s.printer = syntax.NewPrinter()
	}
	file, err := s.parser.Parse(strings.NewReader(f.s), "")
	if err != nil {
		return unverifiable(f, "script does not parse: %w", err)
	}
	if err := c.stmtList(s, stdin, file.Stmts); err != nil {
		return err
	}
	// Function bodies and traps run at unknown times: check them against
	// every directory the script may reach.
	s.repeat++
	for len(s.deferred) > 0 {
		st := s.deferred[0]
		s.deferred = s.deferred[1:]
		if err := c.node(st, s, stdin); err != nil {
			return err
		}
	}
	return nil
}

// node checks every command and word under n. stdin: n's standard input
// is data the script controls (a pipe, a heredoc), so a shell reading it
// runs code that cannot be seen.
func (c *checker) node(n syntax.Node, s *scope, stdin bool) error {
	var err error
	syntax.Walk(n, func(n syntax.Node) bool {
		if err != nil || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			err = c.stmt(n, s, stdin)
			return false
		case *syntax.BinaryCmd:
			if err = c.node(n.X, s, stdin); err != nil {
				return false
			}
			toPipe := n.Op == syntax.Pipe || n.Op == syntax.PipeAll
			err = c.node(n.Y, s, stdin || toPipe)
			return false
		case *syntax.Redirect:
			err = c.redirect(n, s)
			return false
		case *syntax.FuncDecl:
			s.deferred = append(s.deferred, n.Body)
			return false
		case *syntax.WhileClause:
			s.repeat++
			err = c.stmtList(s, stdin, n.Cond, n.Do)
			s.repeat--
			return false
		case *syntax.ForClause:
			if err = c.node(n.Loop, s, stdin); err != nil {
				return false
			}
			s.repeat++
			err = c.stmtList(s, stdin, n.Do)
			s.repeat--
			return false
		case *syntax.Assign:
			err = c.assign(n, s)
			return false
		case *syntax.Word:
			err = c.word(n, s)
			return false
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob:
			err = unverifiable(c.nodeField(n, s), "%s", describe(n))
			return false
		}
		return true
	})
	return err
}

func (c *checker) stmtList(s *scope, stdin bool, lists ...[]*syntax.Stmt) error {
	for _, l := range lists {
		for _, st := range l {
			if err := c.node(st, s, stdin); err != nil {
				return err
			}
		}
	}
	return nil
}

// stmt checks one statement: its command, then its redirections.
func (c *checker) stmt(st *syntax.Stmt, s *scope, stdin bool) error {
	in := stdin || s.stdin || hasStdinData(st.Redirs)
	switch cmd := st.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		if err := c.call(cmd, st, s, stdin || s.stdin); err != nil {
			return err
		}
		if len(cmd.Args) == 0 || (len(cmd.Args) == 1 && cmd.Args[0].Lit() == "exec") {
			// exec <<EOF, exec < <(...): the rest of the script reads it.
			s.stdin = s.stdin || hasStdinData(st.Redirs)
		}
	default:
		if err := c.node(cmd, s, in); err != nil {
			return err
		}
	}
	for _, r := range st.Redirs {
		if err := c.redirect(r, s); err != nil {
			return err
		}
	}
	return nil
}

// hasStdinData reports whether redirections feed standard input from the
// script itself (a heredoc or here-string).
func hasStdinData(rs []*syntax.Redirect) bool {
	return slices.ContainsFunc(rs, func(r *syntax.Redirect) bool {
		return (r.N == nil || r.N.Value == "0") && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc)
	})
}

// call checks a simple command of a script.
func (c *checker) call(call *syntax.CallExpr, st *syntax.Stmt, s *scope, pipe bool) error {
	for _, a := range call.Assigns {
		if err := c.assign(a, s); err != nil {
			return err
		}
	}
	var args []field
	for _, w := range call.Args {
		fs, err := c.fields(w, s)
		if err != nil {
			return err
		}
		args = append(args, fs...)
	}
	return c.command(args, s, st, pipe)
}

// assign checks NAME=VALUE like the argument "NAME=VALUE".
func (c *checker) assign(a *syntax.Assign, s *scope) error {
	if a.Name != nil && a.Name.Value == "CDPATH" {
		return unverifiable(c.nodeField(a, s), "assignment to CDPATH")
	}
	if a.Index != nil {
		if err := c.node(a.Index, s, false); err != nil {
			return err
		}
	}
	if a.Array != nil {
		if err := c.node(a.Array, s, false); err != nil {
			return err
		}
	}
	if a.Value == nil {
		return nil
	}
	fs, err := c.fields(a.Value, s)
	if err != nil {
		return err
	}
	for _, f := range fs {
		f.s = "=" + f.s
		if f.glob >= 0 {
			f.glob++
		}
		if err := c.arg(f, s); err != nil {
			return err
		}
	}
	return nil
}

// word checks a word in any other place (for, case, [[ ]], arrays, ...).
func (c *checker) word(w *syntax.Word, s *scope) error {
	fs, err := c.fields(w, s)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if err := c.arg(f, s); err != nil {
			return err
		}
	}
	return nil
}

// redirect checks the target of a redirection. Heredoc bodies are data, but
// command substitutions in them run.
func (c *checker) redirect(r *syntax.Redirect, s *scope) error {
	var a Access
	switch r.Op {
	case syntax.WordHdoc:
		return c.data(r.Word, s)
	case syntax.Hdoc, syntax.DashHdoc:
		if r.Hdoc == nil {
			return nil
		}
		return c.data(r.Hdoc, s)
	case syntax.RdrIn, syntax.DplIn:
		a = AccessRead
	default:
		a = AccessWrite
	}
	fs, err := c.fields(r.Word, s)
	if err != nil {
		return err
	}
	for _, f := range fs {
		if r.Op == syntax.DplIn || r.Op == syntax.DplOut {
			if strings.Trim(f.s, "0123456789") == "" || strings.Trim(f.s, "0123456789") == "-" {
				continue // >&2, <&0, >&-, 3>&1-: a descriptor, not a file
			}
		}
		p := f.s
		if f.glob >= 0 {
			if p, err = globPrefix(f); err != nil {
				return err
			}
		}
		if err := c.path(p, a, s, f); err != nil {
			return err
		}
	}
	return nil
}

// data checks a word that is data, not a path (heredoc body, here-string):
// only code that runs while expanding it is refused.
func (c *checker) data(w *syntax.Word, s *scope) error {
	var err error
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			if err == nil {
				err = unverifiable(c.nodeField(w, s), "%s", describe(n))
			}
			return false
		}
		return err == nil
	})
	return err
}
