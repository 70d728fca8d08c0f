package attacktest

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OSRootCasesFile is the Go standard library's rootTestCases
// (src/os/root_test.go) as data, with landjail's expectations added (see
// testdata/oracles/osroot/NOTICE), relative to a package directory.
// openat runs it through os.Root (the control) and openat.Root, jail
// through jail.Workspace, both with RunOSRootOracle.
const OSRootCasesFile = "../testdata/oracles/osroot/cases.json"

// OSRootCase is one entry of cases.json. The first seven fields are
// os.Root's own; OpenatRoot and Workspace hold, per operation (OSRootOps),
// the outcome word expected from openat.Root and jail.Workspace, and
// Divergence says why, per layer ("openat", "workspace"), wherever that
// outcome differs from os.Root's.
type OSRootCase struct {
	Name        string            `json:"name"`
	FS          []string          `json:"fs"`
	Open        string            `json:"open"`
	Target      string            `json:"target"`
	Ltarget     string            `json:"ltarget"`
	WantError   bool              `json:"wantError"`
	AlwaysFails bool              `json:"alwaysFails"`
	OpenatRoot  map[string]string `json:"openat"`
	Workspace   map[string]string `json:"workspace"`
	// WorkspaceTarget, when set, is what Workspace opens in a case where
	// os.Root must open nothing (and so has no target).
	WorkspaceTarget string            `json:"workspaceTarget"`
	Divergence      map[string]string `json:"divergence"`
}

// OSRootOps are the operations each case runs, after os's
// TestRootOpen_File, TestRootOpen_Directory and TestRootCreate.
var OSRootOps = []string{"open", "opendir", "create"}

// osRootErrWords maps the error words of cases.json common to every layer
// to what the returned error must wrap (errors.Is); RunOSRootOracle adds
// the layer's own.
var osRootErrWords = map[string]error{
	"notexist": fs.ErrNotExist,
	"ENOENT":   syscall.ENOENT,
	"ENOTDIR":  syscall.ENOTDIR,
	"EISDIR":   syscall.EISDIR,
	"ELOOP":    syscall.ELOOP,
	"EINVAL":   syscall.EINVAL,
	"EXDEV":    syscall.EXDEV,
}

// LoadOSRootCases reads OSRootCasesFile.
func LoadOSRootCases(t *testing.T) []OSRootCase {
	t.Helper()
	b, err := os.ReadFile(OSRootCasesFile)
	require.NoError(t, err)
	var cs []OSRootCase
	require.NoError(t, json.Unmarshal(b, &cs))
	require.NotEmpty(t, cs)
	return cs
}

// buildOSRootTree is BuildOSRootTree in a fresh canonical temporary
// directory.
func buildOSRootTree(t *testing.T, spec []string) string {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return BuildOSRootTree(t, tmp, spec)
}

// BuildOSRootTree is os's makefs: it creates the directory ROOT in parent
// (which must be canonical, so that $ABS needs no resolution) and in it
// spec's entries, "d/" a directory, "f" a file holding its own name,
// "a => b" a symlink; $ABS in an entry is ROOT's path. It returns ROOT.
func BuildOSRootTree(t *testing.T, parent string, spec []string) string {
	t.Helper()
	root := filepath.Join(parent, "ROOT")
	require.NoError(t, os.Mkdir(root, 0o777))
	for _, ent := range spec {
		ent = strings.ReplaceAll(ent, "$ABS", root)
		base, link, isLink := strings.Cut(ent, " => ")
		require.NoError(t, os.MkdirAll(path.Join(root, path.Dir(base)), 0o777))
		switch {
		case isLink:
			require.NoError(t, os.Symlink(link, path.Join(root, base)))
		case strings.HasSuffix(ent, "/"):
			require.NoError(t, os.MkdirAll(path.Join(root, ent), 0o777))
		default:
			require.NoError(t, os.WriteFile(path.Join(root, ent), []byte(ent), 0o666))
		}
	}
	return root
}

var osRootWant = []byte("target")

