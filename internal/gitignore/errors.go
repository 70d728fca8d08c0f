package gitignore

// PatternError is the error New returns for a pattern it cannot
// compile: Err is path.ErrBadPattern (a malformed bracket class).
type PatternError struct {
	Pattern string
	Err     error
}

func (e *PatternError) Error() string {
	return "gitignore: pattern " + quote(e.Pattern) + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *PatternError) Unwrap() error { return e.Err }
