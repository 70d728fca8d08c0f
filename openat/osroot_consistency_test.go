package openat_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

// osRootConsistencyFile is the Go standard library's
// rootConsistencyTestCases (src/os/root_test.go) as data, with landjail's
// deliberate divergences added; see testdata/oracles/osroot/NOTICE.
const osRootConsistencyFile = "../testdata/oracles/osroot/consistency.json"

// consistencyTable is consistency.json: the cases, the Go operations not
// ported (with why), and the divergence reasons by key.
type consistencyTable struct {
	Go        string            `json:"go"`
	Source    string            `json:"source"`
	NotPorted map[string]string `json:"notPorted"`
	Reasons   map[string]string `json:"reasons"`
	Cases     []consistencyCase `json:"cases"`
}

// consistencyCase is one rootConsistencyTest. FS is os's makefs spec;
// Chmod0 and Socket stand for the Go case's fsFunc (chmod that entry to 0;
// replace the tree by one holding a unix socket of that name). Skip names
// the operations Go skips for the case on linux, with Go's reason.
// Divergence holds, per operation, openat.Root's expected outcome where it
// deliberately differs from the plain os function.
type consistencyCase struct {
	Name       string                           `json:"name"`
	FS         []string                         `json:"fs"`
	Chmod0     string                           `json:"chmod0"`
	Socket     string                           `json:"socket"`
	Open       string                           `json:"open"`
	Skip       map[string]string                `json:"skip"`
	Divergence map[string]consistencyDivergence `json:"divergence"`
}

// consistencyDivergence is openat.Root's outcome for one operation: Want
// is an outcome word (an error word of consistencyErrWords), Reason a key
// of consistencyTable.Reasons.
type consistencyDivergence struct {
	Want   string `json:"want"`
	Reason string `json:"reason"`
}

// consistencyErrWords maps outcome words to what the error must wrap.
var consistencyErrWords = map[string]error{
	"symlink":     openat.ErrSymlink,
	"invalidname": openat.ErrInvalidName,
	"escapes":     openat.ErrEscapes,
	"ENOENT":      syscall.ENOENT,
	"ENOTDIR":     syscall.ENOTDIR,
	"EISDIR":      syscall.EISDIR,
	"ELOOP":       syscall.ELOOP,
	"EINVAL":      syscall.EINVAL,
	"EEXIST":      syscall.EEXIST,
	"EBUSY":       syscall.EBUSY,
}

// consistencyFunc runs one operation on name through r, or through the
// plain os function when r is nil (name is then the joined path), and
// returns a result string as os's TestRootConsistency* functions do.
type consistencyFunc func(t *testing.T, name string, r *openat.Root) (string, error)

func fileInfoString(fi fs.FileInfo) string {
	return fmt.Sprintf("name:%q size:%v mode:%v isdir:%v", fi.Name(), fi.Size(), fi.Mode(), fi.IsDir())
}

// consistencyMove is os's testRootConsistencyMove for one direction
// ("from": rename/link the case's name to a fresh name, "to": the reverse).
func consistencyMove(rename bool, dir string) consistencyFunc {
	return func(t *testing.T, name string, r *openat.Root) (string, error) {
		move, lstat := os.Rename, os.Lstat
		other := filepath.Join(t.TempDir(), "other")
		if r != nil {
			move, lstat, other = r.Rename, r.Lstat, "other"
			if !rename {
				move = r.Link
			}
		} else if !rename {
			move = os.Link
		}
		src, dst := name, other
		if dir == "to" {
			src, dst = other, name
		}
		if !rename {
			// As os does: hard links to symlinks vary by system.
			if fi, err := lstat(src); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return "", nil
			}
		}
		if err := move(src, dst); err != nil {
			return "", err
		}
		fi, err := lstat(dst)
		if err != nil {
			t.Errorf("lstat(%q) after a successful move: %v", dst, err)
			return "stat error", err
		}
		return fileInfoString(fi), nil
	}
}

