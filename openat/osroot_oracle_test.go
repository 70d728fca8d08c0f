package openat_test

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

	"github.com/landjail/landjail/openat"
)

// osRootCasesFile is the Go standard library's rootTestCases
// (src/os/root_test.go) as data, with landjail's expectations added; see
// testdata/oracles/osroot/NOTICE.
const osRootCasesFile = "../testdata/oracles/osroot/cases.json"

// osRootCase is one entry of cases.json. The first seven fields are
// os.Root's own; OpenatRoot and Workspace hold, per operation ("open",
// "opendir", "create"), the outcome word expected from openat.Root and
// jail.Workspace, and Divergence says why, per layer, wherever that
// outcome differs from os.Root's.
type osRootCase struct {
	Name        string            `json:"name"`
	FS          []string          `json:"fs"`
	Open        string            `json:"open"`
	Target      string            `json:"target"`
	Ltarget     string            `json:"ltarget"`
	WantError   bool              `json:"wantError"`
	AlwaysFails bool              `json:"alwaysFails"`
	OpenatRoot  map[string]string `json:"openat"`
	Workspace   map[string]string `json:"workspace"`
	Divergence  map[string]string `json:"divergence"`
}

// osRootOps are the operations each case runs, after os's
// TestRootOpen_File, TestRootOpen_Directory and TestRootCreate.
var osRootOps = []string{"open", "opendir", "create"}

// osRootErrWords maps the error words of cases.json to what the returned
// error must wrap (checked with errors.Is).
var osRootErrWords = map[string]error{
	"symlink":  openat.ErrSymlink,
	"escapes":  openat.ErrEscapes,
	"notexist": fs.ErrNotExist,
	"ENOENT":   syscall.ENOENT,
	"ENOTDIR":  syscall.ENOTDIR,
	"EISDIR":   syscall.EISDIR,
	"ELOOP":    syscall.ELOOP,
	"EINVAL":   syscall.EINVAL,
	"EXDEV":    syscall.EXDEV,
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
// as the os tests do, and returns the root and the target's full path
// ("" when the case has none).
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

// doOSRootOp runs op through open (Open for "open"/"opendir",
// OpenFile(O_RDWR|O_CREATE|O_TRUNC) for "create"), and for "create" writes
// the content the os test writes.
func doOSRootOp(t *testing.T, op, name string,
	open func(string) (*os.File, error),
	create func(string) (*os.File, error),
) (*os.File, error) {
	t.Helper()
	if op != "create" {
		return open(name)
	}
	f, err := create(name)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(osRootWant)
	require.NoError(t, werr)
	return f, nil
}

// checkOSRootResult checks f/err against want: "ok" means the file
// opened is the case's target (same inode) and holds or received what the
// op put there; any other word is an error the result must wrap. A failed
// create must leave no target behind.
func checkOSRootResult(t *testing.T, c *osRootCase, op, target, want string, f *os.File, err error) {
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
		require.NoError(t, err, "target %s after %s(%q)", c.Target, op, c.Open)
		assert.True(t, os.SameFile(got, tfi), "%s(%q) opened something other than %s", op, c.Open, c.Target)
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
	if op == "create" && target != "" {
		_, serr := os.Lstat(target)
		assert.ErrorIs(t, serr, fs.ErrNotExist, "failed create(%q) left %s behind", c.Open, c.Target)
	}
}

// TestOSRootOracle runs Go's os.Root case table through os.Root itself
// (the control: the table still holds on this Go version, the way
// os/root_test.go checks it) and through openat.Root under both
// mechanisms, comparing each with the outcome recorded in cases.json.
func TestOSRootOracle(t *testing.T) {
	cases := loadOSRootCases(t)
	t.Run("os.Root", func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			for _, op := range osRootOps {
				t.Run(c.Name+"/"+op, func(t *testing.T) {
					root, target := prepareOSRootOp(t, c, op)
					r, err := os.OpenRoot(root)
					require.NoError(t, err)
					defer r.Close()
					f, err := doOSRootOp(t, op, c.Open, r.Open, r.Create)
					if c.WantError {
						if f != nil {
							f.Close()
						}
						assert.Error(t, err, "os.Root %s(%q)", op, c.Open)
						return
					}
					checkOSRootResult(t, c, op, target, "ok", f, err)
				})
			}
		}
	})
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for i := range cases {
			c := &cases[i]
			for _, op := range osRootOps {
				t.Run(c.Name+"/"+op, func(t *testing.T) {
					want := c.OpenatRoot[op]
					require.NotEmpty(t, want, "case %q has no openat expectation for %s", c.Name, op)
					if (want == "ok") == c.WantError {
						assert.NotEmpty(t, c.Divergence["openat"], "case %q differs from os.Root without a divergence note", c.Name)
					}
					root, target := prepareOSRootOp(t, c, op)
					r, err := openat.OpenRoot(root)
					require.NoError(t, err)
					defer r.Close()
					f, err := doOSRootOp(t, op, c.Open, r.Open, r.Create)
					checkOSRootResult(t, c, op, target, want, f, err)
				})
			}
		}
	})
}
