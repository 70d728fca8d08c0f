package attacktest

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// PatchCase is one case of testdata/patch_attacks.toml: a tree, a
// policy, the files read first, a diff, and the expected outcome.
type PatchCase struct {
	Name    string   `toml:"name"`
	Why     string   `toml:"why"`
	Tree    []string `toml:"tree"`
	Outside []string `toml:"outside"`
	// Policy beyond the tree: deny patterns, read-only paths or
	// patterns, WithProtectedAgentConfig, no tracker.
	Deny        []string `toml:"deny"`
	ReadOnly    []string `toml:"read_only"`
	AgentConfig bool     `toml:"agent_config"`
	NoTracker   bool     `toml:"no_tracker"`
	// PrivateKeys: jail.WithDenyPrivateKeys(jail.PrivateKeyPatterns...).
	PrivateKeys bool `toml:"private_keys"`
	// KeyHeaders: jail.WithDenyPrivateKeyHeaders (a key recognised by
	// its header in any file).
	KeyHeaders bool `toml:"key_headers"`
	// Read lists the files read_file reads before the patch.
	Read []string `toml:"read"`
	// Patch is the diff (placeholders substituted); PatchRepeat, when
	// set, appends Unit Count times.
	Patch       string  `toml:"patch"`
	PatchRepeat *Repeat `toml:"patch_repeat"`
	// FileBytes sets tools.Limits.FileBytes when not zero.
	FileBytes int64 `toml:"file_bytes"`
	// Expect is "ok" or an error word (see PatchErrWords).
	Expect string `toml:"expect"`
	// Contains lists substrings the error (or result) text must hold.
	Contains []string `toml:"contains"`
	// After lists spec lines that hold after a successful patch ("!name":
	// absent).
	After []string `toml:"after"`
}

// LoadPatchCases reads a patch case file.
func LoadPatchCases(t testing.TB, path string) []PatchCase {
	t.Helper()
	var f struct {
		Case []PatchCase `toml:"case"`
	}
	md, err := toml.DecodeFile(path, &f)
	require.NoError(t, err)
	require.Empty(t, md.Undecoded(), "unknown keys in %s", path)
	require.NotEmpty(t, f.Case)
	return f.Case
}

// Build builds the case's trees.
func (c *PatchCase) Build(t testing.TB) *Env {
	return Build(t, &Case{Name: c.Name, Tree: c.Tree, Outside: c.Outside})
}

// Diff is the case's diff for env e.
func (c *PatchCase) Diff(e *Env) string {
	d := e.repl.Replace(c.Patch)
	if c.PatchRepeat != nil {
		d += strings.Repeat(e.repl.Replace(c.PatchRepeat.Unit), c.PatchRepeat.Count)
	}
	return d
}

// Workspace builds the case's policy over e.Root.
func (c *PatchCase) Workspace(t testing.TB, e *Env) *jail.Workspace {
	t.Helper()
	var opts []jail.Option
	if !c.NoTracker {
		opts = append(opts, jail.WithReadTracker(jail.NewReadTracker()))
	}
	if len(c.Deny) > 0 {
		opts = append(opts, jail.WithDeny(c.Deny...))
	}
	if len(c.ReadOnly) > 0 {
		opts = append(opts, jail.WithReadOnly(c.ReadOnly...))
	}
	if c.PrivateKeys {
		opts = append(opts, jail.WithDenyPrivateKeys(jail.PrivateKeyPatterns...))
	}
	if c.KeyHeaders {
		opts = append(opts, jail.WithDenyPrivateKeyHeaders())
	}
	if c.AgentConfig {
		opts = append(opts, jail.WithProtectedAgentConfig())
	}
	ws, err := jail.New(e.Root, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	return ws
}

// CheckAfter asserts c.After on e's tree.
func (c *PatchCase) CheckAfter(t testing.TB, e *Env) {
	t.Helper()
	snap := Snapshot(t, e.Root)
	for _, a := range c.After {
		if name, ok := strings.CutPrefix(a, "!"); ok {
			_, present := snap[filepath.Clean(name)]
			require.False(t, present, "%s must not exist", name)
			continue
		}
		name, content, _ := strings.Cut(a, "=")
		require.Equal(t, "f:"+content, snap[filepath.Clean(name)], "%s", name)
	}
}

// PatchErrIs reports whether err matches the error word want, given the
// package-specific sentinels in words (merged over the jail's).
func PatchErrIs(err error, want string, words map[string]error) bool {
	all := map[string]error{
		"outside": jail.ErrOutsideWorkspace, "denied": jail.ErrDenied, "readonly": jail.ErrReadOnly,
		"notread": jail.ErrNotRead, "stale": jail.ErrStale, "exist": fs.ErrExist,
	}
	for k, v := range words {
		all[k] = v
	}
	w, ok := all[want]
	return ok && errors.Is(err, w)
}
