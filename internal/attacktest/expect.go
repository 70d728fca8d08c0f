package attacktest

import (
	"io/fs"
	"sort"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

var (
	vocabMu sync.Mutex
	vocab   = map[string]error{
		"notexist": fs.ErrNotExist,
		"exist":    fs.ErrExist,
		"perm":     fs.ErrPermission,
		"loop":     syscall.ELOOP,
		"notdir":   syscall.ENOTDIR,
		"isdir":    syscall.EISDIR,
		"xdev":     syscall.EXDEV,
		"toolong":  syscall.ENAMETOOLONG,
		"einval":   syscall.EINVAL,
		"notempty": syscall.ENOTEMPTY,
		// Package sentinels.
		"outside":    jail.ErrOutsideWorkspace,
		"denied":     jail.ErrDenied,
		"readonly":   jail.ErrReadOnly,
		"notexec":    jail.ErrNotExecutable,
		"absolute":   jail.ErrAbsolutePath,
		"invalid":    jail.ErrInvalidPath,
		"notread":    jail.ErrNotRead,
		"stale":      jail.ErrStale,
		"hardlinked": jail.ErrHardlinked,
		"escapes":    openat.ErrEscapes,
		"symlink":    openat.ErrSymlink,
	}
)

// Define binds an expectation word to the error it stands for. The
// vocabulary already holds every word the corpus uses, package sentinels
// included ("outside" is jail.ErrOutsideWorkspace, "escapes" is
// openat.ErrEscapes); Define adds or rebinds one, from init code of a
// test package (a var block).
func Define(word string, err error) bool {
	vocabMu.Lock()
	defer vocabMu.Unlock()
	vocab[word] = err
	return true
}

func vocabulary() map[string]error {
	vocabMu.Lock()
	defer vocabMu.Unlock()
	return vocab
}

// Err returns the error the expectation word stands for, or nil for a
// word outside the vocabulary (and for "ok").
func Err(word string) error { return vocabulary()[word] }

// Words lists the vocabulary, sorted.
func Words() []string {
	var w []string
	for k := range vocabulary() {
		w = append(w, k)
	}
	sort.Strings(w)
	return w
}

// ExpectErr asserts that err matches want: "ok" (or "ok:..."; the path is
// the caller's to check) means no error; any other word means
// errors.Is(err, <the word's error>). It reports whether the check held.
func ExpectErr(t testing.TB, err error, want string, msgAndArgs ...any) bool {
	t.Helper()
	if want == "ok" || len(want) > 3 && want[:3] == "ok:" {
		return assert.NoError(t, err, msgAndArgs...)
	}
	target, ok := vocabulary()[want]
	if !ok {
		return assert.Failf(t, "unknown expectation", "%q (words: %v)", want, Words())
	}
	return assert.ErrorIs(t, err, target, msgAndArgs...)
}
