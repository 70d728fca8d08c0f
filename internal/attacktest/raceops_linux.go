//go:build linux

package attacktest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The race and fault tests for every operation that takes two
// paths or a parent plus a leaf: Remove, RemoveAll, MkdirAll, Rename and
// WriteFile (temporary file + rename). While an attacker exchanges the
// directory $ROOT/d with the symlink $ROOT/dlink => $OUT as fast as it can
// (RaceEnv), the operation runs in a loop on names below d.
// Sentinels in $OUT carry the names a redirected call would remove, move
// or replace. Afterwards nothing outside the root may have changed, ever:
// an inotify watch on $OUT, its subdirectories and the directory holding
// $ROOT must have seen no event, and $OUT must hold the same names, inodes
// and contents as before. No ".landjail-tmp-*" file may be left anywhere.
// openat/race_ops_test.go and jail/race_ops_test.go run it against
// openat.Root and jail.Workspace.

// OpsFS is what both openat.Root and jail.Workspace offer.
type OpsFS interface {
	Remove(name string) error
	RemoveAll(name string) error
	MkdirAll(name string, perm fs.FileMode) error
	Rename(oldname, newname string) error
	WriteFile(name string, data []byte, perm fs.FileMode) error
}

// opsRaceIterations is the number of calls per operation and mechanism;
// opsRaceMaxDur bounds each loop so that the whole file stays within a few
// seconds (20 loops) even under -race.
func opsRaceIterations() int {
	if testing.Short() {
		return 2_000
	}
	return 20_000
}

const opsRaceMaxDur = 300 * time.Millisecond

// opsRaceMaxWait bounds a loop that has not yet seen a call succeed and
// a call fail.
const opsRaceMaxWait = 5 * time.Second

// RaceOp is one operation under attack. outside lists the sentinels
// created in $OUT ("name/" a directory, else a file holding "OUTSIDE
// name"); setup prepares the real directory d through its fd dfd, which
// follows it whatever its name at the moment; prepare restores the state
// before call i; call runs the operation; after checks the inside state.
type RaceOp struct {
	name    string // see Name
	outside []string
	setup   func(t *testing.T, dfd int)
	prepare func(dfd, i int)
	call    func(fsys OpsFS, i int) error
	after   func(t *testing.T, dfd int, root string, ok int)
}