// PrepareOSRootOp builds the case's tree and what op needs at the target,
// as the os tests do, and returns the root and the target's full path
// ("" when the case has none).
func PrepareOSRootOp(t *testing.T, c *OSRootCase, op string) (root, target string) {
	t.Helper()
	root = buildOSRootTree(t, c.FS)
	if c.Target == "" {
		return root, ""
	}
	target = filepath.Join(root, c.Target)
	switch op {
	case "open":
		require.NoError(t, os.WriteFile(target, osRootWant, 0o666))
	case "opendir":
		require.NoError(t, os.Mkdir(target, 0o777))
		require.NoError(t, os.WriteFile(target+"/found", nil, 0o666))
	}
	return root, target
}

// DoOSRootOp runs op on target (Open for "open"/"opendir", Create for
// "create" followed by the write the os test makes).
func DoOSRootOp(t *testing.T, target OSRoot, op, name string) (*os.File, error) {
	t.Helper()
	if op != "create" {
		return target.Open(name)
	}
	f, err := target.Create(name)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(osRootWant)
	require.NoError(t, werr)
	return f, nil
}

// OSRoot is what the oracle drives: os.Root, openat.Root, jail.Workspace.
type OSRoot interface {
	Open(name string) (*os.File, error)
	Create(name string) (*os.File, error)
}

// CheckOSRootResult checks f/err against want: "ok" means the file opened
// is target (same inode) and, when prepared (PrepareOSRootOp put it
// there), holds or received what the op put there; any other word is an
// error the result must wrap (errWords, then the common words). A failed
// create must leave no target behind.
func CheckOSRootResult(t *testing.T, c *OSRootCase, op, target string, prepared bool, want string, errWords map[string]error, f *os.File, err error) {
	t.Helper()
	if f != nil {
		defer f.Close()
	}
	if want == "ok" {
		require.NoError(t, err, "%s(%q)", op, c.Open)
		require.NotEmpty(t, target, "an ok outcome needs the case's target")
		got, err := f.Stat()
		require.NoError(t, err)
		tfi, err := os.Stat(target)
		require.NoError(t, err, "target %s after %s(%q)", target, op, c.Open)
		assert.True(t, os.SameFile(got, tfi), "%s(%q) opened something other than %s", op, c.Open, target)
		if !prepared {
			return
		}
		switch op {
		case "open", "create":
			b, err := os.ReadFile(target)
			require.NoError(t, err)
			assert.Equal(t, osRootWant, b)
		case "opendir":
			names, err := f.Readdirnames(-1)
			require.NoError(t, err)
			assert.Equal(t, []string{"found"}, names)
		}
		return
	}
	wantErr, known := errWords[want]
	if !known {
		wantErr, known = osRootErrWords[want]
	}
	require.True(t, known, "case %q: unknown outcome word %q", c.Name, want)
	assert.ErrorIs(t, err, wantErr, "%s(%q)", op, c.Open)
	if op == "create" && prepared {
		_, serr := os.Lstat(target)
		assert.ErrorIs(t, serr, fs.ErrNotExist, "failed create(%q) left %s behind", c.Open, c.Target)
	}
}

// RunOSRootOracle runs every case and op of cases through the layer named
// layer ("openat" or "workspace", the key of its expectations and
// divergence notes) under both mechanisms: open opens the layer on the
// case's root, and each result is compared with the recorded outcome
// (errWords names the layer's own error words). A case whose outcome
// differs from os.Root's must say why in Divergence[layer].
func RunOSRootOracle(t *testing.T, cases []OSRootCase, layer string, errWords map[string]error, open func(t *testing.T, root string) OSRoot) {
	t.Helper()
	ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			expect := map[string]map[string]string{"openat": c.OpenatRoot, "workspace": c.Workspace}[layer]
			for _, op := range OSRootOps {
				t.Run(c.Name+"/"+op, func(t *testing.T) {
					want := expect[op]
					require.NotEmpty(t, want, "case %q has no %s expectation for %s", c.Name, layer, op)
					if (want == "ok") == c.WantError {
						assert.NotEmpty(t, c.Divergence[layer], "case %q differs from os.Root without a divergence note", c.Name)
					}
					root, target := PrepareOSRootOp(t, c, op)
					f, err := DoOSRootOp(t, open(t, root), op, c.Open)
					prepared := target != ""
					if layer == "workspace" && c.WorkspaceTarget != "" {
						target = filepath.Join(root, c.WorkspaceTarget)
					}
					CheckOSRootResult(t, c, op, target, prepared, want, errWords, f, err)
				})
			}
		}
	})
}
