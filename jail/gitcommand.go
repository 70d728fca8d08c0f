package jail

import (
	"path"
	"path/filepath"
	"strings"
)

// This file reads the commands a git configuration runs (core.editor,
// core.fsmonitor, drivers: gitCommandKeys) for the paths of the scripts
// they run, which WithProtectedAgentConfig protects (gitConfigReferences).

// commandWords returns the words of a shell command (shellWords: split
// on unquoted blanks and shell operators, quotes removed; a leading "!"
// of an alias dropped) that look like paths: they hold a "/" or start
// with "." or "~". A word that starts with a shell expansion ("$(git
// rev-parse --show-toplevel)/tools/x", "\"$(git rev-parse
// --show-toplevel)\"/tools/x", "$GIT_WORK_TREE/x", "${PWD}/x") is taken as
// "./rest", relative to where git runs the command (red team R2: the
// expansion used to hide the path); a word with a glob ("tools/*.sh") or
// a later expansion ("tools/lint-$(uname).sh") stands for the directory
// before it; words after "cd DIR" (options skipped) or "env -C DIR" are
// also taken below DIR.
//
// It fails closed where it reads a program's arguments (red team round
// 26, R26a-1): what it names is made read-only for the command, and a
// word too many costs a file the command cannot write, a word missed
// lets the command choose what git runs next. After an interpreter
// (interpreterKinds) the script is a path even without a "/", and:
//   - a shell's options are known: a cluster holding "c" makes the
//     first word after the options ("--" and -o/-O arguments skipped) a
//     program, read as a command of its own (so is eval's, and env -S's);
//   - Python's options are known: -c's program names the modules it may
//     import from the working directory (pythonProgram) and -m its module
//     (pythonModule);
//   - any other interpreter (node, perl, ruby, ...), a task runner
//     (taskRunners: its default file is named too), or an option the
//     tables above do not know: every later word of the command is a
//     path, an option's attached value too (-rscripts/ed, -Iscripts),
//     and a word holding a blank is read as a program, its string
//     literals as paths (perl -e 'exec "scripts/ed.sh"').
//
// What the named script or module reads or runs in turn (a module it
// imports, a make target's recipe) is not followed.
func commandWords(cmd string) []string {
	const mark = expansionMark
	var b strings.Builder
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		if c == '`' { // `git rev-parse --show-toplevel`: as $(...) (red team S6)
			j := strings.IndexByte(cmd[i+1:], '`')
			if j < 0 {
				j = len(cmd) - i - 1
			}
			b.WriteString(mark)
			i += j + 1
			continue
		}
		if c != '$' || i+1 >= len(cmd) {
			b.WriteByte(c)
			continue
		}
		switch n := cmd[i+1]; {
		case n == '(' || n == '{':
			closing := byte(')')
			if n == '{' {
				closing = '}'
			}
			depth, j := 0, i+1
			for ; j < len(cmd); j++ {
				if cmd[j] == n {
					depth++
				} else if cmd[j] == closing {
					if depth--; depth == 0 {
						break
					}
				}
			}
			b.WriteString(mark)
			i = j
		case n == '_' || isAlnum(n):
			j := i + 1
			for j < len(cmd) && (cmd[j] == '_' || isAlnum(cmd[j])) {
				j++
			}
			b.WriteString(mark)
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return commandWordsMarked(b.String(), 0)
}

const (
	// expansionMark stands for a shell expansion in a command
	// (commandWords).
	expansionMark = "\x00"
	// commandSep is the word shellWords puts between two commands.
	commandSep = "\x01"
	// maxProgramDepth bounds the programs inside programs ("sh -c",
	// eval, env -S, a string literal of an -e program) commandWords reads.
	maxProgramDepth = 4
)

// commandWordsMarked is commandWords on cmd with its expansions already
// marked; depth counts the programs it is inside (maxProgramDepth).
func commandWordsMarked(cmd string, depth int) []string {
	s := wordScan{f: shellWords(cmd), depth: depth, seen: map[string]bool{}}
	s.commands()
	return s.out
}

// wordScan reads the words of one command line for commandWords.
type wordScan struct {
	f     []string // shellWords, commandSep between commands
	depth int
	out   []string
	seen  map[string]bool
	cds   []string // the directories of cd, pushd and env -C so far
}

// commands reads every command of s.f.
func (s *wordScan) commands() {
	f := s.f
	for i := 0; i < len(f); {
		w := strings.TrimLeft(f[i], "!")
		i++
		if w == commandSep {
			continue
		}
		s.take(w, false)
		name := commandName(w)
		switch kind := interpreterKinds[name]; {
		case name == "eval":
			j := i
			for j < len(f) && f[j] != commandSep {
				j++
			}
			s.program(strings.Join(f[i:j], " "))
			i = j
		case name == "cd" || name == "pushd":
			i = s.cdArgs(i)
		case name == "env":
			i = s.envArgs(i)
		case kind == shellInterpreter:
			i = s.shellArgs(name, i)
		case kind == pythonInterpreter:
			i = s.pythonArgs(i)
		case kind == otherInterpreter:
			i = s.anyArgs(i)
		case taskRunners[name] != nil:
			for _, n := range taskRunners[name] {
				s.emit("./" + n)
			}
			i = s.anyArgs(i)
		}
	}
}

// commandName is the name a command word runs, as interpreterKinds
// lists it: the base name less a version ("/usr/bin/python3.12" is
// "python").
func commandName(w string) string {
	b := filepath.Base(w)
	if b == "." {
		return b
	}
	return strings.TrimRight(b, "0123456789.")
}

// normalize returns the path the word w stands for (bare: a script or a
// file an option names, taken from the working directory without a "/")
// and whether it looks like a path: an expansion at the start is the
// worktree's top, a glob or a later expansion stands for the directory
// before it.
func (s *wordScan) normalize(w string, bare bool) (string, bool) {
	const mark = expansionMark
	if bare && w != "" && !strings.ContainsAny(w, "/~") && !strings.Contains(w, mark) {
		w = "./" + w
	}
	if strings.HasPrefix(w, mark) {
		rest := strings.TrimLeft(w, mark)
		switch {
		case rest == "" || rest == "/":
			return "", false // "$HOME": not a path we can name
		case strings.HasPrefix(rest, "/.."):
			// "$(git rev-parse --git-dir)/../x": the top is above
			// the expansion; taken from .git (R25d-2).
			w = "./.git" + rest
		case strings.HasPrefix(rest, "/"):
			w = "." + rest
		default:
			// "$(git rev-parse --show-cdup)scripts/x", the relative
			// path to the top followed by a name (R25d-2).
			w = "./" + rest
		}
	}
	isPath := strings.Contains(w, "/") || strings.HasPrefix(w, ".") || strings.HasPrefix(w, "~")
	// A glob, or an expansion after the start ("lint-$(uname).sh":
	// red team round 25, R25b-6), stands for the directory before it.
	if i := strings.IndexAny(w, "*?["+mark); i >= 0 {
		w = w[:strings.LastIndexByte(w[:i], '/')+1]
		if w != "/" {
			w = strings.TrimSuffix(w, "/")
		}
	}
	return w, isPath && w != "" && w != "." && w != ".." && w != "/"
}

// take adds the path w stands for (normalize), if it looks like one.
func (s *wordScan) take(w string, bare bool) {
	if p, ok := s.normalize(w, bare); ok {
		s.emit(p)
	}
}

// emit adds p, and, when p is relative, p below every cd directory met
// so far.
func (s *wordScan) emit(p string) {
	add := func(p string) {
		if !s.seen[p] {
			s.seen[p] = true
			s.out = append(s.out, p)
		}
	}
	add(p)
	if filepath.IsAbs(p) || strings.HasPrefix(p, "~") {
		return
	}
	for _, d := range s.cds {
		if j := filepath.Join(d, p); d != p && j != "." && j != ".." && j != "/" {
			add(j)
		}
	}
}

// cd records w as a directory later relative words may be below, and
// takes it if it looks like a path.
func (s *wordScan) cd(w string) {
	if d, _ := s.normalize(w, false); d != "" && d != "-" {
		s.cds = append(s.cds, d)
	}
	s.take(w, false)
}

// program reads p as a command line of its own (the program of sh -c,
// eval, env -S), its expansions already marked.
func (s *wordScan) program(p string) {
	if s.depth >= maxProgramDepth {
		return
	}
	for _, w := range commandWordsMarked(p, s.depth+1) {
		s.emit(w)
	}
}

// more reports whether f[i] is a word of the current command.
func (s *wordScan) more(i int) bool { return i < len(s.f) && s.f[i] != commandSep }

// value is an option's value: rest (what follows the option's letter in
// its word) when not empty, else the next word of the command, f[*i]
// (then *i moves past it).
func (s *wordScan) value(rest string, i *int) string {
	if rest == "" && s.more(*i) {
		rest = s.f[*i]
		*i++
	}
	return rest
}

// cdArgs reads cd's and pushd's arguments from f[i]: options (-L, -P,
// -e, -@, "--": red team round 26, R26a-1, `cd -P scripts`) are skipped,
// the directory recorded. It returns the index after them.
func (s *wordScan) cdArgs(i int) int {
	for ; s.more(i); i++ {
		w := s.f[i]
		if w == "--" {
			i++
			break
		}
		if len(w) < 2 || w[0] != '-' {
			break
		}
	}
	if s.more(i) {
		s.cd(s.f[i])
		i++
	}
	return i
}

// envArgs reads GNU env's options from f[i]: -C/--chdir DIR is a cd,
// -S/--split-string STRING a program, and any word holding a blank is
// read as a program too (R26a-1). It returns the index of the command
// env runs, which the caller reads as a command.
func (s *wordScan) envArgs(i int) int {
	for s.more(i) {
		w := s.f[i]
		if strings.ContainsAny(w, " \t\n") {
			s.program(w)
		}
		i++
		switch {
		case w == "--":
			return i
		case w == "-C" || w == "--chdir":
			if s.more(i) {
				s.cd(s.f[i])
				i++
			}
		case w == "-S" || w == "--split-string":
			if s.more(i) {
				s.program(s.f[i])
				i++
			}
		case w == "-u" || w == "--unset" || w == "-a" || w == "--argv0":
			if s.more(i) {
				i++
			}
		case strings.HasPrefix(w, "--"):
		case len(w) > 1 && w[0] == '-':
			k := strings.IndexAny(w[1:], "CSua")
			if k < 0 {
				continue
			}
			letter, val := w[1+k], s.value(w[2+k:], &i)
			switch letter {
			case 'C':
				s.cd(val)
			case 'S':
				s.program(val)
			}
		default:
			return i - 1
		}
	}
	return i
}

// shellArgs reads a shell's options and its script or program from f[i]
// (name: commandName of the shell). A cluster holding "c" anywhere (-ec,
// -ce, -euo pipefail -c) makes the first operand a program; -o and -O
// take a word each; "--" and "-" end the options. An option it does not
// know hands the rest of the command to anyArgs (red team round 26,
// R26a-1). It returns the index after the script or program: what
// follows are its arguments.
func (s *wordScan) shellArgs(name string, i int) int {
	fish := name == "fish"
	prog := false
options:
	for s.more(i) {
		w := s.f[i]
		start := i
		i++
		switch {
		case w == "--" || w == "-":
			break options
		case strings.HasPrefix(w, "--"):
			n, ok := shellLongOptions[w]
			if !ok {
				return s.anyArgs(start)
			}
			switch {
			case w == "--command":
				prog = true
			case n == 'f' && s.more(i):
				s.take(s.f[i], true)
			case n == 'p' && s.more(i):
				s.program(s.f[i])
			}
			if n != 0 && s.more(i) {
				i++
			}
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			for _, c := range w[1:] {
				switch {
				case c == 'c':
					prog = true
				case fish && c == 'C':
					if s.more(i) {
						s.program(s.f[i])
						i++
					}
				case c == 'o' || c == 'O' || fish && strings.ContainsRune("dopf", c):
					if s.more(i) {
						i++
					}
				case fish && strings.ContainsRune(fishFlags, c), !fish && strings.ContainsRune(shellFlags, c):
				default:
					return s.anyArgs(start)
				}
			}
		default:
			i--
			break options
		}
	}
	if s.more(i) {
		if prog {
			s.program(s.f[i])
		} else {
			s.take(s.f[i], true)
		}
		i++
	}
	return i
}

// pythonArgs reads Python's options and its script, -c program or -m
// module from f[i]: -W, -X (and Python 2's -Q) take a value, attached or
// the next word; an option it does not know hands the rest of the
// command to anyArgs (red team round 26, R26a-1: `python3 -W ignore
// ed.py` took "ignore" for the script). It returns the index after the
// script, program or module.
func (s *wordScan) pythonArgs(i int) int {
options:
	for s.more(i) {
		w := s.f[i]
		start := i
		i++
		switch {
		case w == "-":
			return i // the program on stdin: the rest are its arguments
		case w == "--":
			break options
		case w == "--check-hash-based-pycs":
			if s.more(i) {
				i++
			}
		case w == "--help" || w == "--version" || strings.HasPrefix(w, "--help-"):
		case strings.HasPrefix(w, "--"):
			return s.anyArgs(start)
		case len(w) > 1 && w[0] == '-':
			for k := 1; k < len(w); k++ {
				c := w[k]
				if strings.IndexByte("cmWXQ", c) >= 0 {
					val := s.value(w[k+1:], &i)
					switch c {
					case 'c':
						s.pythonProgram(val)
						return i
					case 'm':
						s.pythonModule(val)
						return i
					}
					break
				}
				if strings.IndexByte(pythonFlags, c) < 0 {
					return s.anyArgs(start)
				}
			}
		default:
			i--
			break options
		}
	}
	if s.more(i) {
		s.take(s.f[i], true)
		i++
	}
	return i
}

// pythonProgram takes what a `python -c PROGRAM` run in the working
// directory may import from it: every identifier of the program
// (keywords aside) as a module (pythonModule), and its string literals
// (literals). The working directory comes first on sys.path and every
// name can be imported (`import sys, ed`, `__import__("ed")`); the
// directory itself, the worktree's top, is never made read-only (it
// would freeze the workspace: WithProtectedAgentConfig), so its modules
// are named one by one.
func (s *wordScan) pythonProgram(p string) {
	for i := 0; i < len(p); {
		if !isIdentStart(p[i]) {
			i++
			continue
		}
		j := i
		for j < len(p) && (isIdentStart(p[j]) || p[j] >= '0' && p[j] <= '9' || p[j] == '.' && j+1 < len(p) && isIdentStart(p[j+1])) {
			j++
		}
		if m := p[i:j]; !pythonKeywords[m] && (i == 0 || p[i-1] != '.' && (p[i-1] < '0' || p[i-1] > '9')) {
			s.pythonModule(m)
		}
		i = j
	}
	s.literals(p)
}

// pythonModule takes the files Python reads for the module m (a.b.c)
// from the working directory: the package directory of m itself
// (./a/b/c, run as __main__), each level's module forms (./a.py,
// ./a/b.pyc, ./a/b/c.so, …: one beside a namespace package shadows it)
// and each enclosing package's __init__. A C extension's
// version-tagged name (ed.cpython-312-x86_64-linux-gnu.so) is not
// named. An m that is not a module name is taken as a path.
func (s *wordScan) pythonModule(m string) {
	parts := strings.Split(m, ".")
	for _, p := range parts {
		if p == "" || !isIdentStart(p[0]) || strings.ContainsFunc(p, func(r rune) bool {
			return r >= 128 || !isIdentStart(byte(r)) && (r < '0' || r > '9')
		}) {
			s.take(m, true)
			return
		}
	}
	for k := 1; k <= len(parts); k++ {
		name := "./" + strings.Join(parts[:k], "/")
		for _, suf := range pythonSuffixes {
			s.emit(name + suf)
		}
		// The bytecode cache Python loads instead of a source whose
		// mtime and size its header matches (PEP 3147: DIR/__pycache__/
		// NAME.cpython-3XX[.opt-N].pyc), for the module and for a
		// package's __init__: the directory whole, as its names carry
		// the interpreter's tag (red team round 31, R31c-12: a cache
		// beside a protected tools/ed.py ran on git status).
		s.emit("./" + path.Join(strings.Join(parts[:k-1], "/"), "__pycache__"))
		if k < len(parts) {
			for _, suf := range pythonSuffixes {
				s.emit(name + "/__init__" + suf)
			}
		} else {
			s.emit(name)
		}
		s.emit(name + "/__pycache__")
	}
}

// anyArgs reads every word of the command from f[i] as a path, fail
// closed (red team round 26, R26a-1): a plain word as a script, an
// option's attached value too (optionValue), a word holding a blank as
// a program, and the string literals of each word. It returns the index
// of the command's end.
func (s *wordScan) anyArgs(i int) int {
	opt := ""
	for ; s.more(i); i++ {
		w := s.f[i]
		s.literals(w)
		if strings.ContainsAny(w, " \t\n") {
			s.program(w)
		}
		if len(w) > 1 && (w[0] == '-' || w[0] == '+') {
			opt = w
			if !strings.HasPrefix(w, "--") && len(w) > 2 {
				s.optionValue(w[1], w[2:])
			}
			continue
		}
		if len(opt) == 2 {
			s.optionValue(opt[1], w)
		}
		opt = ""
		s.take(w, true)
	}
	return i
}

// optionValue takes the value v of the one-letter option c of an
// interpreter anyArgs reads: as a path, and as what ruby -r (v.rb) and
// perl -M (Foo::Bar: Foo/Bar.pm) load.
func (s *wordScan) optionValue(c byte, v string) {
	s.take(v, true)
	switch c {
	case 'r':
		s.take(v+".rb", true)
		s.take(v+".js", true)
	case 'M', 'm':
		mod, _, _ := strings.Cut(strings.TrimPrefix(v, "-"), "=")
		if mod != "" {
			s.take(strings.ReplaceAll(mod, "::", "/")+".pm", true)
		}
	}
}

// literals takes the quoted strings in w ("...", '...', `...`, a
// backslash escaping the next byte) as paths, and one holding a blank as
// a program too (perl -e 'exec "scripts/ed.sh"', node -e
// 'execSync("sh scripts/ed.sh")').
func (s *wordScan) literals(w string) {
	for i := 0; i < len(w); i++ {
		q := w[i]
		if q != '"' && q != '\'' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(w) && w[j] != q; j++ {
			if w[j] == '\\' && j+1 < len(w) {
				j++
			}
			b.WriteByte(w[j])
		}
		if lit := b.String(); lit != "" {
			s.take(lit, false)
			if strings.ContainsAny(lit, " \t\n") {
				s.program(lit)
			}
		}
		i = j
	}
}

func isIdentStart(c byte) bool { return c == '_' || isAlpha(c) }

// shellWords splits s as a POSIX shell splits a command into words:
// on unquoted blanks and operators ("<>", and "=" so that an
// assignment's value is a word of its own), a word being a run of
// unquoted, single- and double-quoted parts with the quotes removed and
// backslash escapes taken ("\"$(top)\"/scripts/x" is one word, as is
// "my\ tools/ed.sh": red team round 25, R25b-6, where a quote split them
// and the path was lost). An unterminated quote runs to the end. The
// operators that end a command (";|&()" and a newline) put commandSep
// between the commands' words.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	end := func() {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 < len(s) {
				i++
				w.WriteByte(s[i])
			}
			inWord = true
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			inWord = true
		case strings.IndexByte(";|&()\n", c) >= 0:
			end()
			if len(words) > 0 && words[len(words)-1] != commandSep {
				words = append(words, commandSep)
			}
		case strings.IndexByte(" \t<>=", c) >= 0:
			end()
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	end()
	return words
}

