package tools

import (
	"errors"
	"path/filepath"

	"github.com/landjail/landjail/jail"
)

// refusalHint is what fail adds to a policy refusal of a file tool (issue
// 23): the rule that refused it and the operator's flag that would allow
// it, or that none does, so an agent can ask for the right grant. "" for
// other errors. The flag names the path as given, made absolute against
// the workspace root; a read grant for read-only tools, a write grant for
// the others.
func (k *Toolkit) refusalHint(tool, unsafePath string, err error) string {
	p := unsafePath
	if p == "" {
		p = "PATH"
	} else if !filepath.IsAbs(p) && k.WS != nil {
		p = filepath.Join(k.WS.Root(), p)
	}
	write := tool == ToolWriteFile || tool == ToolEditFile || tool == ToolPatch
	switch {
	case errors.Is(err, jail.ErrOutsideWorkspace):
		if write {
			return " (rule: outside every root; the operator's flag: --rw " + p + ")"
		}
		return " (rule: outside every root; the operator's flag: --ro " + p + ")"
	case errors.Is(err, jail.ErrDenied):
		return " (rule: a deny pattern (--deny, --deny-secrets) or a private key; not allowed by design unless the operator drops the pattern)"
	case errors.Is(err, jail.ErrSetIDProgram):
		return " (rule: a set-ID or file-capability program, read-only under --protect-agent-config; the operator strips its bits or drops the flag)"
	case errors.Is(err, jail.ErrReadOnly):
		return " (rule: read-only: a --read-only path, protected agent configuration, or a --ro/--rox root; the operator's flag: --rw " + p + ")"
	case errors.Is(err, jail.ErrNotExecutable):
		return " (rule: a read-only root without execute; the operator's flag: --rox " + p + ")"
	}
	return ""
}