// RaceOps are the operations and their sentinels.
var RaceOps = []RaceOp{
	{
		name:    "Remove",
		outside: []string{"victim"},
		prepare: func(dfd, _ int) { opsTouch(dfd, "victim") },
		call:    func(fsys OpsFS, _ int) error { return fsys.Remove("d/victim") },
	},
	{
		name:    "RemoveAll",
		outside: []string{"victimdir/", "victimdir/f", "victimdir/sub/", "victimdir/sub/g"},
		prepare: func(dfd, _ int) {
			unix.Mkdirat(dfd, "victimdir", 0o755)
			unix.Mkdirat(dfd, "victimdir/sub", 0o755)
			opsTouch(dfd, "victimdir/f")
			opsTouch(dfd, "victimdir/sub/g")
		},
		call: func(fsys OpsFS, _ int) error { return fsys.RemoveAll("d/victimdir") },
	},
	{
		name:    "MkdirAll",
		outside: []string{"keep"},
		prepare: func(dfd, _ int) {
			unix.Unlinkat(dfd, "new/sub", unix.AT_REMOVEDIR)
			unix.Unlinkat(dfd, "new", unix.AT_REMOVEDIR)
		},
		call: func(fsys OpsFS, _ int) error { return fsys.MkdirAll("d/new/sub", 0o755) },
	},
	{
		// Two paths, across the swapped component: d/src to the root and
		// back. A redirected first call would move $OUT/src in, a
		// redirected second one would replace it.
		name:    "Rename-across",
		outside: []string{"src", "moved"},
		setup:   func(t *testing.T, dfd int) { opsTouch(dfd, "src") },
		call: func(fsys OpsFS, i int) error {
			if i%2 == 0 {
				return fsys.Rename("d/src", "moved")
			}
			return fsys.Rename("moved", "d/src")
		},
		after: func(t *testing.T, dfd int, root string, _ int) {
			_, inD := opsLstatAt(dfd, "src")
			_, inRoot := os.Lstat(filepath.Join(root, "moved"))
			assert.True(t, (inD == nil) != (inRoot == nil), "the renamed file must be in exactly one place (d/src: %v, moved: %v)", inD, inRoot)
		},
	},
	{
		// Two paths, both below the swapped component.
		name:    "Rename-within",
		outside: []string{"src", "dst"},
		setup:   func(t *testing.T, dfd int) { opsTouch(dfd, "src") },
		call: func(fsys OpsFS, i int) error {
			if i%2 == 0 {
				return fsys.Rename("d/src", "d/dst")
			}
			return fsys.Rename("d/dst", "d/src")
		},
		after: func(t *testing.T, dfd int, _ string, _ int) {
			_, src := opsLstatAt(dfd, "src")
			_, dst := opsLstatAt(dfd, "dst")
			assert.True(t, (src == nil) != (dst == nil), "the renamed file must be in exactly one place (src: %v, dst: %v)", src, dst)
		},
	},
	{
		name:    "WriteFile",
		outside: []string{"file"},
		call: func(fsys OpsFS, i int) error {
			return fsys.WriteFile("d/file", []byte(fmt.Sprintf("INSIDE %d", i)), 0o644)
		},
		after: func(t *testing.T, dfd int, _ string, ok int) {
			if ok == 0 {
				return
			}
			fd, err := unix.Openat(dfd, "file", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
			require.NoError(t, err, "d/file after successful WriteFiles")
			f := os.NewFile(uintptr(fd), "d/file")
			defer f.Close()
			b := make([]byte, 64)
			n, _ := f.Read(b)
			assert.True(t, strings.HasPrefix(string(b[:n]), "INSIDE "), "d/file holds %q", b[:n])
		},
	},
}

// opsTouch creates name below dfd if it is missing (errors ignored: the
// call under test reports the state it finds).
func opsTouch(dfd int, name string) {
	fd, err := unix.Openat(dfd, name, unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err == nil {
		unix.Close(fd)
	}
}

func opsLstatAt(dfd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// opsSnapshot describes every entry below dir, not following symlinks:
// name to type, inode, mode and (files) content or (symlinks) target.
func opsSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		desc := fmt.Sprintf("ino=%d mode=%o", st.Ino, st.Mode)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			tgt, err := os.Readlink(p)
			if err != nil {
				return err
			}
			desc += " -> " + tgt
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += fmt.Sprintf(" %q", b)
		}
		m[rel] = desc
		return nil
	})
	require.NoError(t, err)
	return m
}

// opsWatch is an inotify watch on directories outside the root; events
// returns every change it saw (reads and opens are not watched).
type opsWatch struct {
	fd   int
	dirs map[int32]string
}

const opsWatchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

func newOpsWatch(t *testing.T, dirs ...string) *opsWatch {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	require.NoError(t, err)
	w := &opsWatch{fd: fd, dirs: map[int32]string{}}
	t.Cleanup(func() { unix.Close(fd) })
	for _, d := range dirs {
		wd, err := unix.InotifyAddWatch(fd, d, opsWatchMask)
		require.NoError(t, err, "inotify_add_watch %s", d)
		w.dirs[int32(wd)] = d
	}
	return w
}

func (w *opsWatch) events(t *testing.T) []string {
	t.Helper()
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(w.fd, buf)
		if err == unix.EAGAIN {
			return out
		}
		require.NoError(t, err)
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			nlen := int(binary.NativeEndian.Uint32(buf[off+12:]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+nlen]), "\x00")
			out = append(out, fmt.Sprintf("%s/%s mask=%#x", w.dirs[wd], name, mask))
			off += unix.SizeofInotifyEvent + nlen
		}
	}
}

