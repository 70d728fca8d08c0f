package landlock

import (
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/presetpaths"
	"github.com/landjail/landjail/internal/selfproc"
)

// envPrefetchChild makes the test binary run prefetchChild and exit
// (from init, before TestMain): selfproc.Start is once per process.
const envPrefetchChild = "LANDLOCK_TEST_PREFETCH_CHILD"

func init() {
	if os.Getenv(envPrefetchChild) == "1" {
		selfproc.Start()
		if err := checkPathFDs(true); err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		fmt.Print("ok")
		os.Exit(0)
	}
}

// checkPathFDs stats every path of the system preset through a pathFDs
// and a temporary directory too, and checks each answer against
// statPath; prefetched says whether internal/selfproc opened the preset
// paths (then pathFDs opens only the directory itself), else pathFDs
// opens each.
func checkPathFDs(prefetched bool) error {
	opens := 0
	defer func(orig func(string) (int, error)) { openPathFD = orig }(openPathFD)
	openPathFD = func(path string) (int, error) {
		opens++
		return openPathFD0(path)
	}
	dir, err := os.MkdirTemp("", "landlock-prefetch-")
	if err != nil {
		return err
	}
	defer os.Remove(dir)
	var p pathFDs
	defer p.close()
	paths := append(presetpaths.All(), dir)
	for _, path := range paths {
		got, gerr := p.stat(path)
		want, werr := statPath(path)
		if got != want || (gerr == nil) != (werr == nil) || (gerr != nil && !errors.Is(gerr, errors.Unwrap(werr))) {
			return fmt.Errorf("%s: pathFDs says dir %v, %v; stat says dir %v, %v", path, got, gerr, want, werr)
		}
	}
	want := len(paths)
	if prefetched {
		want = 1 // the directory, not in the preset
	}
	if opens != want {
		return fmt.Errorf("pathFDs opened %d paths, want %d (prefetched %v)", opens, want, prefetched)
	}
	return nil
}

// openPathFD0 is openPathFD as the package sets it.
var openPathFD0 = openPathFD

// TestPathFDsPrefetched: where internal/selfproc opened the system
// preset's paths (a child that started it), pathFDs takes its
// descriptors and opens only other paths, with the same answers as a
// stat of each; the control (this process, nothing started) opens every
// path itself. Red with pathFDs.stat not asking selfproc.TakePath (the
// child opened them all again).
func TestPathFDsPrefetched(t *testing.T) {
	require.NoError(t, checkPathFDs(false), "control: nothing prefetched")
	c := osexec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), envPrefetchChild+"=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "ok", string(out))
}

// TestSystemRulesPresetPaths: the system preset's rules are on exactly
// internal/presetpaths' paths, in order (with the network's), so that
// what selfproc opens ahead is what the compile asks for.
func TestSystemRulesPresetPaths(t *testing.T) {
	var got []string
	for _, r := range SystemRules(false) {
		got = append(got, r.Path)
	}
	assert.Equal(t, presetpaths.All(), got)
}