// interpreterKind says how commandWords reads an interpreter's
// arguments.
type interpreterKind uint8

const (
	otherInterpreter  interpreterKind = iota + 1 // every later word (anyArgs)
	shellInterpreter                             // shellArgs
	pythonInterpreter                            // pythonArgs
)

// interpreterKinds are the programs whose first operand is a script
// file (or, after -c, -e, a program), by commandName.
var interpreterKinds = map[string]interpreterKind{
	"sh": shellInterpreter, "bash": shellInterpreter, "dash": shellInterpreter, "zsh": shellInterpreter,
	"ksh": shellInterpreter, "mksh": shellInterpreter, "ash": shellInterpreter, "yash": shellInterpreter,
	"posh": shellInterpreter, "fish": shellInterpreter, "source": shellInterpreter, ".": shellInterpreter,
	"python": pythonInterpreter, "pypy": pythonInterpreter,
	"node": otherInterpreter, "nodejs": otherInterpreter, "deno": otherInterpreter, "bun": otherInterpreter,
	"tsx": otherInterpreter, "ts-node": otherInterpreter, "perl": otherInterpreter, "ruby": otherInterpreter,
	"php": otherInterpreter, "lua": otherInterpreter, "luajit": otherInterpreter, "tclsh": otherInterpreter,
	"wish": otherInterpreter, "awk": otherInterpreter, "gawk": otherInterpreter, "mawk": otherInterpreter,
	"nawk": otherInterpreter, "Rscript": otherInterpreter, "julia": otherInterpreter,
}

