package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// nsScript edits the workspace root the way agents' tools do (touch,
// mkdir, sed -i, Python's NamedTemporaryFile(dir=".")), reads .env and
// tries to overwrite it; one word per step.
const nsScript = `touch NEW 2>/dev/null && echo touch || echo no-touch
mkdir D 2>/dev/null && echo mkdir || echo no-mkdir
sed -i s/a/b/ a.txt 2>/dev/null && echo sed || echo no-sed
/usr/bin/python3 -c 'import tempfile; tempfile.NamedTemporaryFile(dir=".")' 2>/dev/null && echo ntf || echo no-ntf
echo "env=[$(cat .env 2>/dev/null)]"
(echo X > .env) 2>/dev/null && echo wrote-env || echo env-protected`

// TestRunNamespaces: `landjail run --deny-secrets` with a .env at the
// workspace root. With the namespace layer (default, as root) every edit
// at the root works, .env reads empty and cannot be written, and no
// frozen-directory line is printed; with --no-namespaces the carve-out
// freezes the root (every edit there fails) and stderr says so, naming the
// flag; in both the host's .env is unchanged. --print-rules and the
// report name the layer. Per mode: where namespaces are blocked
// (LANDJAIL_EMULATE=ns=EPERM or ns=ENOSYS, as under Docker's default
// profile) the default row falls back to carve-outs: the root is frozen,
// stderr names each frozen directory with the errno and --no-carve, and
// --print-rules says "landlock-only (... <errno>)"; the secret verdicts are
// the same in every row.
func TestRunNamespaces(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	errno, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces)
	const (
		edits  = "touch\nmkdir\nsed\nntf\n"
		frozen = "no-touch\nno-mkdir\nno-sed\nno-ntf\n"
		secret = "env=[]\nenv-protected\n" // every row, every mode
	)
	type want struct {
		layer, out string
		stderrHas  []string // the frozen-directory line is expected when not empty
	}
	fallback := want{landlock.LayerLandlockOnly, frozen + secret, []string{"--no-carve avoids it", errno.Error()}}
	for _, tc := range []struct {
		name   string
		flags  []string
		native want // the layer is available
		noNS   want // namespaces blocked by the emulation
	}{
		{
			name:   "namespaces (default)",
			native: want{landlock.LayerNamespaces, edits + secret, nil},
			noNS:   fallback,
		},
		{
			name: "--no-namespaces", flags: []string{"--no-namespaces"},
			native: want{landlock.LayerLandlockOnly, frozen + secret, []string{"dropping --no-namespaces avoids it"}},
			noNS:   want{landlock.LayerLandlockOnly, frozen + secret, []string{"dropping --no-namespaces avoids it"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := tc.native
			if !layer {
				w = tc.noNS
			}
			ws := wsDir(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
			args := append([]string{"run", "--deny-secrets", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", nsScript)...)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, w.out, stdout)
			if len(w.stderrHas) > 0 {
				assert.Contains(t, stderr, "landjail: frozen directory "+ws+":")
				for _, s := range w.stderrHas {
					assert.Contains(t, stderr, s)
				}
			} else {
				assert.NotContains(t, stderr, "frozen directory")
			}
			b, err := os.ReadFile(filepath.Join(ws, ".env"))
			require.NoError(t, err)
			assert.Equal(t, "SECRET=1\n", string(b), "host .env unchanged")

			code, stdout, stderr = runCLI(t, append([]string{"run", "--print-rules", "--deny-secrets", "--workspace", ws}, tc.flags...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "# layer: "+w.layer)
			if w.layer == landlock.LayerNamespaces {
				assert.Contains(t, stdout, "# mask: "+filepath.Join(ws, ".env"))
			} else if !layer && len(tc.flags) == 0 {
				assert.Contains(t, stdout, "# layer: landlock-only (")
				assert.Contains(t, stdout, errno.Error(), "the reason names the errno")
			}
		})
	}
}

// TestRunStrictRefusesFrozenFallback: --strict with a policy whose
// carve-outs would freeze directories refuses to fall back when the
// namespace layer is unavailable (LANDJAIL_EMULATE=ns=EPERM in a
// subprocess, whatever the run's mode: unshare and the mount syscalls
// refused on every thread, as Docker's default profile does), naming
// --no-namespaces; --no-namespaces --strict runs (the user accepted
// carve-outs), and best effort runs with one stderr line per frozen
// directory naming why the layer is off.
func TestRunStrictRefusesFrozenFallback(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"=ns=EPERM") {
		return
	}
	require.False(t, kerneltest.ExpectNamespaces(t, nsview.Probe()))
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1\n"), 0o600))
	base := []string{"run", "--deny-secrets", "--workspace", ws, "--timeout", "1m"}

	code, _, stderr := runCLI(t, append(base, "--strict", "--", "true")...)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "--no-namespaces")

	code, _, stderr = runCLI(t, append(base, "--strict", "--no-namespaces", "--", "true")...)
	assert.Equal(t, 0, code, stderr)

	code, _, stderr = runCLI(t, append(base, "--", "true")...)
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "landjail: frozen directory "+ws+":")
	assert.Contains(t, stderr, "operation not permitted", "the reason the layer is off")
	assert.Contains(t, stderr, "--no-carve")

	code, stdout, _ := runCLI(t, append(base[:4], "--print-rules")...)
	require.Equal(t, 0, code)
	assert.True(t, strings.Contains(stdout, "# layer: landlock-only (") && strings.Contains(stdout, "operation not permitted"), stdout)
}