// consistencyOps are os's TestRootConsistency* functions by name
// (Symlink is listed in consistency.json's notPorted).
var consistencyOps = []struct {
	name string
	f    consistencyFunc
}{
	{"open", func(t *testing.T, name string, r *openat.Root) (string, error) {
		open := os.Open
		if r != nil {
			open = r.Open
		}
		f, err := open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && !fi.IsDir() {
			b, err := io.ReadAll(f)
			return string(b), err
		}
		names, err := f.Readdirnames(-1)
		slices.Sort(names)
		return fmt.Sprintf("%q", names), err
	}},
	{"create", func(t *testing.T, name string, r *openat.Root) (string, error) {
		create := os.Create
		if r != nil {
			create = r.Create
		}
		f, err := create(name)
		if err == nil {
			_, werr := f.Write([]byte("file contents"))
			assert.NoError(t, werr)
			assert.NoError(t, f.Close())
		}
		return "", err
	}},
	{"chmod", func(t *testing.T, name string, r *openat.Root) (string, error) {
		chmod, lstat := os.Chmod, os.Lstat
		if r != nil {
			chmod, lstat = r.Chmod, r.Lstat
		}
		var m1, m2 fs.FileMode
		if err := chmod(name, 0o555); err != nil {
			return "chmod 0o555", err
		}
		fi, err := lstat(name)
		if err == nil {
			m1 = fi.Mode()
		}
		if err = chmod(name, 0o777); err != nil {
			return "chmod 0o777", err
		}
		fi, err = lstat(name)
		if err == nil {
			m2 = fi.Mode()
		}
		return fmt.Sprintf("%v %v", m1, m2), err
	}},
	{"mkdir", func(t *testing.T, name string, r *openat.Root) (string, error) {
		if r != nil {
			return "", r.Mkdir(name, 0o777)
		}
		return "", os.Mkdir(name, 0o777)
	}},
	{"mkdirall", func(t *testing.T, name string, r *openat.Root) (string, error) {
		if r != nil {
			return "", r.MkdirAll(name, 0o777)
		}
		return "", os.MkdirAll(name, 0o777)
	}},
	{"remove", func(t *testing.T, name string, r *openat.Root) (string, error) {
		if r != nil {
			return "", r.Remove(name)
		}
		return "", os.Remove(name)
	}},
	{"removeall", func(t *testing.T, name string, r *openat.Root) (string, error) {
		if r != nil {
			return "", r.RemoveAll(name)
		}
		return "", os.RemoveAll(name)
	}},
	{"stat", func(t *testing.T, name string, r *openat.Root) (string, error) {
		stat := os.Stat
		if r != nil {
			stat = r.Stat
		}
		fi, err := stat(name)
		if err != nil {
			return "", err
		}
		return fileInfoString(fi), nil
	}},
	{"lstat", func(t *testing.T, name string, r *openat.Root) (string, error) {
		lstat := os.Lstat
		if r != nil {
			lstat = r.Lstat
		}
		fi, err := lstat(name)
		if err != nil {
			return "", err
		}
		return fileInfoString(fi), nil
	}},
	{"readlink", func(t *testing.T, name string, r *openat.Root) (string, error) {
		if r != nil {
			return r.Readlink(name)
		}
		return os.Readlink(name)
	}},
	{"rename/from", consistencyMove(true, "from")},
	{"rename/to", consistencyMove(true, "to")},
	{"link/from", consistencyMove(false, "from")},
	{"link/to", consistencyMove(false, "to")},
}

func loadConsistencyTable(t *testing.T) *consistencyTable {
	t.Helper()
	b, err := os.ReadFile(osRootConsistencyFile)
	require.NoError(t, err)
	var tab consistencyTable
	require.NoError(t, json.Unmarshal(b, &tab))
	require.NotEmpty(t, tab.Cases)
	return &tab
}

// buildConsistencyTree is os's makefs plus the case's fsFunc, in a fresh
// directory from os.MkdirTemp (short enough for a unix socket's path, as
// os's tempDirWithUnixSocket). It returns ROOT and its parent, which must
// hold nothing but ROOT afterwards.
func buildConsistencyTree(t *testing.T, c *consistencyCase) (root, parent string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "ljc")
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, os.RemoveAll(tmp)) })
	parent, err = filepath.EvalSymlinks(tmp)
	require.NoError(t, err)
	root = attacktest.BuildOSRootTree(t, parent, c.FS)
	if c.Chmod0 != "" {
		p := filepath.Join(root, c.Chmod0)
		require.NoError(t, os.Chmod(p, 0))
		t.Cleanup(func() { _ = os.Chmod(p, 0o700) })
	}
	if c.Socket != "" {
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(root, c.Socket), Net: "unix"})
		require.NoError(t, err)
		t.Cleanup(func() { l.Close() })
	}
	return root, parent
}

