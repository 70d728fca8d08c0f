package fallback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// ErrUnverifiable: CheckCommand cannot know statically which paths the
// command would touch (a parameter expansion, a command substitution, a
// script that does not parse, eval, ...), so it refuses the command rather
// than guess. The error wrapping it says what was unverifiable.
var ErrUnverifiable = errors.New("command cannot be verified statically")

// Access is the kind of use a path named by a command is checked for. The
// values equal jail.Read, jail.Write and jail.Execute, so a CheckFunc built
// on a jail.Workspace converts with jail.Access(a).
type Access uint8

const (
	// AccessRead: an ordinary argument, an input redirection (< f), a file
	// given to source or ".".
	AccessRead Access = iota + 1
	// AccessWrite: the target of an output redirection (> f, >> f, &> f,
	// <> f, >| f).
	AccessWrite
	// AccessExecute: a command name containing a slash, the command's
	// working directory, and the target of cd or pushd in a script
	// (jail.Execute covers "use it as a child's working directory").
	AccessExecute
)

// String returns "read", "write" or "execute".
func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessExecute:
		return "execute"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// CheckFunc resolves unsafePath against the policy and returns nil when the
// policy allows access a, else an error (the jail package's sentinels such
// as jail.ErrOutsideWorkspace, which CheckCommand passes through unchanged
// inside a *CommandError). CheckCommand always passes an absolute path:
// relative names are joined (not cleaned, so ".." is resolved by the
// CheckFunc after symlinks) to the directory the command would run in.
type CheckFunc func(unsafePath string, a Access) error

// CommandError is the error CheckCommand returns: which argument was refused
// and why.
type CommandError struct {
	// Arg is the index in argv of the refused argument, or -1 for the
	// working directory. For a word of a shell script it is the index of
	// the script argument.
	Arg int
	// Token is the offending word: the argument itself, or the word of the
	// script as written in the source.
	Token string
	// Err is the CheckFunc's error, or an error wrapping ErrUnverifiable.
	Err error
}

func (e *CommandError) Error() string {
	where := fmt.Sprintf("argument %d", e.Arg)
	if e.Arg < 0 {
		where = "working directory"
	}
	return fmt.Sprintf("fallback: refusing command: %s %q: %v", where, e.Token, e.Err)
}

// Unwrap returns Err, so errors.Is(err, jail.ErrOutsideWorkspace) and
// errors.Is(err, ErrUnverifiable) work on the result of CheckCommand.
func (e *CommandError) Unwrap() error { return e.Err }

const (
	// cmdMaxScriptDepth bounds nested shell invocations (bash -c "sh -c '...'").
	// Real command lines nest two or three deep; deeper nesting is refused
	// with ErrUnverifiable rather than recursed into.
	cmdMaxScriptDepth = 8
	// cmdMaxDirs bounds the set of directories a script may be in after its
	// cd commands (see CheckCommand). Each relative cd can double the set;
	// 32 allows five chained relative cds.
	cmdMaxDirs = 32
	// cmdMaxFields bounds the words one brace expansion may produce: each
	// is a policy check (a path resolution), and no real command line
	// needs more.
	cmdMaxFields = 4096
)

