package privdirs

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// env points the cache directory and TMPDIR at fresh directories (never
// the machine's: other runs live there) and returns the private-HOME
// parent and the TMPDIR.
func env(t *testing.T) (homes, tmp string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cache, tmp := filepath.Join(base, "cache"), filepath.Join(base, "tmp")
	homes = filepath.Join(cache, "landjail", "home")
	require.NoError(t, os.MkdirAll(homes, 0o700))
	require.NoError(t, os.MkdirAll(tmp, 0o700))
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("TMPDIR", tmp)
	return homes, tmp
}

// mkdirOld makes dir (and parents) with its modification time 48 hours
// ago: unused for longer than a day.
func mkdirOld(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	old := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(dir, old, old))
}

const (
	hashA = "0123456789abcdef"
	hashB = "fedcba9876543210"
)

// TestGCDoesNotFollowLinks: a confined command can plant symbolic links
// in its private HOME (and a name in TMPDIR cannot be a link of the
// caller's): gc removes the HOME, the links as links, and never reaches
// their targets. Control: the links do reach the victim (removing what
// one resolves to deletes it, as "rm -rf HOME/link/" would).
func TestGCDoesNotFollowLinks(t *testing.T) {
	homes, tmp := env(t)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.MkdirAll(filepath.Join(victim, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(victim, "precious"), []byte("x"), 0o644))
	mkdirOld(t, victim) // old enough: only the links keep gc from it
	home := filepath.Join(homes, hashA)
	require.NoError(t, os.MkdirAll(filepath.Join(home, "sub"), 0o700))
	require.NoError(t, os.Symlink(victim, filepath.Join(home, "link")))
	require.NoError(t, os.Symlink(filepath.Join(victim, "precious"), filepath.Join(home, "sub", "file")))
	mkdirOld(t, home)
	// Names that match a pattern but are links to the victim.
	require.NoError(t, os.Symlink(victim, filepath.Join(homes, hashB)))
	require.NoError(t, os.Symlink(victim, filepath.Join(tmp, "landjail-123")))

	dirs, err := GC(Options{OlderThan: 24 * time.Hour})
	require.NoError(t, err)
	require.Len(t, dirs, 1, "only the real directory is a candidate: %+v", dirs)
	assert.True(t, dirs[0].Removed, "%+v", dirs[0])
	assert.NoDirExists(t, home)
	assert.FileExists(t, filepath.Join(victim, "precious"), "gc followed a link")
	assert.DirExists(t, filepath.Join(victim, "d"))
	for _, l := range []string{filepath.Join(homes, hashB), filepath.Join(tmp, "landjail-123")} {
		_, err := os.Lstat(l)
		assert.NoError(t, err, "a link in a candidate's name is left alone: %s", l)
	}

	// Control: the planted link leads to the victim.
	resolved, err := filepath.EvalSymlinks(filepath.Join(homes, hashB))
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(resolved))
	assert.NoFileExists(t, filepath.Join(victim, "precious"), "control: following the link deletes the victim")
}

// TestGCSelectsByNameOwnerAge: only landjail's names, real directories
// owned by the caller, unused for longer than OlderThan; --dry-run
// removes nothing.
func TestGCSelectsByNameOwnerAge(t *testing.T) {
	homes, tmp := env(t)
	uid := os.Geteuid()
	old := []string{
		filepath.Join(homes, hashA),
		filepath.Join(tmp, "landjail-"+itoa(uid)+"-0123456789ab"),
		filepath.Join(tmp, "landjail-home-"+itoa(uid)+"-"+hashB),
		filepath.Join(tmp, "landjail-4242"),
	}
	others := []string{
		filepath.Join(homes, "not-a-hash"),
		filepath.Join(tmp, "landjail-"+itoa(uid+1)+"-0123456789ab"), // another user's name
		filepath.Join(tmp, "landjail-test-cache-1"),
		filepath.Join(tmp, "mine"),
	}
	for _, d := range append(append([]string(nil), old...), others...) {
		mkdirOld(t, d)
	}
	recent := filepath.Join(tmp, "landjail-777")
	require.NoError(t, os.Mkdir(recent, 0o700))
	// What an interrupted gc left: removed whatever its age.
	trash := []string{filepath.Join(tmp, ".landjail-gc-1-2"), filepath.Join(homes, ".landjail-gc-3-4")}
	for _, d := range trash {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "sub"), 0o700))
	}
	old = append(old, trash...)
	others = append(others, filepath.Join(tmp, ".landjail-gc-x"))
	require.NoError(t, os.Mkdir(filepath.Join(tmp, ".landjail-gc-x"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "landjail-888"), nil, 0o600)) // a file
	if uid == 0 {
		foreign := filepath.Join(tmp, "landjail-999")
		mkdirOld(t, foreign)
		require.NoError(t, os.Chown(foreign, 4321, 4321))
		others = append(others, foreign)
	}

	dirs, err := GC(Options{OlderThan: 24 * time.Hour, DryRun: true})
	require.NoError(t, err)
	var listed []string
	for _, d := range dirs {
		listed = append(listed, d.Path)
		assert.False(t, d.Removed)
	}
	assert.ElementsMatch(t, append(old, recent), listed)
	for _, d := range old {
		assert.DirExists(t, d, "dry run")
	}

	_, err = GC(Options{OlderThan: 24 * time.Hour})
	require.NoError(t, err)
	for _, d := range old {
		assert.NoDirExists(t, d)
	}
	for _, d := range append(others, recent) {
		assert.DirExists(t, d)
	}
	assert.FileExists(t, filepath.Join(tmp, "landjail-888"))
}

