package attacktest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// RaceEnv is the tree of the symlink-swap race:
//
//	$ROOT/d/secret   "INSIDE"   (d a real directory)
//	$ROOT/dlink      => $OUT    (absolute symlink)
//	$OUT/secret      "OUTSIDE"
//
// The attacker exchanges $ROOT/d and $ROOT/dlink with
// renameat2(RENAME_EXCHANGE) as fast as it can, so "d/secret" names the
// inside file or, through the symlink, the outside one.
type RaceEnv struct {
	Root, Out string
	outDev    uint64
	outIno    uint64
}

// NewRaceEnv builds the race tree in a fresh temporary directory.
func NewRaceEnv(t testing.TB) *RaceEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	r := &RaceEnv{Root: filepath.Join(base, "ws"), Out: filepath.Join(base, "out")}
	require.NoError(t, os.MkdirAll(filepath.Join(r.Root, "d"), 0o755))
	require.NoError(t, os.Mkdir(r.Out, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.Root, "d", "secret"), []byte("INSIDE"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(r.Out, "secret"), []byte("OUTSIDE"), 0o644))
	require.NoError(t, os.Symlink(r.Out, filepath.Join(r.Root, "dlink")))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(filepath.Join(r.Out, "secret"), &st))
	r.outDev, r.outIno = st.Dev, st.Ino
	return r
}

// StartAttacker starts the swapping goroutine; the returned function
// stops it, restores d as the real directory and returns the number of
// swaps done.
func (r *RaceEnv) StartAttacker(t testing.TB) (stop func() int) {
	t.Helper()
	d, l := filepath.Join(r.Root, "d"), filepath.Join(r.Root, "dlink")
	var quit atomic.Bool
	var swaps int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runtime.LockOSThread()
		for !quit.Load() {
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("attacker: renameat2(RENAME_EXCHANGE): %v", err)
				return
			}
			swaps++
		}
	}()
	return func() int {
		quit.Store(true)
		wg.Wait()
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE)
		}
		return swaps
	}
}

// Escaped reports whether f is the outside secret (same device and
// inode) or any file whose real path lies in $OUT.
func (r *RaceEnv) Escaped(t testing.TB, f *os.File) bool {
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(int(f.Fd()), &st))
	if st.Dev == r.outDev && st.Ino == r.outIno {
		return true
	}
	p, err := os.Readlink("/proc/self/fd/" + itoa(int(f.Fd())))
	require.NoError(t, err)
	return p == r.Out || strings.HasPrefix(p, r.Out+"/")
}

// RaceResult counts what the victim saw.
type RaceResult struct {
	Tries, Opened, Escapes, Swaps int
	FirstEscape                   string
}

// Race runs the attacker while the victim calls open(name) up to n
// times (or until maxDur passes, or, with stopAtEscape, the first
// escape), closing what it opens. Each opened file is checked with
// Escaped. After the run, $OUT must hold nothing but secret (a create
// that escaped would leave a file there).
func (r *RaceEnv) Race(t testing.TB, n int, maxDur time.Duration, stopAtEscape bool, open func(i int) (*os.File, error)) RaceResult {
	t.Helper()
	stop := r.StartAttacker(t)
	var res RaceResult
	deadline := time.Now().Add(maxDur)
	for i := 0; i < n; i++ {
		if i&1023 == 0 && time.Now().After(deadline) {
			break
		}
		res.Tries++
		f, err := open(i)
		if err != nil {
			if f != nil {
				t.Errorf("open returned a file and an error: %v", err)
			}
			continue
		}
		res.Opened++
		if r.Escaped(t, f) {
			res.Escapes++
			if res.FirstEscape == "" {
				p, _ := os.Readlink("/proc/self/fd/" + itoa(int(f.Fd())))
				res.FirstEscape = p
			}
		}
		f.Close()
		if stopAtEscape && res.Escapes > 0 {
			break
		}
	}
	res.Swaps = stop()
	ents, err := os.ReadDir(r.Out)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if !stopAtEscape {
		require.Equal(t, []string{"secret"}, names, "something was created outside the root during the race")
	}
	return res
}

// NaiveOpen is the seeds' resolve-then-open: filepath.EvalSymlinks, a
// component-wise containment check, then os.OpenFile of the checked path.
// It is the canary the race tests use to show the attack bites.
func NaiveOpen(root, name string, flag int) (*os.File, error) {
	p := filepath.Join(root, name)
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		real, err = filepath.EvalSymlinks(filepath.Dir(p))
		real = filepath.Join(real, filepath.Base(p))
	}
	if err != nil {
		return nil, err
	}
	if real != root && !strings.HasPrefix(real, root+"/") {
		return nil, errors.New("naive: outside")
	}
	return os.OpenFile(real, flag, 0o644)
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
