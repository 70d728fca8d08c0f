package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

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
// report name the layer.
func TestRunNamespaces(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	for _, tc := range []struct {
		name       string
		flags      []string
		layer      string
		out        string
		stderrHas  string
		needsLayer bool
	}{
		{
			name: "namespaces (default)", layer: landlock.LayerNamespaces, needsLayer: true,
			out: "touch\nmkdir\nsed\nntf\nenv=[]\nenv-protected\n",
		},
		{
			name: "--no-namespaces", flags: []string{"--no-namespaces"}, layer: landlock.LayerLandlockOnly,
			out:       "no-touch\nno-mkdir\nno-sed\nno-ntf\nenv=[]\nenv-protected\n",
			stderrHas: "dropping --no-namespaces avoids it",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsLayer {
				kerneltest.RequireFeature(t, "mount namespaces", nsview.Probe())
			}
			ws := wsDir(t)
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1\n"), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
			args := append([]string{"run", "--deny-secrets", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
			code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", nsScript)...)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, tc.out, stdout)
			frozen := "landjail: frozen directory " + ws + ":"
			if tc.stderrHas != "" {
				assert.Contains(t, stderr, frozen)
				assert.Contains(t, stderr, tc.stderrHas)
			} else {
				assert.NotContains(t, stderr, "frozen directory")
			}
			b, err := os.ReadFile(filepath.Join(ws, ".env"))
			require.NoError(t, err)
			assert.Equal(t, "SECRET=1\n", string(b), "host .env unchanged")

			code, stdout, stderr = runCLI(t, append([]string{"run", "--print-rules", "--deny-secrets", "--workspace", ws}, tc.flags...)...)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "# layer: "+tc.layer)
			if tc.layer == landlock.LayerNamespaces {
				assert.Contains(t, stdout, "# mask: "+filepath.Join(ws, ".env"))
			}
		})
	}
}

// TestRunStrictRefusesFrozenFallback: --strict with a policy whose
// carve-outs would freeze directories refuses to fall back when the
// namespace layer is unavailable (emulated: unshare refused with EPERM on
// every thread, as Docker's default profile does), naming
// --no-namespaces; --no-namespaces --strict runs (the user accepted
// carve-outs), and best effort runs with one stderr line per frozen
// directory naming why the layer is off.
func TestRunStrictRefusesFrozenFallback(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	require.NoError(t, denyUnshare())
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

// denyUnshare makes unshare(2) fail with EPERM on every thread of this
// (subprocess) test binary, as Docker's default seccomp profile does
// without CAP_SYS_ADMIN (seccomp with SECCOMP_FILTER_FLAG_TSYNC).
func denyUnshare() error {
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_UNSHARE, SkipFalse: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW},
	})
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, r := range prog {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return e
	}
	runtime.KeepAlive(filter)
	return nil
}
