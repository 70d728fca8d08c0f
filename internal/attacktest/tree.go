package attacktest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// Env is a built case: canonical absolute paths of the trees.
type Env struct {
	Base string // parent of Root, Out and Evil
	Root string // $ROOT, the workspace root
	Out  string // $OUT, a sibling outside the workspace
	Evil string // $ROOT-evil, the prefix sibling
	// RootFD and OutFD are fds held open (until the test ends) on $ROOT
	// and on $OUT/secret (or $OUT when there is no secret).
	RootFD, OutFD int

	repl *strings.Replacer
}

// Sub substitutes the placeholders in s and unescapes \xNN.
func (e *Env) Sub(s string) string { return e.repl.Replace(Unescape(s)) }

// Input is the case's input with placeholders substituted.
func (e *Env) Input(t testing.TB, c *Case) string { return e.Sub(c.RawInput(t)) }

// Path turns a corpus path (relative to $ROOT unless it starts with a
// placeholder, i.e. is absolute after substitution) into an absolute one.
func (e *Env) Path(p string) string {
	p = e.Sub(p)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.Root, p)
}

// Build creates the case's trees under a fresh t.TempDir() and returns
// where they are. Bind mounts are made when the case has them (skipping
// without privilege) and undone when the test ends.
func Build(t testing.TB, c *Case) *Env {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e := &Env{
		Base: base,
		Root: filepath.Join(base, "ws"),
		Out:  filepath.Join(base, "out"),
		Evil: filepath.Join(base, "ws-evil"),
	}
	for _, d := range []string{e.Root, e.Out, e.Evil} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	e.RootFD = openFD(t, e.Root)
	e.repl = strings.NewReplacer(
		"$ROOTFD", strconv.Itoa(e.RootFD),
		"$OUTFD", "$OUTFD", // set below, once $OUT/secret exists
		"$ROOT", e.Root,
		"$OUT", e.Out,
	)
	// $OUTFD may appear in tree lines (symlink targets), so open the
	// outside secret first: build the outside tree, then fix the replacer.
	BuildTree(t, e, e.Out, c.Outside)
	target := filepath.Join(e.Out, "secret")
	if _, err := os.Lstat(target); err != nil {
		target = e.Out
	}
	e.OutFD = openFD(t, target)
	e.repl = strings.NewReplacer(
		"$ROOTFD", strconv.Itoa(e.RootFD),
		"$OUTFD", strconv.Itoa(e.OutFD),
		"$ROOT", e.Root,
		"$OUT", e.Out,
	)
	BuildTree(t, e, e.Evil, c.Evil)
	BuildTree(t, e, e.Root, c.Tree)
	for _, m := range c.Mounts {
		bindMount(t, e.Sub(m.Src), filepath.Join(e.Root, e.Sub(m.Dst)))
	}
	return e
}

func openFD(t testing.TB, p string) int {
	t.Helper()
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	require.NoError(t, err, "open %s", p)
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

func bindMount(t testing.TB, src, dst string) {
	t.Helper()
	err := unix.Mount(src, dst, "", unix.MS_BIND, "")
	kerneltest.RequireMount(t, err, "bind mount "+src+" on "+dst)
	t.Cleanup(func() {
		assert.NoError(t, unix.Unmount(dst, unix.MNT_DETACH), "unmount %s", dst)
	})
}

// Line is one parsed tree spec line.
type Line struct {
	Name    string
	Kind    byte // 'd' dir, 'f' file, 'l' symlink, 'h' hard link, '!' absent
	Content string
	HasBody bool // a file line with "=content"
	Target  string
}

// ParseLine parses a tree spec line (after \xNN unescaping; placeholders
// are left alone).
func ParseLine(s string) Line {
	s = Unescape(s)
	switch {
	case strings.HasPrefix(s, "!"):
		return Line{Name: s[1:], Kind: '!'}
	case strings.Contains(s, " => "):
		n, tgt, _ := strings.Cut(s, " => ")
		return Line{Name: n, Kind: 'l', Target: tgt}
	case strings.Contains(s, " == "):
		n, tgt, _ := strings.Cut(s, " == ")
		return Line{Name: n, Kind: 'h', Target: tgt}
	case strings.HasSuffix(s, "/"):
		return Line{Name: strings.TrimSuffix(s, "/"), Kind: 'd'}
	case strings.Contains(s, "="):
		n, body, _ := strings.Cut(s, "=")
		return Line{Name: n, Kind: 'f', Content: body, HasBody: true}
	}
	return Line{Name: s, Kind: 'f'}
}

// BuildTree creates spec lines under dir.
func BuildTree(t testing.TB, e *Env, dir string, spec []string) {
	t.Helper()
	for _, s := range spec {
		l := ParseLine(s)
		p := filepath.Join(dir, e.repl.Replace(l.Name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755), "spec %q", s)
		switch l.Kind {
		case 'd':
			require.NoError(t, os.MkdirAll(p, 0o755), "spec %q", s)
		case 'f':
			require.NoError(t, os.WriteFile(p, []byte(l.Content), 0o644), "spec %q", s)
		case 'l':
			require.NoError(t, os.Symlink(e.repl.Replace(l.Target), p), "spec %q", s)
		case 'h':
			tgt := e.repl.Replace(l.Target)
			if !filepath.IsAbs(tgt) {
				tgt = filepath.Join(dir, tgt)
			}
			require.NoError(t, os.Link(tgt, p), "spec %q", s)
		default:
			require.Failf(t, "bad spec line", "%q", s)
		}
	}
}

// CheckAfter asserts that each spec line holds (see Case.After).
func CheckAfter(t testing.TB, e *Env, spec []string) {
	t.Helper()
	for _, s := range spec {
		l := ParseLine(s)
		p := e.Path(l.Name)
		fi, err := os.Lstat(p)
		if l.Kind == '!' {
			assert.ErrorIs(t, err, fs.ErrNotExist, "after: %q must not exist", s)
			continue
		}
		if !assert.NoError(t, err, "after: %q", s) {
			continue
		}
		switch l.Kind {
		case 'd':
			assert.True(t, fi.IsDir(), "after: %q must be a directory", s)
		case 'f':
			if assert.True(t, fi.Mode().IsRegular(), "after: %q must be a regular file", s) && l.HasBody {
				b, err := os.ReadFile(p)
				assert.NoError(t, err)
				assert.Equal(t, l.Content, string(b), "after: %q content", s)
			}
		case 'l':
			tgt, err := os.Readlink(p)
			assert.NoError(t, err, "after: %q must be a symlink", s)
			assert.Equal(t, e.Sub(l.Target), tgt, "after: %q target", s)
		default:
			require.Failf(t, "bad after line", "%q", s)
		}
	}
}

// Snapshot describes every entry under dir (not following symlinks):
// relative name to "d", "f:<content>" or "l:<target>".
func Snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, syscall.ENOENT) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			tgt, err := os.Readlink(p)
			if err != nil {
				return err
			}
			m[rel] = "l:" + tgt
		case d.IsDir():
			m[rel] = "d"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = "f:" + string(b)
		}
		return nil
	})
	require.NoError(t, err, "snapshot %s", dir)
	return m
}
