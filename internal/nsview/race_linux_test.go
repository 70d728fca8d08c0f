package nsview_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/nsview"
)

// TestEnterRace: while views are built, an attacker goroutine (standing
// for another confined child sharing the workspace) keeps exchanging a
// middle component of one writable root, the last component of another,
// and a mask target with symbolic links to the outside tree
// (renameat2 RENAME_EXCHANGE, atomic). Each Enter must either fail (ELOOP,
// ErrChanged) or build a view in which the outside tree is still
// read-only and unmasked, and the real secret is masked.
func TestEnterRace(t *testing.T) {
	requireViews(t)
	tr := newTree(t)
	mk := func(p string) { require.NoError(t, os.MkdirAll(p, 0o755)) }
	mk(tr.ws + "/sub/inner")
	mk(tr.ws + "/w2")
	mk(tr.out + "/inner")
	mk(tr.out + "/w2")
	for link, target := range map[string]string{
		"sublink": tr.out,           // ws/sublink/inner = outside/inner
		"w2link":  tr.out + "/w2",   // ws/w2link = outside/w2
		"envlink": tr.out + "/prog", // ws/envlink = outside/prog
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(tr.ws, link)))
	}
	pairs := [][2]string{{"sub", "sublink"}, {"w2", "w2link"}, {".env", "envlink"}}
	exchange := func(p [2]string) error {
		return unix.Renameat2(unix.AT_FDCWD, filepath.Join(tr.ws, p[0]), unix.AT_FDCWD, filepath.Join(tr.ws, p[1]), unix.RENAME_EXCHANGE)
	}
	// normalize puts the real entries back; it runs on the host's side
	// (in the view the mask makes the exchange of .env fail with EBUSY).
	normalize := func() {
		for _, p := range pairs {
			fi, err := os.Lstat(filepath.Join(tr.ws, p[0]))
			require.NoError(t, err)
			if fi.Mode()&os.ModeSymlink != 0 {
				require.NoError(t, exchange(p))
			}
		}
	}
	v := nsview.New().Writable(tr.ws+"/sub/inner", tr.ws+"/w2").Mask(tr.ws + "/.env")

	const rounds = 300
	var ok, raced int
	for i := range rounds {
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				if err := exchange(pairs[n%len(pairs)]); err != nil {
					t.Errorf("attacker: %v", err)
					return
				}
			}
		}()
		var checks map[string]string
		entered, checkNow := make(chan struct{}), make(chan struct{})
		go func() {
			// Stop the attacker once the view is built (or failed), and
			// restore the tree from the host's side before the checks.
			defer close(checkNow) // also when normalize fails the test
			<-entered
			stop.Store(true)
			wg.Wait()
			normalize()
		}()
		err := inView(v, func() error {
			close(entered)
			<-checkNow
			checks = map[string]string{
				"outside/inner writable": helperOp([]string{"create", tr.out + "/inner/probe"}),
				"outside/w2 writable":    helperOp([]string{"create", tr.out + "/w2/probe"}),
				"outside/prog masked":    helperOp([]string{"read", tr.out + "/prog"}),
				"ws/.env masked":         helperOp([]string{"read", tr.ws + "/.env"}),
				"ws/sub/inner writable":  helperOp([]string{"create", tr.ws + "/sub/inner/probe"}),
				"ws/w2 writable":         helperOp([]string{"create", tr.ws + "/w2/probe"}),
			}
			return nil
		})
		if err != nil {
			close(entered)
			<-checkNow
		}
		os.Remove(tr.ws + "/sub/inner/probe")
		os.Remove(tr.ws + "/w2/probe")
		if err != nil {
			if !errors.Is(err, unix.ELOOP) && !errors.Is(err, nsview.ErrChanged) {
				t.Fatalf("round %d: unexpected error: %v", i, err)
			}
			raced++
			continue
		}
		ok++
		require.Equal(t, map[string]string{
			"outside/inner writable": "EROFS",
			"outside/w2 writable":    "EROFS",
			"outside/prog masked":    "OUT",
			"ws/.env masked":         "",
			"ws/sub/inner writable":  "ok",
			"ws/w2 writable":         "ok",
		}, checks, "round %d", i)
		tr.checkHost(t)
	}
	t.Logf("%d views built, %d refused by a race", ok, raced)
	assert.Positive(t, ok, "no view was built: the test proved nothing")
	assert.Positive(t, raced, "the attacker never won a race: the test proved nothing")
	for _, p := range []string{tr.out + "/inner/probe", tr.out + "/w2/probe"} {
		_, err := os.Stat(p)
		assert.ErrorIs(t, err, os.ErrNotExist, "outside written: %s", p)
	}
}