// CheckCommand refuses a command before it starts unless every path it can
// be seen to name resolves inside the policy that check enforces. It is the
// pure-path check that runs instead of Landlock on kernels without it
// (before 5.13, or with the syscalls blocked): confinement is then "path-check
// only", a pre-check of the command line, not a sandbox.
//
// What is checked, each path with check (relative paths against the
// directory the command runs in):
//   - dir, the working directory (Execute). "" means the caller's current
//     directory; a relative dir is made absolute against it, as os/exec does.
//   - argv[0] when it contains a slash (Execute).
//   - every argument that is absolute, starts with "~", or has a ".."
//     component (Read); the same for the text after each "=" (and, as a
//     list, each ":"-separated element of it: "--file=/etc/x", "PATH=/a:/b", "if=/x"),
//     and, for an argument starting with "-", the value attached to a short
//     option ("-I/usr/include", "-L../lib") and each ","-separated element
//     ("-Wl,-rpath,/x").
//   - when argv, or any command of a script, invokes a shell (sh, bash,
//     dash, zsh, ksh, mksh, ash, fish with -c, including through
//     "/usr/bin/env bash -c", "bash -lc", "timeout 5 sh -c", "env -S"), the
//     script, parsed with mvdan.cc/sh/v3/syntax as bash: every word of every
//     command as above, redirection targets (Write for > >> &> <> >|, Read
//     for <), the targets of cd and pushd (Execute), files given to source
//     and ".", heredoc input of a shell (bash <<EOF), nested shell
//     invocations recursively up to 8 levels.
//
// A script may cd: every cd target is checked, and later relative paths are
// checked against every directory the script may be in (the starting
// directory and each cd target: a cd may fail or sit in a branch). A cd in a
// loop, a function body or a trap is unverifiable.
//
// Equivalent to running policy.Check on each path-like token of
// strings.Fields(script), but safe because words are split, quoted and
// escaped as the shell does, so quoting, escapes, brace expansion
// ("/e{tc,x}/passwd"), globs and nested shells cannot hide a path.
//
// Allowed without calling check: /dev/null, /dev/zero, /dev/stdin,
// /dev/stdout, /dev/stderr, /dev/tty and /dev/fd/0 to /dev/fd/2, exactly as
// written (they are what commands use for "no file" and the standard
// streams). URLs ("https://host/x", "git@host:x") are not paths;
// "file:///x" is the path /x. "~" and "~/x" are the caller's home directory
// (os.UserHomeDir), which is at least as strict as the child's $HOME inside
// a workspace; "~user", "~+" and "~-" are unverifiable. A glob is checked
// through its fixed leading directory ("/etc/*.conf" checks /etc); a glob
// that could match ".." is unverifiable.
//
// Fails closed with an error wrapping ErrUnverifiable when a word's value
// cannot be known statically: parameter expansion ($X, ${X}), command
// substitution ($(...), backquotes), process substitution, arithmetic
// expansion, extended globs, $'...' with escapes, eval, alias, cd - ; a
// glob as a command name (ba?h); literal text in a script containing "$(",
// "${" or a backquote (let, printf -v, declare, read and [[ -v ]] evaluate
// array subscripts in strings, so 'a[$(cat /etc/shadow)]' is code); when a
// script does not parse; when shells nest deeper than 8; when a shell reads
// its script from a pipe or from data of the enclosing script; when a brace
// expansion yields more than 4096 words; when argv is empty.
//
// It does not protect against (seed 002's "what's NOT enforced", and more):
// what a program does at run time, since only the command line is seen:
// which arguments a tool writes to (every argument is checked for Read
// only), scripts read from files or standard input (sh script.sh,
// source ./x), code in other interpreters' arguments (python -c, perl -e,
// awk, make recipes, find -exec), paths a program reads from files or its
// environment (xargs, $SECRET_PATH set by the caller), bash re-evaluating
// strings at run time (arithmetic on variable contents, printf -v, read into
// array subscripts), and CDPATH if the child's environment sets it. A name
// without a slash, "~" or ".." (cat link) is not checked, so a symlink
// already in the workspace that points outside is followed by the child. The
// command found through PATH is not checked; subprocesses can do whatever
// the user can, and a shell under another name (a copy or a symlink) is
// not recognised as one. Only Landlock closes these holes; strict mode
// refuses to run without it.
//
// Returns nil or a *CommandError wrapping check's error or ErrUnverifiable.
// Never panics on any input. Safe for concurrent use if check is.
func CheckCommand(argv []string, dir string, check CheckFunc) error {
	c := &cmdChecker{check: check}
	if len(argv) == 0 {
		return &CommandError{Arg: 0, Err: fmt.Errorf("%w: empty command", ErrUnverifiable)}
	}
	d, err := cmdAbsDir(dir)
	if err != nil {
		return &CommandError{Arg: -1, Token: dir, Err: fmt.Errorf("%w: %w", ErrUnverifiable, err)}
	}
	if err := check(d, AccessExecute); err != nil {
		return &CommandError{Arg: -1, Token: dir, Err: err}
	}
	args := make([]cmdField, len(argv))
	for i, a := range argv {
		args[i] = cmdField{s: a, glob: -1, arg: i, tok: a}
	}
	s := &cmdScope{dirs: []string{d}}
	return c.command(args, s, nil, false)
}

func cmdAbsDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	return filepath.Abs(dir)
}

type cmdChecker struct {
	check CheckFunc
}

// cmdField is one word after quote removal (a script word may expand to
// several, by brace expansion).
type cmdField struct {
	s    string // the value
	glob int    // index in s of the first unquoted glob character, or -1
	arg  int    // argv index, for CommandError.Arg
	tok  string // the word as written, for CommandError.Token
}

// cmdScope is the state of one script being checked.
type cmdScope struct {
	dirs     []string        // every directory the script may be in
	script   bool            // inside a shell script (builtins apply)
	depth    int             // shell nesting depth, 0 for argv
	repeat   int             // > 0 inside a loop, function body or trap
	arg      int             // argv index of the script
	stdin    bool            // exec redirected the script's stdin to data
	deferred []*syntax.Stmt  // function bodies and traps, checked last
	parser   *syntax.Parser  // shared by the scripts of one check
	printer  *syntax.Printer // renders words for CommandError.Token
}

func cmdUnverifiable(f cmdField, format string, a ...any) error {
	return &CommandError{Arg: f.arg, Token: f.tok, Err: fmt.Errorf("%w: "+format, append([]any{ErrUnverifiable}, a...)...)}
}

// cmdDevices are allowed without a check: the names commands use for "no file"
// and for their standard streams.
var cmdDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/tty": true,
	"/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true,
	"/dev/fd/0": true, "/dev/fd/1": true, "/dev/fd/2": true,
}

// path checks p, a name the command uses as a path, for access a, against
// every directory the command may run in.
func (c *cmdChecker) path(p string, a Access, s *cmdScope, f cmdField) error {
	if p == "" || cmdDevices[p] {
		return nil
	}
	if p[0] == '~' {
		rest, ok := strings.CutPrefix(p, "~")
		if ok && rest != "" && rest[0] != '/' {
			return cmdUnverifiable(f, "%q names another user's home directory", p)
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return cmdUnverifiable(f, "home directory for %q: %w", p, err)
		}
		p = home + rest
	}
	if filepath.IsAbs(p) {
		if err := c.check(p, a); err != nil {
			return &CommandError{Arg: f.arg, Token: f.tok, Err: err}
		}
		return nil
	}
	for _, d := range s.dirs {
		if err := c.check(d+"/"+p, a); err != nil {
			return &CommandError{Arg: f.arg, Token: f.tok, Err: err}
		}
	}
	return nil
}

// cmdPathLike reports whether an argument is checked as a path: absolute,
// starting with "~", or with a ".." component.
func cmdPathLike(p string) bool {
	if p == "" {
		return false
	}
	return p[0] == '/' || p[0] == '~' || hasDotDot(p)
}

func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// cmdSplitURL reports whether p is a URL rather than a path: "scheme://...",
// or scp-like "user@host:path". For "file://[host]/x" it returns the path
// /x instead.
func cmdSplitURL(p string) (path string, isURL bool) {
	if len(p) >= 7 && strings.EqualFold(p[:7], "file://") {
		rest := p[7:]
		if i := strings.IndexByte(rest, '/'); i > 0 {
			rest = rest[i:] // file://localhost/etc/passwd
		}
		return rest, false
	}
	if i := strings.Index(p, "://"); i > 0 && cmdIsScheme(p[:i]) {
		return "", true
	}
	if at := strings.IndexByte(p, '@'); at > 0 {
		if colon := strings.IndexByte(p, ':'); colon > at && !strings.ContainsRune(p[:colon], '/') {
			return "", true
		}
	}
	return p, false
}