// taskRunners are programs that run what a file of the working
// directory says: the file is taken, and their arguments as anyArgs
// reads them; what the file runs in turn (a make recipe's script, an
// npm script) is not.
var taskRunners = map[string][]string{
	"make": {"Makefile", "makefile", "GNUmakefile"}, "gmake": {"Makefile", "makefile", "GNUmakefile"},
	"npm": {"package.json"}, "yarn": {"package.json"}, "pnpm": {"package.json"},
	"just": {"justfile", "Justfile", ".justfile"}, "rake": {"Rakefile", "rakefile"},
	"task": {"Taskfile.yml", "Taskfile.yaml"},
}

// shellFlags are the one-letter options of sh, bash, dash, ksh and zsh
// that take no argument (sh(1p), bash(1) "OPTIONS" and set), "c" aside;
// fishFlags fish's.
const (
	shellFlags = "abefhiklmnprstuvxBCDEHPT"
	fishFlags  = "ilnNPvh"
)

// shellLongOptions are the long options of bash, zsh and fish, by what
// their argument is: 0 none, 'f' a file the shell reads (--rcfile), 'p'
// a program (fish's --init-command), 'v' a value.
var shellLongOptions = map[string]byte{
	"--norc": 0, "--noprofile": 0, "--login": 0, "--posix": 0, "--verbose": 0, "--noediting": 0,
	"--restricted": 0, "--debugger": 0, "--dump-strings": 0, "--dump-po-strings": 0, "--wordexp": 0,
	"--pretty-print": 0, "--help": 0, "--version": 0, "--no-rcs": 0, "--no-globalrcs": 0,
	"--no-config": 0, "--private": 0, "--interactive": 0, "--no-execute": 0, "--command": 0,
	"--rcfile": 'f', "--init-file": 'f', "--init-command": 'p',
	"--debug": 'v', "--debug-output": 'v', "--features": 'v', "--profile": 'v', "--profile-startup": 'v',
	"--emulate": 'v',
}

// pythonFlags are Python's one-letter options that take no argument
// (python(1); -R, -3, -t of Python 2).
const pythonFlags = "bBdEhiIOPqsSuvVx?R3t"

// pythonSuffixes are the file names Python's path finder tries for a
// module, the version-tagged extension aside.
var pythonSuffixes = []string{".py", ".pyc", ".so", ".abi3.so"}

// pythonKeywords are Python 3's keywords: no module has their name.
var pythonKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}