// consistencyErrno is the errno err carries, or 0.
func consistencyErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// TestOSRootConsistency runs Go's rootConsistencyTestCases through every
// ported TestRootConsistency* operation, on openat.Root (under both
// mechanisms) and on the plain os function with the joined path, and
// requires, as os does of os.Root, the same result string and the same
// errno, except where consistency.json records a deliberate divergence:
// then openat.Root must give the recorded outcome and os must really
// differ from it. No operation may create anything beside the root.
func TestOSRootConsistency(t *testing.T) {
	tab := loadConsistencyTable(t)
	for _, c := range tab.Cases {
		for op, d := range c.Divergence {
			assert.NotEmpty(t, tab.Reasons[d.Reason], "case %q %s: unknown reason %q", c.Name, op, d.Reason)
			_, known := consistencyErrWords[d.Want]
			assert.True(t, known, "case %q %s: unknown outcome word %q", c.Name, op, d.Want)
		}
	}
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for _, op := range consistencyOps {
			t.Run(op.name, func(t *testing.T) {
				for i := range tab.Cases {
					c := &tab.Cases[i]
					t.Run(c.Name, func(t *testing.T) {
						runConsistencyCase(t, c, op.name, op.f)
					})
				}
			})
		}
	})
}

// consistencyRun is one operation's outcome on both sides.
type consistencyRun struct {
	res1, res2 string // openat.Root, os
	err1, err2 error
}

// agree reports whether openat.Root and os gave the same result string,
// both succeeded or both failed, and failed with the same errno.
func (r *consistencyRun) agree() bool {
	return r.res1 == r.res2 && (r.err1 == nil) == (r.err2 == nil) &&
		consistencyErrno(r.err1) == consistencyErrno(r.err2)
}

// runConsistencyOp builds the case's tree twice, as os's run does, and
// runs f on openat.Root in one and on the joined path in the other.
func runConsistencyOp(t *testing.T, c *consistencyCase, op string, f consistencyFunc) *consistencyRun {
	dir1, parent := buildConsistencyTree(t, c)
	dir2, _ := buildConsistencyTree(t, c)
	r, err := openat.OpenRoot(dir1)
	require.NoError(t, err)
	defer r.Close()

	var run consistencyRun
	run.res1, run.err1 = f(t, c.Open, r)
	run.res2, run.err2 = f(t, dir2+"/"+c.Open, nil)
	t.Logf("%s %q %s: openat.Root res=%q err=%v (errno %d); os res=%q err=%v (errno %d)",
		openat.Mechanism(), c.Name, op, run.res1, run.err1, consistencyErrno(run.err1),
		run.res2, run.err2, consistencyErrno(run.err2))

	names, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, names, 1, "%s(%q) created something beside the root", op, c.Open)
	return &run
}

// suspectedBug starts the skip reasons of consistency.json that stand for
// a suspected openat bug rather than a skip in os's own test: those cases
// still run, and must start agreeing with os once the bug is fixed.
const suspectedBug = "suspected openat bug"

func runConsistencyCase(t *testing.T, c *consistencyCase, op string, f consistencyFunc) {
	if why, ok := c.Skip[op]; ok {
		if strings.HasPrefix(why, suspectedBug) {
			if run := runConsistencyOp(t, c, op, f); run.agree() {
				t.Errorf("openat.Root %s(%q) now agrees with os: drop the skip %q", op, c.Open, why)
			}
		}
		t.Skip(why)
	}
	run := runConsistencyOp(t, c, op, f)
	if d, ok := c.Divergence[op]; ok {
		assert.ErrorIs(t, run.err1, consistencyErrWords[d.Want], "openat.Root %s(%q) (divergence %s)", op, c.Open, d.Reason)
		assert.False(t, run.agree(), "openat.Root %s(%q) now agrees with os (res=%q err=%v): drop the stale divergence", op, c.Open, run.res1, run.err1)
		return
	}
	assert.Equal(t, run.res2, run.res1, "%s(%q) result: openat.Root vs os (errors %v / %v)", op, c.Open, run.err1, run.err2)
	if run.err2 == nil {
		assert.NoError(t, run.err1, "%s(%q): os succeeded", op, c.Open)
		return
	}
	require.Error(t, run.err1, "%s(%q): os failed with %v", op, c.Open, run.err2)
	e2 := consistencyErrno(run.err2)
	require.NotZero(t, e2, "os %s: no errno in %v", op, run.err2)
	assert.ErrorIs(t, run.err1, e2, "%s(%q): os failed with %v", op, c.Open, run.err2)
}
