package attacktest

import (
	"io"
	"io/fs"
	"maps"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// FS is what jail.Workspace and openat.Root have in common: os.Root's
// method set.
type FS interface {
	Open(name string) (*os.File, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
	WriteFile(name string, data []byte, perm fs.FileMode) error
	Mkdir(name string, perm fs.FileMode) error
	Remove(name string) error
	Rename(oldname, newname string) error
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
}

// Payload is what create and write put in the file.
const Payload = "pwned"

// RunOp runs the case's op on target (the layer named layer) and checks
// the expectation and the invariants: the error word; for an "open" that
// succeeds, the content and (when the case's resolve expectation names a
// path) that the fd really is that file; a *fs.PathError carrying the
// caller's name (except rename); a failed op changes nothing under
// e.Base; a successful one leaves $OUT and $ROOT-evil alone unless
// allowed, and satisfies the After lines.
func RunOp(t *testing.T, target FS, e *Env, c *Case, layer string) {
	t.Helper()
	want, ok := c.Expect(layer)
	if !ok {
		t.Skipf("no %s expectation: %s", layer, c.Skip[layer])
	}
	in := e.Input(t, c)
	before := Snapshot(t, e.Base)

	var f *os.File
	var err error
	switch c.Op {
	case "open":
		f, err = target.Open(in)
	case "create":
		f, err = target.OpenFile(in, os.O_CREATE|os.O_WRONLY, 0o644)
	case "write":
		err = target.WriteFile(in, []byte(Payload), 0o644)
	case "mkdir":
		err = target.Mkdir(in, 0o755)
	case "remove":
		err = target.Remove(in)
	case "rename":
		err = target.Rename(in, e.Sub(c.Input2))
	case "stat":
		_, err = target.Stat(in)
	case "lstat":
		_, err = target.Lstat(in)
	default:
		t.Fatalf("unknown op %q", c.Op)
	}
	if f != nil {
		defer f.Close()
		if err != nil {
			assert.Fail(t, "a file and an error", "%v", err)
		}
	}
	if !ExpectErr(t, err, want, "%s %s(%q)", layer, c.Op, in) {
		t.Logf("why: %s", c.Why)
	}
	if err != nil && c.Op != "rename" {
		var pe *fs.PathError
		if assert.ErrorAs(t, err, &pe, "errors are *fs.PathError") {
			assert.Equal(t, in, pe.Path, "PathError.Path must be the caller's name")
		}
	}

	if err == nil && f != nil {
		if w, ok := okPath(c.Resolve); ok {
			real, rerr := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
			if assert.NoError(t, rerr) {
				assert.Equal(t, e.Path(w), real, "the opened fd is not the resolved file")
			}
		}
		switch c.Op {
		case "open":
			if c.Content != nil {
				if fi, serr := f.Stat(); serr == nil && fi.Mode().IsRegular() {
					b, rerr := io.ReadAll(f)
					assert.NoError(t, rerr)
					assert.Equal(t, *c.Content, string(b), "content read through %s", layer)
				} else {
					assert.Fail(t, "content expected from a non-regular file", "%v", serr)
				}
			}
		case "create":
			_, werr := f.WriteString(Payload)
			assert.NoError(t, werr)
		}
		f.Close()
	}

	after := Snapshot(t, e.Base)
	if err != nil {
		assert.Equal(t, before, after, "a failed %s changed the file system", c.Op)
		return
	}
	if !c.MayChangeOutside(layer) {
		assert.Equal(t, under(before, "out"), under(after, "out"), "$OUT changed")
		assert.Equal(t, under(before, "ws-evil"), under(after, "ws-evil"), "$ROOT-evil changed")
	}
	CheckAfter(t, e, c.AfterFor(layer))
}

// okPath returns the path of an "ok:<path>" resolve expectation.
func okPath(resolve string) (string, bool) {
	if len(resolve) > 3 && resolve[:3] == "ok:" {
		return resolve[3:], true
	}
	return "", false
}

func under(snap map[string]string, dir string) map[string]string {
	out := maps.Clone(snap)
	for k := range out {
		if k != dir && !strings.HasPrefix(k, dir+"/") {
			delete(out, k)
		}
	}
	return out
}