func cmdIsScheme(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// cmdCandidates returns the parts of an argument that are checked as paths
// (see CheckCommand).
func cmdCandidates(t string) []string {
	var out []string
	add := func(p string) {
		// A URL with a ".." component is checked anyway: to a tool that
		// takes it as a local name, x@y:/../../etc is a relative path.
		if q, isURL := cmdSplitURL(p); isURL && !hasDotDot(p) {
			return
		} else if !isURL {
			p = q
		}
		if cmdPathLike(p) {
			out = append(out, p)
		}
	}
	add(t)
	for i := range len(t) {
		if t[i] != '=' {
			continue
		}
		v := t[i+1:]
		add(v)
		if _, isURL := cmdSplitURL(v); strings.Contains(v, ":") && (!isURL || hasDotDot(v)) {
			for e := range strings.SplitSeq(v, ":") {
				add(e)
			}
		}
	}
	if strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") {
		// -I/usr/include, -xf/etc/x, -L../lib: skip the option letters.
		i := 1
		for i < len(t) && cmdIsAlnum(t[i]) {
			i++
		}
		add(t[i:])
		for _, e := range strings.Split(t, ",")[1:] {
			add(e)
		}
	}
	return out
}

func cmdIsAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// arg checks one argument (not a command name) for Read.
func (c *cmdChecker) arg(f cmdField, s *cmdScope) error {
	t := f.s
	if f.glob >= 0 {
		var err error
		if t, err = cmdGlobPrefix(f); err != nil {
			return err
		}
	}
	for _, p := range cmdCandidates(t) {
		if err := c.path(p, AccessRead, s, f); err != nil {
			return err
		}
	}
	return nil
}

// cmdGlobPrefix returns the fixed directory in front of a glob ("/etc/" for
// "/etc/*.conf"), which is what the shell reads to expand it. The matches are
// names in that directory; a pattern component that could match ".." (one
// starting with "." or "["), or a ".." after the pattern, would leave it.
func cmdGlobPrefix(f cmdField) (string, error) {
	prefix := f.s[:strings.LastIndexByte(f.s[:f.glob], '/')+1]
	for comp := range strings.SplitSeq(f.s[len(prefix):], "/") {
		if comp == ".." || strings.ContainsAny(comp, "*?[") && (comp[0] == '.' || comp[0] == '[') {
			return "", cmdUnverifiable(f, "glob %q may match ..", f.s)
		}
	}
	return prefix, nil
}

// cmdShells are the names (after filepath.Base) whose -c argument is a script.
var cmdShells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"mksh": true, "ash": true, "rbash": true, "yash": true, "posh": true,
	"lksh": true, "fish": true,
}

// cmdWrappers run the rest of their arguments as a command; a shell after them
// (and their options) is in command position.
var cmdWrappers = map[string]bool{
	"env": true, "exec": true, "command": true, "builtin": true,
	"nohup": true, "nice": true, "sudo": true, "doas": true,
	"timeout": true, "stdbuf": true, "setsid": true, "time": true,
	"xargs": true, "ionice": true, "chrt": true, "taskset": true,
	"busybox": true, "unbuffer": true,
}

// cmdShellMode is how a shell invocation gets its script.
type cmdShellMode int

const (
	cmdShellStdin  cmdShellMode = iota // no -c and no operand: reads standard input
	cmdShellScript                     // -c SCRIPT
	cmdShellFile                       // an operand: the script is a file
	cmdShellNoArg                      // -c without its operand
)

