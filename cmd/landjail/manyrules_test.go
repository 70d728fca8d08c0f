package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunManyCarveRules: a tree whose carve-outs are more Landlock rules
// than the process may hold descriptors (100 .env files 20 directories
// deep: ~2,000 directories on the way, each a rule, under RLIMIT_NOFILE
// 1024) starts, the rules' descriptors closed a batch at a time; every
// later --no-namespaces run failed with EMFILE (red team round 22,
// R22b-1, 300 × 80 under the hard limit 20,000). The .env files stay
// denied. Control: the same tree unconfined reads them. Red with the
// descriptors closed only after the last rule: "too many open files".
func TestRunManyCarveRules(t *testing.T) {
	t.Parallel()
	kerneltest.RequireLandlockABI(t, 1)
	bin := landjailBin(t)
	ws := wsDir(t)
	for c := range 100 {
		d := filepath.Join(ws, fmt.Sprintf("c%03d", c), strings.Repeat("d/", 20))
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, ".env"), []byte("S=1\n"), 0o644))
	}
	env := filepath.Join("c042", strings.Repeat("d/", 20), ".env")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644))
	// sh's ulimit -n sets the soft and the hard limit (Go raises the
	// soft one to the hard one at start).
	run := func(args string) (string, error) {
		c := osexec.Command("sh", "-c", "ulimit -n 1024 && exec "+args)
		c.Dir = ws
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := run("cat a.txt " + env)
	require.NoError(t, err, "control: unconfined: %s", out)
	require.Contains(t, out, "S=1")
	out, err = run(bin + " run --no-namespaces --deny-secrets -- cat a.txt")
	require.NoError(t, err, "%s", out)
	assert.Contains(t, out, "hello")
	out, err = run(bin + " run --no-namespaces --deny-secrets -- cat " + env)
	assert.Error(t, err, "the .env file stays denied: %s", out)
	assert.NotContains(t, out, "S=1")
}
