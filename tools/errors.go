package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/landjail/landjail/cmdcheck"
	"github.com/landjail/landjail/jail"
)

// Sentinel errors of the tools, beside the jail sentinels (jail.ErrOutsideWorkspace,
// jail.ErrNotRead, ...) that the Workspace returns. Every tool error is an
// *Error wrapping one of them, so callers test with errors.Is.
var (
	// ErrOutsideScope: the path lies inside the operator's policy but
	// outside every root the Toolkit was narrowed to (Narrow; the MCP
	// client's roots).
	ErrOutsideScope = errors.New("path is outside the client's roots")
	// ErrInvalidArgs: the arguments are not valid JSON for the tool, miss a
	// required field, hold an unknown one, or a value is out of range.
	ErrInvalidArgs = errors.New("invalid arguments")
	// ErrUnknownTool: Call was given a name Definitions does not list.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrCanceled: Call's context ended before a file tool's answer
	// (the client canceled the call, or the server is ending); the
	// tool's work may still finish meanwhile (Call).
	ErrCanceled = errors.New("call canceled")
	// ErrPolicyRefused: the policy cannot be planned for the workspace
	// as it is now (Toolkit.Replan failed: a denied name that is a link
	// through /proc, landlock.ErrNotEnforceable; the walk limit): the
	// file tools refuse every call until a plan succeeds. The planning's
	// error is wrapped too, and names what to remove.
	ErrPolicyRefused = errors.New("the policy cannot be enforced for the workspace as it is now")
	// ErrNoMatch: edit_file's old_string does not occur in the file.
	ErrNoMatch = errors.New("old_string not found in the file")
	// ErrAmbiguous: edit_file's old_string occurs more than once and
	// replace_all is false.
	ErrAmbiguous = errors.New("old_string is not unique in the file")
	// ErrNotRegular: read_file or edit_file was pointed at a directory, a
	// device, a FIFO or a socket.
	ErrNotRegular = errors.New("not a regular file")
	// ErrFileTooLarge: read_file or edit_file was pointed at a file
	// larger than Limits.FileBytes (by its size, or by what a read
	// returned when the size lied: a file that grew, a /proc file). It
	// arrives inside a *fs.PathError whose message gives the size, the
	// cap and the --max-file-size flag that sets it.
	ErrFileTooLarge = errors.New("file is larger than the tools' size cap")
	// ErrPatchConflict: a hunk of patch's diff does not match the file
	// at its stated line numbers (the message names the file, the hunk,
	// the differing line and the nearest matching position).
	ErrPatchConflict = errors.New("patch does not apply")
	// ErrPatchUnsupported: patch's diff holds what patch refuses to
	// write: binary data, a symlink (mode 120000), a submodule (160000),
	// a mode other than 100644 or 100755.
	ErrPatchUnsupported = errors.New("patch holds an unsupported change")
)

// Error is the error every tool returns: the tool, the path (or pattern,
// or command) as the caller gave it, the underlying error (a jail sentinel
// inside a *fs.PathError, an errno, or one of this package's sentinels)
// and a message written for a language model: what was refused, why, and
// what to do instead. Error() returns that message; Unwrap the cause.
type Error struct {
	Tool string
	Path string
	Err  error
	msg  string
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// fail wraps err for tool and the caller's path with a model-facing
// message.
func (k *Toolkit) fail(tool, unsafePath string, err error) error {
	var te *Error
	if errors.As(err, &te) {
		return err
	}
	var b strings.Builder
	b.WriteString(tool)
	if unsafePath != "" {
		fmt.Fprintf(&b, " %q", unsafePath)
	}
	b.WriteString(": ")
	b.WriteString(k.reason(err))
	b.WriteString(k.refusalHint(tool, unsafePath, err))
	return &Error{Tool: tool, Path: unsafePath, Err: err, msg: b.String()}
}

// reason turns an error into one plain sentence with a hint.
func (k *Toolkit) reason(err error) string {
	switch {
	case errors.Is(err, ErrOutsideScope):
		if len(k.scope) == 0 {
			return "refused: the client listed no roots inside the workspace, so no path is allowed"
		}
		return fmt.Sprintf("refused: the path is outside the client's roots (%s)", strings.Join(k.scope, ", "))
	case errors.Is(err, cmdcheck.ErrUnverifiable):
		return fmt.Sprintf("refused: this kernel cannot confine the shell, so commands are checked statically before they run, and this one cannot be (%v); use a simpler command without substitutions, or the file tools", err)
	case errors.Is(err, ErrPolicyRefused):
		return fmt.Sprintf("refused: %v; every file tool is refused until it can be (bash too): remove what it names, then retry", err)
	case errors.Is(err, jail.ErrOutsideWorkspace):
		return fmt.Sprintf("refused: the path resolves outside the workspace (%s) and every allowed root; use a path inside the workspace", k.WS.Root())
	case errors.Is(err, jail.ErrDenied):
		return "refused: the policy denies access to this path"
	case errors.Is(err, jail.ErrReadOnly):
		return "refused: the path is in a read-only root"
	case errors.Is(err, jail.ErrNotExecutable):
		return "refused: the path is not in an executable root"
	case errors.Is(err, jail.ErrAbsolutePath):
		return "refused: absolute paths are not allowed; use a path relative to the workspace root"
	case errors.Is(err, jail.ErrInvalidPath):
		return "refused: invalid path (empty, a NUL byte, or longer than 4096 bytes)"
	case errors.Is(err, jail.ErrNotRead):
		return "refused: the file exists but has not been read in this session; call read_file on it first"
	case errors.Is(err, jail.ErrStale):
		return "refused: the file changed on disk since it was last read; call read_file again, then retry"
	case errors.Is(err, jail.ErrHardlinked):
		return "refused: the file has more than one hard link and may alias a file outside the workspace"
	case errors.Is(err, ErrFileTooLarge):
		var pe *fs.PathError
		msg := err.Error()
		if errors.As(err, &pe) && pe.Err != nil {
			msg = pe.Err.Error()
		}
		return "refused: " + msg + "; read parts of it with bash (head, tail, sed -n), or ask the operator to raise --max-file-size"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file or directory"
	case errors.Is(err, syscall.EISDIR):
		return "is a directory (use list_directory)"
	case errors.Is(err, syscall.ENOTDIR):
		return "not a directory"
	case errors.Is(err, syscall.ELOOP):
		return "too many levels of symbolic links"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrExist):
		return "already exists"
	case errors.Is(err, syscall.EXDEV):
		return "refused: the path crosses a mount point"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error()
	}
	return err.Error()
}
