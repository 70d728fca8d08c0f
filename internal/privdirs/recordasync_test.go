package privdirs

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordAsyncKeepsGCOut: while RecordAsync's marker is not written
// yet, a GC waits (the run still holds Begin's lock) and then spares the
// directories, in use by this process; Wait returns once the marker names
// them, and End removes it. Control: the run ended, the same GC removes
// them. Shown able to fail: with RecordAsync releasing the lock before
// its goroutine writes the marker, the GC ran at once and removed both
// (red).
func TestRecordAsyncKeepsGCOut(t *testing.T) {
	homes, tmp := env(t)
	home, runTmp := filepath.Join(homes, hashA), filepath.Join(tmp, "landjail-5150")
	mkdirOld(t, home)
	mkdirOld(t, runTmp)
	hold := make(chan struct{})
	recordAsyncStarts = func() { <-hold }
	t.Cleanup(func() { recordAsyncStarts = func() {} })

	r := Begin()
	require.NotNil(t, r)
	r.RecordAsync(runTmp, home)
	type result struct {
		dirs []Dir
		err  error
	}
	gc := make(chan result, 1)
	go func() {
		dirs, err := GC(Options{OlderThan: time.Hour})
		gc <- result{dirs, err}
	}()
	select {
	case res := <-gc:
		t.Fatalf("GC ran before the marker was written: %+v %v", res.dirs, res.err)
	case <-time.After(300 * time.Millisecond):
	}
	close(hold)
	res := <-gc
	require.NoError(t, res.err)
	require.Len(t, res.dirs, 2)
	for _, d := range res.dirs {
		assert.Equal(t, os.Getpid(), d.InUseBy, d.Path)
		assert.False(t, d.Removed, d.Path)
	}
	assert.DirExists(t, home)
	assert.DirExists(t, runTmp)
	require.NoError(t, r.Wait())
	live, err := liveDir()
	require.NoError(t, err)
	marker := filepath.Join(live, r.marker)
	b, err := os.ReadFile(marker)
	require.NoError(t, err)
	assert.Equal(t, markerHeader+"\n"+runTmp+"\n"+home+"\n", string(b))

	// Control: the run ended, the directories unused for two days.
	r.End()
	assert.NoFileExists(t, marker)
	for _, d := range []string{home, runTmp} {
		old := time.Now().Add(-48 * time.Hour)
		require.NoError(t, os.Chtimes(d, old, old))
	}
	_, err = GC(Options{OlderThan: time.Hour})
	require.NoError(t, err)
	assert.NoDirExists(t, home)
	assert.NoDirExists(t, runTmp)
}

// TestEndWaitsForRecordAsync: End right after RecordAsync returns only
// after the marker's write, and removes it: no marker of this process is
// left (GC would take the directories for a live run's as long as this
// process lives). Wait on a Run without RecordAsync, and on nil, returns
// at once. Shown able to fail: without the Wait in End, End returned
// before the write was let go (red; -race also reports the Run's fields).
func TestEndWaitsForRecordAsync(t *testing.T) {
	homes, _ := env(t)
	home := filepath.Join(homes, hashA)
	mkdirOld(t, home)
	hold := make(chan struct{})
	recordAsyncStarts = func() { <-hold }
	t.Cleanup(func() { recordAsyncStarts = func() {} })
	r := Begin()
	require.NotNil(t, r)
	r.RecordAsync(home)
	var released atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		released.Store(true)
		close(hold)
	}()
	r.End()
	assert.True(t, released.Load(), "End returned before RecordAsync's write")
	live, err := liveDir()
	require.NoError(t, err)
	ents, err := os.ReadDir(live)
	require.NoError(t, err)
	for _, e := range ents {
		assert.Equal(t, ".lock", e.Name(), "a marker left after End")
	}

	recordAsyncStarts = func() {}
	r2 := Begin()
	require.NotNil(t, r2)
	assert.NoError(t, r2.Wait(), "no RecordAsync")
	r2.End()
	var none *Run
	assert.NoError(t, none.Wait())
	none.RecordAsync(home)
}

// TestRecordOn: RecordOn hands Record to the runner: nothing is written
// until the runner runs it (GC still kept out, as with RecordAsync), then
// the marker names the directories and Wait returns; a runner that
// refuses starts nothing and RecordOn reports false (the control: no
// marker, Wait returns at once, and RecordAsync may follow).
func TestRecordOn(t *testing.T) {
	homes, _ := env(t)
	home := filepath.Join(homes, hashA)
	mkdirOld(t, home)

	r := Begin()
	require.NotNil(t, r)
	assert.False(t, r.RecordOn(func(func()) bool { return false }, home), "a refusing runner")
	require.NoError(t, r.Wait(), "nothing started")
	assert.Empty(t, r.marker, "control: no marker without the runner")

	var handed func()
	require.True(t, r.RecordOn(func(f func()) bool { handed = f; return true }, home))
	require.NotNil(t, handed)
	assert.False(t, r.done.Load(), "nothing written before the runner runs it")
	go handed()
	require.NoError(t, r.Wait())
	live, err := liveDir()
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(live, r.marker))
	require.NoError(t, err)
	assert.Contains(t, string(b), home)
	r.End()
}
