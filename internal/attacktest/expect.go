package attacktest

import (
	"errors"
	"io/fs"
	"sort"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
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
		// The words below name package sentinels; this package cannot
		// import jail or openat (they import it from their tests), so the
		// tests Define them. Until then they are placeholders that no
		// error matches, and ExpectErr fails loudly on them.
		"outside":    errUndefined,
		"denied":     errUndefined,
		"readonly":   errUndefined,
		"notexec":    errUndefined,
		"absolute":   errUndefined,
		"invalid":    errUndefined,
		"notread":    errUndefined,
		"stale":      errUndefined,
		"hardlinked": errUndefined,
		"escapes":    errUndefined,
		"symlink":    errUndefined,
	}
)

var errUndefined = errors.New("attacktest: expectation word not defined by this test package")

// Define binds an expectation word to the error it stands for (the
// package sentinels: "outside" is jail.ErrOutsideWorkspace, "escapes" is
// openat.ErrEscapes, ...). Call it from TestMain-free init code of the
// test package, e.g. in a var block.
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
	if target == errUndefined {
		return assert.Failf(t, "undefined expectation", "%q: the test package must attacktest.Define it", want)
	}
	return assert.ErrorIs(t, err, target, msgAndArgs...)
}
