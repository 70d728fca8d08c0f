package cmdcheck

import (
	"errors"
	"fmt"
)

// ErrUnverifiable: Check cannot know statically which paths the
// command would touch (a parameter expansion, a command substitution, a
// script that does not parse, eval, ...), so it refuses the command rather
// than guess. The error wrapping it says what was unverifiable.
var ErrUnverifiable = errors.New("command cannot be verified statically")

// Error is the error Check returns: which argument was refused
// and why.
type Error struct {
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

func (e *Error) Error() string {
	where := fmt.Sprintf("argument %d", e.Arg)
	if e.Arg < 0 {
		where = "working directory"
	}
	return fmt.Sprintf("cmdcheck: refusing command: %s %q: %v", where, e.Token, e.Err)
}

// Unwrap returns Err, so errors.Is(err, jail.ErrOutsideWorkspace) and
// errors.Is(err, ErrUnverifiable) work on the result of Check.
func (e *Error) Unwrap() error { return e.Err }

func unverifiable(f field, format string, a ...any) error {
	return &Error{Arg: f.arg, Token: f.tok, Err: fmt.Errorf("%w: "+format, append([]any{ErrUnverifiable}, a...)...)}
}