// TestGCLiveMarker: a directory a live landjail recorded is kept
// whatever its age; once the run ends (or its process is gone) it goes.
func TestGCLiveMarker(t *testing.T) {
	homes, tmp := env(t)
	home, runTmp := filepath.Join(homes, hashA), filepath.Join(tmp, "landjail-5150")
	mkdirOld(t, home)
	mkdirOld(t, runTmp)
	r := Begin()
	require.NotNil(t, r)
	require.NoError(t, r.Record(runTmp, home))
	for _, d := range []string{home, runTmp} { // Record marks them used now
		old := time.Now().Add(-48 * time.Hour)
		require.NoError(t, os.Chtimes(d, old, old))
	}
	// A marker of a process that is gone is removed.
	live, err := liveDir()
	require.NoError(t, err)
	stale := filepath.Join(live, "999999999-1")
	require.NoError(t, os.WriteFile(stale, []byte(markerHeader+"\n"+home+"\n"), 0o600))

	dirs, err := GC(Options{OlderThan: time.Hour})
	require.NoError(t, err)
	require.Len(t, dirs, 2)
	for _, d := range dirs {
		assert.Equal(t, os.Getpid(), d.InUseBy, d.Path)
		assert.False(t, d.Removed)
	}
	assert.DirExists(t, home)
	assert.DirExists(t, runTmp)
	assert.NoFileExists(t, stale)

	// Control: the same directories once the run ended.
	r.End()
	_, err = GC(Options{OlderThan: time.Hour})
	require.NoError(t, err)
	assert.NoDirExists(t, home)
	assert.NoDirExists(t, runTmp)
}

// TestRecordTouches: Record marks the directories used now.
func TestRecordTouches(t *testing.T) {
	homes, _ := env(t)
	home := filepath.Join(homes, hashA)
	mkdirOld(t, home)
	r := Begin()
	require.NotNil(t, r)
	defer r.End()
	require.NoError(t, r.Record(home))
	fi, err := os.Stat(home)
	require.NoError(t, err)
	assert.Less(t, time.Since(fi.ModTime()), time.Minute)
}

func itoa(i int) string { return strconv.Itoa(i) }

// BenchmarkRecord is what every run pays for its marker: Begin, Record
// of two directories, End.
func BenchmarkRecord(b *testing.B) {
	base := b.TempDir()
	b.Setenv("XDG_CACHE_HOME", base)
	home, tmp := filepath.Join(base, "h"), filepath.Join(base, "t")
	require.NoError(b, os.Mkdir(home, 0o700))
	require.NoError(b, os.Mkdir(tmp, 0o700))
	for b.Loop() {
		r := Begin()
		if err := r.Record(tmp, home); err != nil {
			b.Fatal(err)
		}
		r.End()
	}
}

// TestRecordPrunes: runs that execve leave their marker; each Record
// removes up to pruneMax markers of processes that are gone, never a
// live one, so the directory does not grow without landjail gc.
func TestRecordPrunes(t *testing.T) {
	env(t)
	live, err := liveDir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(live, 0o700))
	for i := range 10 {
		require.NoError(t, os.WriteFile(filepath.Join(live, "99999999"+strconv.Itoa(i)+"-1"), nil, 0o600))
	}
	st, err := startTime(os.Getppid())
	require.NoError(t, err)
	alive := filepath.Join(live, strconv.Itoa(os.Getppid())+"-"+strconv.FormatUint(st, 10))
	require.NoError(t, os.WriteFile(alive, nil, 0o600))
	count := func() int {
		ents, err := os.ReadDir(live)
		require.NoError(t, err)
		return len(ents)
	}
	before := count() // 10 stale and the live one; Begin adds .lock
	r := Begin()
	require.NoError(t, r.Record())
	r.End() // waits for the prune
	assert.Equal(t, before+1-pruneMax, count(), ".lock added, ours removed, pruneMax stale removed")
	for range 3 {
		r := Begin()
		require.NoError(t, r.Record())
		r.End()
	}
	assert.Equal(t, 2, count(), "the live marker and .lock remain")
	assert.FileExists(t, alive)
}
