package jail_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/landjail/landjail/internal/attacktest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// osRootCasesFile is the Go standard library's rootTestCases
// (src/os/root_test.go) as data, with landjail's expectations added; see
// testdata/oracles/osroot/NOTICE. openat/osroot_oracle_test.go runs the
// same file through os.Root (the control) and openat.Root.
const osRootCasesFile = "../testdata/oracles/osroot/cases.json"

// osRootCase is one entry of cases.json: os.Root's seven fields, then the
// outcome word expected per operation ("open", "opendir", "create") from
// jail.Workspace, and why it differs from os.Root where it does.
type osRootCase struct {
	Name      string            `json:"name"`
	FS        []string          `json:"fs"`
	Open      string            `json:"open"`
	Target    string            `json:"target"`
	WantError bool              `json:"wantError"`
	Workspace map[string]string `json:"workspace"`
	// WorkspaceTarget, when set, is what Workspace opens in a case where
	// os.Root must open nothing (and so has no target).
	WorkspaceTarget string            `json:"workspaceTarget"`
	Divergence      map[string]string `json:"divergence"`
}

var osRootOps = []string{"open", "opendir", "create"}

// osRootErrWords maps the error words of cases.json to what the returned
// error must wrap (checked with errors.Is).
var osRootErrWords = map[string]error{
	"outside":  jail.ErrOutsideWorkspace,
	"invalid":  jail.ErrInvalidPath,
	"symlink":  openat.ErrSymlink,
	"escapes":  openat.ErrEscapes,
	"notexist": fs.ErrNotExist,
	"ENOTDIR":  syscall.ENOTDIR,
	"EISDIR":   syscall.EISDIR,
	"ELOOP":    syscall.ELOOP,
	"EINVAL":   syscall.EINVAL,
}

func loadOSRootCases(t *testing.T) []osRootCase {
	t.Helper()
	b, err := os.ReadFile(osRootCasesFile)
	require.NoError(t, err)
	var cs []osRootCase
	require.NoError(t, json.Unmarshal(b, &cs))
	require.NotEmpty(t, cs)
	return cs
}

// buildOSRootTree is os's makefs: "d/" a directory, "f" a file holding
// its own name, "a => b" a symlink; $ABS is the root's path. The root is
// a directory named ROOT, canonical so that $ABS needs no resolution.
func buildOSRootTree(t *testing.T, spec []string) string {
	t.Helper()
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(tmp, "ROOT")
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

// prepareOSRootOp builds the case's tree and what op needs at the target,
// as os's TestRootOpen_File, TestRootOpen_Directory and TestRootCreate
// do, and returns the root and the target's full path ("" when none).
func prepareOSRootOp(t *testing.T, c *osRootCase, op string) (root, target string) {
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

// checkOSRootResult checks f/err against want: "ok" means the file
// opened is target (same inode) and, when prepared (prepareOSRootOp put
// it there), holds or received what the op put there; any other word is
// an error the result must wrap. A failed create must leave no target
// behind.
func checkOSRootResult(t *testing.T, c *osRootCase, op, target string, prepared bool, want string, f *os.File, err error) {
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
	wantErr, known := osRootErrWords[want]
	require.True(t, known, "case %q: unknown outcome word %q", c.Name, want)
	assert.ErrorIs(t, err, wantErr, "%s(%q)", op, c.Open)
	if op == "create" && prepared {
		_, serr := os.Lstat(target)
		assert.ErrorIs(t, serr, fs.ErrNotExist, "failed create(%q) left %s behind", c.Open, c.Target)
	}
}

// TestOSRootOracle runs Go's os.Root case table through jail.Workspace
// (New on the case's root, no other policy) under both mechanisms: Open
// for "open" and "opendir", Create (O_RDWR|O_CREATE|O_TRUNC) plus a write
// for "create", each compared with the outcome recorded in cases.json.
// The os.Root control runs in openat's copy of this test.
func TestOSRootOracle(t *testing.T) {
	cases := loadOSRootCases(t)
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			for _, op := range osRootOps {
				t.Run(c.Name+"/"+op, func(t *testing.T) {
					want := c.Workspace[op]
					require.NotEmpty(t, want, "case %q has no workspace expectation for %s", c.Name, op)
					if (want == "ok") == c.WantError {
						assert.NotEmpty(t, c.Divergence["workspace"], "case %q differs from os.Root without a divergence note", c.Name)
					}
					root, target := prepareOSRootOp(t, c, op)
					w, err := jail.New(root)
					require.NoError(t, err)
					defer w.Close()
					var f *os.File
					if op == "create" {
						f, err = w.Create(c.Open)
						if err == nil {
							_, werr := f.Write(osRootWant)
							require.NoError(t, werr)
						}
					} else {
						f, err = w.Open(c.Open)
					}
					prepared := target != ""
					if c.WorkspaceTarget != "" {
						target = filepath.Join(root, c.WorkspaceTarget)
					}
					checkOSRootResult(t, c, op, target, prepared, want, f, err)
				})
			}
		}
	})
}