// cmdShellArgs parses the options after a shell's name, as bash does: the
// script of -c is the first operand after all options; -o and -O take a
// value; --rcfile and --init-file take one; "--command=X" (fish) is a
// script.
func cmdShellArgs(args []cmdField) (cmdShellMode, cmdField) {
	cmd, stdin := false, false
	for i := 0; i < len(args); i++ {
		t := args[i].s
		switch {
		case t == "--" || t == "-":
			if i+1 < len(args) && cmd {
				return cmdShellScript, args[i+1]
			}
			if i+1 < len(args) && !stdin {
				return cmdShellFile, args[i+1]
			}
			i = len(args)
		case strings.HasPrefix(t, "--"):
			name, v, hasV := strings.Cut(t[2:], "=")
			switch name {
			case "command", "init-command":
				if hasV {
					return cmdShellScript, cmdField{s: v, glob: args[i].glob, arg: args[i].arg, tok: args[i].tok}
				}
				if i+1 < len(args) {
					return cmdShellScript, args[i+1]
				}
				return cmdShellNoArg, cmdField{}
			case "rcfile", "init-file":
				if !hasV {
					i++
				}
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, ch := range t[1:] {
				switch ch {
				case 'c', 'C':
					cmd = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
		default:
			if cmd {
				return cmdShellScript, args[i]
			}
			if stdin {
				return cmdShellStdin, cmdField{}
			}
			return cmdShellFile, args[i]
		}
	}
	if cmd {
		return cmdShellNoArg, cmdField{}
	}
	return cmdShellStdin, cmdField{}
}

// cmdInCommandPosition reports whether args[i] is the program that runs: the
// first word, or after wrappers and their options, assignments and numbers
// (env -i X=1 bash, timeout 5 sh, nice -n 10 bash).
func cmdInCommandPosition(args []cmdField, i int) bool {
	for _, a := range args[:i] {
		t := a.s
		switch {
		case cmdWrappers[filepath.Base(t)], strings.HasPrefix(t, "-"):
		case t != "" && t[0] >= '0' && t[0] <= '9':
		case strings.Contains(t, "=") && !strings.Contains(t[:strings.IndexByte(t, '=')], "/"):
		default:
			return false
		}
	}
	return true
}

// command checks one simple command: argv at the top level, or one command
// of a script. st is the script statement it belongs to (nil for argv), pipe
// whether its standard input comes from a pipe.
func (c *cmdChecker) command(args []cmdField, s *cmdScope, st *syntax.Stmt, pipe bool) error {
	if len(args) == 0 {
		return nil
	}
	if name := args[0]; strings.ContainsRune(name.s, '/') {
		if name.glob >= 0 {
			return cmdUnverifiable(name, "glob in command name")
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
		if a.glob >= 0 && cmdInCommandPosition(args, i) {
			// ba?h -c ...: the name depends on the files in the directory.
			return cmdUnverifiable(a, "glob as command name")
		}
		base := filepath.Base(a.s)
		if base == "env" {
			if err := c.envSplit(args[i+1:], s); err != nil {
				return err
			}
		}
		if !cmdShells[base] {
			continue
		}
		mode, script := cmdShellArgs(args[i+1:])
		switch mode {
		case cmdShellScript:
			if script.glob >= 0 {
				return cmdUnverifiable(script, "glob as shell script")
			}
			in := pipe || st != nil && cmdHasStdinData(st.Redirs)
			if err := c.script(script, s, in); err != nil {
				return err
			}
		case cmdShellNoArg:
			return cmdUnverifiable(a, "%s -c without a script", a.s)
		case cmdShellStdin:
			if !cmdInCommandPosition(args, i) {
				continue
			}
			if err := c.stdinScript(a, s, st, pipe); err != nil {
				return err
			}
		}
	}
	return nil
}

// envSplit checks the string of "env -S STRING" (env splits it into a
// command line much as a shell would): args follow "env".
func (c *cmdChecker) envSplit(args []cmdField, s *cmdScope) error {
	for i := 0; i < len(args); i++ {
		t := args[i].s
		if t == "--" || !strings.HasPrefix(t, "-") {
			return nil
		}
		if args[i].glob >= 0 || i+1 < len(args) && args[i+1].glob >= 0 {
			return cmdUnverifiable(args[i], "glob in env options")
		}
		if v, ok := strings.CutPrefix(t, "--split-string"); ok {
			if v, ok = strings.CutPrefix(v, "="); ok {
				return c.script(cmdField{s: v, glob: -1, arg: args[i].arg, tok: args[i].tok}, s, false)
			}
			if i+1 < len(args) {
				return c.script(args[i+1], s, false)
			}
			return nil
		}
		if strings.HasPrefix(t, "--") {
			if !strings.Contains(t, "=") && (t == "--unset" || t == "--chdir") {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'S':
				if j+1 < len(t) {
					return c.script(cmdField{s: t[j+1:], glob: -1, arg: args[i].arg, tok: args[i].tok}, s, false)
				}
				if i+1 < len(args) {
					return c.script(args[i+1], s, false)
				}
				return nil
			case 'u', 'C':
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			}
		}
	}
	return nil
}

// stdinScript handles a shell reading its script from standard input: a
// heredoc or here-string is the script; a pipe is unverifiable; otherwise
// the input is the caller's and is not inspected.
func (c *cmdChecker) stdinScript(sh cmdField, s *cmdScope, st *syntax.Stmt, pipe bool) error {
	if st != nil {
		for _, r := range slices.Backward(st.Redirs) {
			if r.N != nil && r.N.Value != "0" {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				body, ok := c.heredocText(r)
				if !ok {
					return cmdUnverifiable(sh, "heredoc script with expansions")
				}
				return c.script(cmdField{s: body, glob: -1, arg: s.arg, tok: body}, s, false)
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
		return cmdUnverifiable(sh, "%s reads its script from a pipe", sh.s)
	}
	return nil
}

// heredocText returns the body of a heredoc as the shell feeds it, if it is
// known statically: always when the delimiter is quoted, else when it has no
// expansions.
func (c *cmdChecker) heredocText(r *syntax.Redirect) (string, bool) {
	if r.Hdoc == nil {
		return "", true
	}
	quoted := slices.ContainsFunc(r.Word.Parts, func(p syntax.WordPart) bool {
		l, ok := p.(*syntax.Lit)
		return !ok || strings.ContainsRune(l.Value, '\\')
	})
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(l.Value)
		} else {
			b.WriteString(cmdUnescapeDQ(l.Value, "$`\\\n"))
		}
	}
	return b.String(), true
}

// script parses f as a shell script and checks it, one level deeper. stdin:
// the shell's standard input is data from the enclosing script.
func (c *cmdChecker) script(f cmdField, parent *cmdScope, stdin bool) error {
	if parent.depth >= cmdMaxScriptDepth {
		return cmdUnverifiable(f, "cmdShells nested deeper than %d", cmdMaxScriptDepth)
	}
	s := &cmdScope{
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
		return cmdUnverifiable(f, "script does not parse: %w", err)
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
func (c *cmdChecker) node(n syntax.Node, s *cmdScope, stdin bool) error {
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
			err = cmdUnverifiable(c.nodeField(n, s), "%s", cmdDescribe(n))
			return false
		}
		return true
	})
	return err
}

func (c *cmdChecker) stmtList(s *cmdScope, stdin bool, lists ...[]*syntax.Stmt) error {
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
func (c *cmdChecker) stmt(st *syntax.Stmt, s *cmdScope, stdin bool) error {
	in := stdin || s.stdin || cmdHasStdinData(st.Redirs)
	switch cmd := st.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		if err := c.call(cmd, st, s, stdin || s.stdin); err != nil {
			return err
		}
		if len(cmd.Args) == 0 || (len(cmd.Args) == 1 && cmd.Args[0].Lit() == "exec") {
			// exec <<EOF, exec < <(...): the rest of the script reads it.
			s.stdin = s.stdin || cmdHasStdinData(st.Redirs)
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

// cmdHasStdinData reports whether redirections feed standard input from the
// script itself (a heredoc or here-string).
func cmdHasStdinData(rs []*syntax.Redirect) bool {
	return slices.ContainsFunc(rs, func(r *syntax.Redirect) bool {
		return (r.N == nil || r.N.Value == "0") && (r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc)
	})
}

// call checks a simple command of a script.
func (c *cmdChecker) call(call *syntax.CallExpr, st *syntax.Stmt, s *cmdScope, pipe bool) error {
	for _, a := range call.Assigns {
		if err := c.assign(a, s); err != nil {
			return err
		}
	}
	var args []cmdField
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
func (c *cmdChecker) assign(a *syntax.Assign, s *cmdScope) error {
	if a.Name != nil && a.Name.Value == "CDPATH" {
		return cmdUnverifiable(c.nodeField(a, s), "assignment to CDPATH")
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
func (c *cmdChecker) word(w *syntax.Word, s *cmdScope) error {
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
func (c *cmdChecker) redirect(r *syntax.Redirect, s *cmdScope) error {
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
			if p, err = cmdGlobPrefix(f); err != nil {
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
func (c *cmdChecker) data(w *syntax.Word, s *cmdScope) error {
	var err error
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			if err == nil {
				err = cmdUnverifiable(c.nodeField(w, s), "%s", cmdDescribe(n))
			}
			return false
		}
		return err == nil
	})
	return err
}

// builtin applies the shell builtins that change what paths mean or run
// strings as code.
func (c *cmdChecker) builtin(args []cmdField, s *cmdScope) error {
	for len(args) > 1 && (args[0].s == "builtin" || args[0].s == "command") {
		args = args[1:]
	}
	switch args[0].s {
	case "eval", "alias":
		return cmdUnverifiable(args[0], "%s runs a string as code", args[0].s)
	case "source", ".":
		if len(args) > 1 {
			return c.path(args[1].s, AccessRead, s, args[1])
		}
	case "trap":
		if len(args) > 1 && args[1].s != "" && args[1].s != "-" && !strings.HasPrefix(args[1].s, "-") {
			file, err := s.parser.Parse(strings.NewReader(args[1].s), "")
			if err != nil {
				return cmdUnverifiable(args[1], "trap action does not parse: %w", err)
			}
			s.deferred = append(s.deferred, file.Stmts...)
		}
	case "cd", "pushd", "chdir":
		return c.cd(args, s)
	}
	return nil
}

// cd checks the target of cd or pushd (Execute) and adds it to the
// directories the script may be in.
func (c *cmdChecker) cd(args []cmdField, s *cmdScope) error {
	name := args[0]
	if s.repeat > 0 {
		return cmdUnverifiable(name, "%s in a loop, function or trap", name.s)
	}
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0].s, "-") && len(args[0].s) > 1 {
		t := args[0].s
		args = args[1:]
		if t == "--" {
			break
		}
		if name.s == "pushd" && (t[1] >= '0' && t[1] <= '9') {
			return nil // pushd -N rotates the stack: directories already known
		}
	}
	var target cmdField
	switch {
	case len(args) == 0 && name.s == "pushd":
		return nil // swaps the top two: directories already known
	case len(args) == 0:
		target = cmdField{s: "~", glob: -1, arg: name.arg, tok: name.tok}
	default:
		target = args[0]
	}
	switch {
	case target.s == "-":
		return cmdUnverifiable(target, "cd - returns to $OLDPWD")
	case target.glob >= 0:
		return cmdUnverifiable(target, "glob as cd target")
	case strings.HasPrefix(target.s, "+") && name.s == "pushd":
		return nil
	case target.s == "":
		return nil
	}
	if err := c.path(target.s, AccessExecute, s, target); err != nil {
		return err
	}
	p := target.s
	if p[0] == '~' {
		home, err := os.UserHomeDir()
		if err != nil {
			return cmdUnverifiable(target, "home directory: %w", err)
		}
		p = home + p[1:]
	}
	var add []string
	if filepath.IsAbs(p) {
		add = []string{p}
	} else {
		for _, d := range s.dirs {
			add = append(add, d+"/"+p)
		}
	}
	for _, d := range add {
		if !slices.Contains(s.dirs, d) {
			s.dirs = append(s.dirs, d)
		}
	}
	if len(s.dirs) > cmdMaxDirs {
		return cmdUnverifiable(target, "script may be in more than %d directories", cmdMaxDirs)
	}
	return nil
}

// fields expands a word as the shell would if its value is static: brace
// expansion, then quote removal, tilde left in place for path. Anything
// dynamic is unverifiable.
func (c *cmdChecker) fields(w *syntax.Word, s *cmdScope) ([]cmdField, error) {
	tok := c.render(w, s)
	words := []*syntax.Word{w}
	if syntax.SplitBraces(w) {
		words = words[:0]
		for bw, err := range expand.BracesSeq(nil, w) {
			if err != nil {
				return nil, cmdUnverifiable(cmdField{arg: s.arg, tok: tok}, "brace expansion: %w", err)
			}
			if len(words) == cmdMaxFields {
				return nil, cmdUnverifiable(cmdField{arg: s.arg, tok: tok}, "brace expansion to more than %d words", cmdMaxFields)
			}
			words = append(words, bw)
		}
	}
	out := make([]cmdField, 0, len(words))
	for _, bw := range words {
		f := cmdField{glob: -1, arg: s.arg, tok: tok}
		var b strings.Builder
		for _, part := range bw.Parts {
			switch p := part.(type) {
			case *syntax.Lit:
				cmdUnescapeLit(&b, p.Value, &f.glob)
			case *syntax.SglQuoted:
				if p.Dollar && strings.ContainsRune(p.Value, '\\') {
					return nil, cmdUnverifiable(f, "$'...' with escapes")
				}
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, dp := range p.Parts {
					l, ok := dp.(*syntax.Lit)
					if !ok {
						return nil, cmdUnverifiable(f, "%s", cmdDescribe(dp))
					}
					b.WriteString(cmdUnescapeDQ(l.Value, "$`\"\\\n"))
				}
			default:
				return nil, cmdUnverifiable(f, "%s", cmdDescribe(part))
			}
		}
		f.s = b.String()
		if strings.Contains(f.s, "$(") || strings.Contains(f.s, "${") || strings.Contains(f.s, "`") {
			// let, printf -v, declare, read and [[ -v ]] evaluate array
			// subscripts in strings: 'a[$(cat /etc/shadow)]' runs.
			return nil, cmdUnverifiable(f, "text that bash may evaluate as code")
		}
		out = append(out, f)
	}
	return out, nil
}

// cmdUnescapeLit appends an unquoted literal after quote removal and records
// the first unquoted glob character.
func cmdUnescapeLit(b *strings.Builder, v string, glob *int) {
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

// cmdUnescapeDQ removes the backslashes that escape one of special, as inside
// double quotes; a backslash-newline disappears.
func cmdUnescapeDQ(v, special string) string {
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

func cmdDescribe(n syntax.Node) string {
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

// render returns the source text of n for CommandError.Token.
func (c *cmdChecker) render(n syntax.Node, s *cmdScope) string {
	var b strings.Builder
	if s.printer == nil || s.printer.Print(&b, n) != nil {
		return ""
	}
	return b.String()
}

func (c *cmdChecker) nodeField(n syntax.Node, s *cmdScope) cmdField {
	return cmdField{glob: -1, arg: s.arg, tok: c.render(n, s)}
}