// opsTempLeft lists ".landjail-tmp-*" entries below the given directories.
func opsTempLeft(t *testing.T, dirs ...string) []string {
	t.Helper()
	var left []string
	for _, dir := range dirs {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasPrefix(d.Name(), ".landjail-tmp-") {
				left = append(left, p)
			}
			return nil
		}))
	}
	return left
}

// RaceOpsResult is what RunOpsRace observed.
type RaceOpsResult struct {
	tries, ok, swaps int
	errs             map[string]int
	events           []string          // inotify events outside the root
	before, after    map[string]string // opsSnapshot of $OUT
	tempLeft         []string
}

// RunOpsRace runs op under the parent-swap attack against the file system
// open returns for the race tree's root, and records what changed outside;
// with checkInside it also runs op.after on the inside state.
func RunOpsRace(t *testing.T, op RaceOp, checkInside bool, open func(t *testing.T, root string) OpsFS) RaceOpsResult {
	r := NewRaceEnv(t)
	var watchDirs []string
	for _, s := range op.outside {
		p := filepath.Join(r.Out, s)
		if strings.HasSuffix(s, "/") {
			require.NoError(t, os.Mkdir(p, 0o755))
			watchDirs = append(watchDirs, p)
		} else {
			require.NoError(t, os.WriteFile(p, []byte("OUTSIDE "+s), 0o644))
		}
	}
	dfd, err := unix.Open(filepath.Join(r.Root, "d"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	if op.setup != nil {
		op.setup(t, dfd)
	}
	fsys := open(t, r.Root)
	res := RaceOpsResult{errs: map[string]int{}, before: opsSnapshot(t, r.Out)}
	watch := newOpsWatch(t, append(watchDirs, r.Out, filepath.Dir(r.Root))...)

	// The loop ends after n calls or opsRaceMaxDur, but only once calls
	// both succeeded and failed (with two busy cores the attacker can
	// hold the symlink state for a long stretch), or after opsRaceMaxWait.
	n := opsRaceIterations()
	start := time.Now()
	stop := r.StartAttacker(t)
	for i := 0; ; i++ {
		if i&63 == 0 || i >= n {
			el := time.Since(start)
			if (i >= n || el > opsRaceMaxDur) && res.ok > 0 && res.ok < res.tries || el > opsRaceMaxWait {
				break
			}
		}
		if op.prepare != nil {
			op.prepare(dfd, i)
		}
		res.tries++
		if err := op.call(fsys, i); err != nil {
			res.errs[opsErrKey(err)]++
			continue
		}
		res.ok++
	}
	res.swaps = stop()
	res.events = watch.events(t)
	res.after = opsSnapshot(t, r.Out)
	res.tempLeft = opsTempLeft(t, r.Root, r.Out)
	t.Logf("%s: %d calls, %d succeeded, %d swaps; errors %v", op.name, res.tries, res.ok, res.swaps, res.errs)
	if checkInside && op.after != nil {
		op.after(t, dfd, r.Root, res.ok)
	}
	return res
}

// AssertContained: nothing outside the root changed, no temporary file
// is left, and the race was real (calls succeeded and failed, the
// attacker swapped).
func AssertContained(t *testing.T, res RaceOpsResult) {
	t.Helper()
	assert.Empty(t, res.events, "something outside the root changed during the race")
	assert.Equal(t, res.before, res.after, "the outside tree changed")
	assert.Empty(t, res.tempLeft, "temporary files left behind")
	assert.Positive(t, res.ok, "no call succeeded: the race proves nothing")
	assert.Positive(t, res.tries-res.ok, "no call failed: the attacker never got in the way")
	assert.Positive(t, res.swaps, "the attacker never swapped")
}

// opsErrKey names an error by its errno, for the log.
func opsErrKey(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// Name names the operation, for subtests.
func (o RaceOp) Name() string { return o.name }

// Events returns the inotify events seen outside the root during the race.
func (r RaceOpsResult) Events() []string { return r.events }
