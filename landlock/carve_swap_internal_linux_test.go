package landlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// TestAddCarvedRuleRefusesSwappedParent: a carved rule's path was listed
// as ws/a/sib; if ws/a became a symlink to an outside tree before the rule
// is added, the rule must not land on outside/sib (it would grant the
// sibling's full rights outside the policy). Also with the O_NOFOLLOW walk.
func TestAddCarvedRuleRefusesSwappedParent(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, walk := range []bool{false, true} {
		if walk {
			defer openat.SetForceFallback(true)()
		}
		base, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		ws, out := filepath.Join(base, "ws"), filepath.Join(base, "out")
		require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "sib"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(out, "sib"), 0o755))

		attr := ll.RulesetAttr{HandledAccessFS: uint64(abiConfig(kernelABI()).HandledAccessFS)}
		fd, err := ll.LandlockCreateRuleset(&attr, 0)
		require.NoError(t, err)
		defer unix.Close(fd)
		r := Rule{Path: filepath.Join(ws, "a", "sib"), Access: RightsRead}
		rfd, err := addCarvedRule(fd, r, true)
		require.NoError(t, err, "positive control")
		unix.Close(rfd)

		require.NoError(t, os.Rename(filepath.Join(ws, "a"), filepath.Join(base, "a.old")))
		require.NoError(t, os.Symlink(out, filepath.Join(ws, "a")))
		_, err = addCarvedRule(fd, r, true)
		assert.ErrorIs(t, err, openat.ErrSymlink, "walk=%v", walk)
	}
}

// TestMakeShmDirReplacesPlanted: a command could leave TmpDir/.shm as a
// symlink (or a file) for the next run of the same workspace; makeShmDir
// used to refuse it, so every later run with the namespace layer failed
// to start (red-team finding). It now removes the planted entry, never
// following it, and makes the directory again.
func TestMakeShmDirReplacesPlanted(t *testing.T) {
	for _, plant := range []string{"symlink", "file", "dir"} {
		t.Run(plant, func(t *testing.T) {
			tmp, target := t.TempDir(), t.TempDir()
			before, err := os.Stat(target)
			require.NoError(t, err)
			shm := filepath.Join(tmp, ".shm")
			switch plant {
			case "symlink":
				require.NoError(t, os.Symlink(target, shm))
			case "file":
				require.NoError(t, os.WriteFile(shm, []byte("x"), 0o600))
			case "dir":
				require.NoError(t, os.Mkdir(shm, 0o700))
			}
			got, err := makeShmDir(tmp)
			require.NoError(t, err)
			canon, err := filepath.EvalSymlinks(tmp)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(canon, ".shm"), got)
			fi, err := os.Lstat(got)
			require.NoError(t, err)
			assert.True(t, fi.IsDir(), "a real directory")
			assert.Equal(t, os.ModeDir|os.ModeSticky|0o777, fi.Mode()&(os.ModeType|os.ModeSticky|os.ModePerm))
			tfi, err := os.Stat(target)
			require.NoError(t, err)
			assert.Equal(t, before.Mode(), tfi.Mode(), "the symlink's target was not touched")
		})
	}
}

// TestShmRuleRaceSwap: a command of the same workspace swaps TmpDir/.shm
// with a symlink to an outside tree (renameat2 RENAME_EXCHANGE, in a
// loop) while Compile runs: no rule may land on the outside tree, whose
// inode is checked against every rule descriptor Compile added (red-team
// finding: the .shm rule was opened following symlinks, once granting
// all of /). Compile may fail instead. Control: addPathRule on the
// swapped path does land outside.
func TestShmRuleRaceSwap(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	kerneltest.RequireNamespaces(t, nsview.Probe()) // the .shm rule exists only with the view
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root, tmp, out := filepath.Join(base, "ws"), filepath.Join(base, "tmp"), filepath.Join(base, "out")
	for _, d := range []string{root, tmp, out} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	var outSt unix.Stat_t
	require.NoError(t, unix.Stat(out, &outSt))
	ws, err := jail.New(root)
	require.NoError(t, err)

	// Control: a rule opened following symlinks lands outside.
	require.NoError(t, os.Symlink(out, filepath.Join(tmp, "x")))
	attr := ll.RulesetAttr{HandledAccessFS: uint64(abiConfig(kernelABI()).HandledAccessFS)}
	rfd, err := ll.LandlockCreateRuleset(&attr, 0)
	require.NoError(t, err)
	defer unix.Close(rfd)
	fd, err := addPathRule(rfd, Rule{Path: filepath.Join(tmp, "x"), Access: RightsRead})
	require.NoError(t, err)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	unix.Close(fd)
	require.True(t, st.Dev == outSt.Dev && st.Ino == outSt.Ino, "control")

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// .shm may be missing or a file while makeShmDir works: the
			// exchange then fails, and the symlink is put back.
			unix.Renameat2(unix.AT_FDCWD, filepath.Join(tmp, ".shm"), unix.AT_FDCWD, filepath.Join(tmp, "x"), unix.RENAME_EXCHANGE)
			if _, err := os.Lstat(filepath.Join(tmp, "x")); err != nil {
				os.Symlink(out, filepath.Join(tmp, "x"))
			}
		}
	}()
	defer func() { close(stop); <-done }()

	compiled, failed := 0, 0
	for range 300 {
		rs, err := Compile(ws, Options{Namespaces: true, System: true, TmpDir: tmp})
		if err != nil {
			failed++
			continue
		}
		compiled++
		if rs.kept != nil {
			for _, k := range rs.kept.paths {
				require.NoError(t, unix.Fstat(k.fd, &st))
				require.False(t, st.Dev == outSt.Dev && st.Ino == outSt.Ino, "a rule landed on the outside tree")
			}
		}
		rs.Close()
	}
	t.Logf("compiled %d, failed %d", compiled, failed)
	require.NotZero(t, compiled, "no Compile succeeded: the race checked nothing")
}
