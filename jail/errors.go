package jail

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every path operation of this package returns a
// *fs.PathError carrying the caller's path and wrapping one of these (or
// an errno from the kernel), so callers test with errors.Is, never with
// the error text.
var (
	// ErrOutsideWorkspace: the path, after every symlink is followed,
	// names something outside the workspace root and every allowed root.
	ErrOutsideWorkspace = errors.New("path is outside the workspace")

	// ErrDenied: the canonical path (or a symlink's target) matches one of
	// the policy's always-denied patterns (WithDeny).
	ErrDenied = errors.New("path is denied by policy")

	// ErrReadOnly: a write was asked for in a root allowed ReadOnly or
	// ReadExec.
	ErrReadOnly = errors.New("path is in a read-only root")

	// ErrSetIDProgram wraps ErrReadOnly (errors.Is holds for both): the
	// write, removal or rename would change a set-user-ID, set-group-ID
	// or file-capability program in a ReadWrite root, which
	// WithProtectedAgentConfig makes read-only (red team round 31,
	// R31a-5; internal/setid).
	ErrSetIDProgram = fmt.Errorf("%w: a set-ID or file-capability program (--protect-agent-config)", ErrReadOnly)

	// ErrNotExecutable: execution was asked for outside a ReadExec or
	// ReadWrite root.
	ErrNotExecutable = errors.New("path is not in an executable root")

	// ErrAbsolutePath: the policy was built with RejectAbsolute and the
	// caller supplied an absolute path (a mode for agent tools whose
	// callers must name files relative to the workspace).
	ErrAbsolutePath = errors.New("absolute paths are not allowed")

	// ErrInvalidPath: the path is empty, contains a NUL byte or is longer
	// than PATH_MAX (4096 bytes).
	ErrInvalidPath = errors.New("invalid path")

	// ErrNotRead: with a ReadTracker, an existing file was about to be
	// overwritten or edited before the workspace read it (an agent must
	// see a file before it replaces it).
	ErrNotRead = errors.New("file has not been read before writing")

	// ErrStale: with a ReadTracker, the file changed on disk (size,
	// modification time or inode) since the workspace last read it.
	ErrStale = errors.New("file changed on disk since it was read")

	// ErrHardlinked: WithNoHardlinkedWrites is set and the regular file to
	// be written has more than one link (st_nlink > 1), so it may be an
	// alias of a file outside the policy.
	ErrHardlinked = errors.New("file has more than one hard link")

	// ErrNotRegular: Discover met a FIFO, socket or device where it
	// expects a regular file or a directory (a loader reading a FIFO
	// would block).
	ErrNotRegular = errors.New("not a regular file or directory")
)

// Errors from New about the workspace root or an allowed root.
var (
	// ErrNotAbsolute: New or WithAllowed was given a relative path.
	ErrNotAbsolute = errors.New("path is not absolute")
	// ErrNotDirectory: New or WithAllowed was given something that exists
	// but is not a directory.
	ErrNotDirectory = errors.New("not a directory")
	// ErrScanLimit: WithProtectAgentConfig's look for the symbolic links
	// in the protected directories (the workspace's hooks and agent
	// directories, HOME's ~/.claude/, ~/.config/nvim/, …) met more
	// entries than it reads (maxAgentLinkScan); a link beyond them could
	// make a file the user's next agent or editor runs writable, so New
	// fails instead (red team round 15, R15a-2). Wrapped in a
	// *fs.PathError naming the directory.
	ErrScanLimit = errors.New("too many entries to look for links in a protected directory")
)
