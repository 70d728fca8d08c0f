package cmdcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/landjail/landjail/jail"
)

// Access is the kind of use a path named by a command is checked for:
// jail's access kinds, so a CheckFunc built on a jail.Workspace passes it
// on as it is.
type Access = jail.Access

const (
	// AccessRead (jail.Read): an ordinary argument, an input redirection
	// (< f), a file given to source or ".".
	AccessRead = jail.Read
	// AccessWrite (jail.Write): the target of an output redirection (> f,
	// >> f, &> f, <> f, >| f).
	AccessWrite = jail.Write
	// AccessExecute (jail.Execute, which covers "use it as a child's
	// working directory"): a command name containing a slash, the
	// command's working directory, and the target of cd or pushd in a
	// script.
	AccessExecute = jail.Execute
)

// CheckFunc resolves unsafePath against the policy and returns nil when the
// policy allows access a, else an error (the jail package's sentinels such
// as jail.ErrOutsideWorkspace, which Check passes through unchanged
// inside a *Error). Check always passes an absolute path:
// relative names are joined (not cleaned, so ".." is resolved by the
// CheckFunc after symlinks) to the directory the command would run in.
type CheckFunc func(unsafePath string, a Access) error

const (
	// maxScriptDepth bounds nested shell invocations (bash -c "sh -c '...'").
	// Real command lines nest two or three deep; deeper nesting is refused
	// with ErrUnverifiable rather than recursed into.
	maxScriptDepth = 8
	// maxDirs bounds the set of directories a script may be in after its
	// cd commands (see Check). Each relative cd can double the set;
	// 32 allows five chained relative cds.
	maxDirs = 32
	// maxFields bounds the words one brace expansion may produce: each
	// is a policy check (a path resolution), and no real command line
	// needs more.
	maxFields = 4096
)

// Check refuses a command before it starts unless every path it can
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
//     component (Read), and every other relative argument that names an
//     existing entry of a directory the command may run in (a relative
//     glob: each entry it matches there, a leading dot matched only
//     explicitly, as the shell's; red team round 26, R26c-4: cat .env);
//     the same for the text after each "=" (and, as a
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
// It does not protect against (what any pre-check of a command line misses:
// command substitution, variable expansion, and more):
// what a program does at run time, since only the command line is seen:
// which arguments a tool writes to (every argument is checked for Read
// only), scripts read from files or standard input (sh script.sh,
// source ./x), code in other interpreters' arguments (python -c, perl -e,
// awk, make recipes, find -exec), paths a program reads from files or its
// environment (xargs, $SECRET_PATH set by the caller), bash re-evaluating
// strings at run time (arithmetic on variable contents, printf -v, read into
// array subscripts), and CDPATH if the child's environment sets it. A
// relative name that does not exist when Check runs is not checked (a
// link the command makes first, then reads by that name, is followed). The
// command found through PATH is not checked; subprocesses can do whatever
// the user can, and a shell under another name (a copy or a symlink) is
// not recognised as one. Only Landlock closes these holes; strict mode
// refuses to run without it.
//
// Returns nil or a *Error wrapping check's error or ErrUnverifiable.
// Never panics on any input. Safe for concurrent use if check is.
func Check(argv []string, dir string, check CheckFunc) error {
	c := &checker{check: check}
	for _, a := range argv {
		c.dotglob = c.dotglob || strings.Contains(a, "dotglob") || strings.Contains(a, "GLOBIGNORE")
	}
	if len(argv) == 0 {
		return &Error{Arg: 0, Err: fmt.Errorf("%w: empty command", ErrUnverifiable)}
	}
	d, err := absDir(dir)
	if err != nil {
		return &Error{Arg: -1, Token: dir, Err: fmt.Errorf("%w: %w", ErrUnverifiable, err)}
	}
	if err := check(d, AccessExecute); err != nil {
		return &Error{Arg: -1, Token: dir, Err: err}
	}
	args := make([]field, len(argv))
	for i, a := range argv {
		args[i] = field{s: a, glob: -1, arg: i, tok: a}
	}
	s := &scope{dirs: []string{d}}
	return c.command(args, s, nil, false)
}

func absDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	return filepath.Abs(dir)
}

type checker struct {
	check CheckFunc
	// dotglob: the command line sets bash's dotglob (shopt -s dotglob,
	// or GLOBIGNORE, which sets it): a glob's * matches a leading dot
	// (red team round 27, R27d-5).
	dotglob bool
}

// field is one word after quote removal (a script word may expand to
// several, by brace expansion).
type field struct {
	s    string // the value
	glob int    // index in s of the first unquoted glob character, or -1
	arg  int    // argv index, for Error.Arg
	tok  string // the word as written, for Error.Token
}

// scope is the state of one script being checked.
type scope struct {
	dirs     []string        // every directory the script may be in
	script   bool            // inside a shell script (builtins apply)
	depth    int             // shell nesting depth, 0 for argv
	repeat   int             // > 0 inside a loop, function body or trap
	arg      int             // argv index of the script
	stdin    bool            // exec redirected the script's stdin to data
	deferred []*syntax.Stmt  // function bodies and traps, checked last
	parser   *syntax.Parser  // shared by the scripts of one check
	printer  *syntax.Printer // renders words for Error.Token
}
