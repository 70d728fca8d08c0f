package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/landlock"
)

// nsScript edits the workspace root the way agents' tools do (touch,
// mkdir, sed -i, Python's NamedTemporaryFile(dir=".")), reads .env and
// tries to overwrite it; one word per step.
const nsScript = `touch NEW 2>/dev/null && echo touch || echo no-touch
mkdir D 2>/dev/null && echo mkdir || echo no-mkdir
sed -i s/a/b/ a.txt 2>/dev/null && echo sed || echo no-sed
/usr/bin/python3 -c 'import tempfile; tempfile.NamedTemporaryFile(dir=".")' 2>/dev/null && echo ntf || echo no-ntf
cat .env >/dev/null 2>&1 && echo env-read || echo env-refused
(echo X > .env) 2>/dev/null && echo wrote-env || echo env-protected`

// TestRunNamespaces: `landjail run --deny-secrets` with a .env at the
// workspace root. With the namespace layer (default, as root) every edit
// at the root works, .env is refused (EACCES, never read as empty) and
// cannot be written, and no
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
		secret = "env-refused\nenv-protected\n" // every row, every mode
	)
	type want struct {
		layer     landlock.Layer
		out       string
		stderrHas []string // the frozen-directory line is expected when not empty
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
			assert.Contains(t, stdout, "# layer: "+w.layer.String())
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

	code, _, stderr := runCLIRaw(t, append(base, "--strict", "--", "true")...)
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

// unprivLayer is the file-system layer `landjail run` gives an
// unprivileged caller (uid 65534, no capabilities) on a machine that
// allows user namespaces, as this one does: the namespace layer, built by
// the user-namespace stage (exec.Init in landjail's main). Every row of
// TestRunUnprivileged follows this value (LayerLandlockOnly before the
// stage existed). Under LANDJAIL_EMULATE=ns=... (clone with CLONE_NEWUSER
// refused, as under Docker's default profile) the run is landlock-only
// whatever this says, with the errno as the reason.
const unprivLayer = landlock.LayerNamespaces

// TestRunUnprivileged runs the built landjail as uid 65534 (its own HOME
// and workspace) and states, per layer, what differs from a root caller:
// the layer and its reason (--print-rules), frozen directories for a .env
// at the root, --strict refusing the frozen fallback, the private TMPDIR
// (the user's, mode 0700) and whether the host's /tmp shows, and --user,
// which needs root: refused, leaving nothing behind in /tmp. The secret
// verdicts are the same in every layer.
func TestRunUnprivileged(t *testing.T) { testRunUnprivileged(t) }

// TestRunUnprivilegedNoCaps is TestRunUnprivileged where a user namespace
// can be made but carries no capability (LANDJAIL_EMULATE=nscaps=EPERM:
// Ubuntu's AppArmor restriction, kernel.apparmor_restrict_unprivileged_userns
// = 1): the probe must see that the stage cannot build the view, so the
// run falls back to the carve-outs, with the reason, instead of failing
// at the stage (exit 126: "fork/exec /proc/self/fd/6: operation not
// permitted", what a probe of CLONE_NEWUSER alone let through).
func TestRunUnprivilegedNoCaps(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature: no kerneltest skip
	}
	if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"=nscaps=EPERM") {
		return
	}
	testRunUnprivileged(t)
}

func testRunUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature: no kerneltest skip
	}
	kerneltest.RequireLandlockABI(t, 1) // the path check refuses these scripts
	layer, why := unprivLayer, "not root (no CAP_SYS_ADMIN)"
	if errno, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		if layer == landlock.LayerNamespaces {
			why = errno.Error()
		}
		layer = landlock.LayerLandlockOnly
	}
	bin := landjailBin(t)
	base := wsDir(t)
	// uid 65534 must reach the binary and the workspace: open up the
	// directories this test binary made (buildCLI's and t.TempDir's), up
	// to and never including TMPDIR itself.
	for _, d := range []string{filepath.Dir(bin), base, filepath.Dir(base)} {
		require.NotEqual(t, filepath.Clean(os.TempDir()), d)
		require.NoError(t, os.Chmod(d, 0o755))
	}
	ws, home := filepath.Join(base, "ws"), filepath.Join(base, "home")
	for _, d := range []string{ws, home} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644))
	for _, p := range []string{ws, home, filepath.Join(ws, ".env"), filepath.Join(ws, "a.txt")} {
		require.NoError(t, os.Chown(p, 65534, 65534))
	}
	host, err := os.CreateTemp("", "landjail-unpriv-host-")
	require.NoError(t, err)
	host.Close()
	require.NoError(t, os.Chmod(host.Name(), 0o644))
	t.Cleanup(func() { os.Remove(host.Name()) })

	run := func(args ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		c := osexec.CommandContext(ctx, bin, args...)
		c.Dir = ws
		c.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "GOCOVERDIR=")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		var stdout, stderr strings.Builder
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		require.NoError(t, ctx.Err(), "landjail %q hung", args)
		code := 0
		if err != nil {
			var ee *osexec.ExitError
			require.ErrorAs(t, err, &ee, "%s", stderr.String())
			code = ee.ExitCode()
		}
		return code, stdout.String(), stderr.String()
	}
	base2 := []string{"run", "--deny-secrets", "--workspace", ws, "--timeout", "1m"}
	ns := layer == landlock.LayerNamespaces
	pick := func(inNS, carve string) string {
		if ns {
			return inNS
		}
		return carve
	}

	t.Run("layer and reason", func(t *testing.T) {
		code, stdout, stderr := run(append(base2, "--print-rules")...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stdout, "# layer: "+layer.String())
		if !ns {
			assert.Contains(t, stdout, why)
		}
	})
	t.Run("timeout reported", func(t *testing.T) {
		// The stage turns the command's death by signal into exit
		// 128+N; the timeout is landjail's own to report.
		code, _, stderr := run("run", "--workspace", ws, "--timeout", "1s", "--", "sleep", "30")
		assert.NotZero(t, code)
		assert.Contains(t, stderr, "timed out after 1s")
	})
	t.Run("landjail killed with SIGKILL", func(t *testing.T) {
		if !ns {
			t.Skip("no stage: without a PID namespace descendants outlive a SIGKILL of landjail (README, Limits)")
		}
		// The stage is landjail's child: when landjail dies, the
		// keep-alive pipe reaches end of file, the stage (PID 1 of the
		// namespace) exits and the kernel kills the rest, a setsid'd
		// daemon included.
		arg := fmt.Sprintf("301.%d", os.Getpid())
		c := osexec.Command(bin, "run", "--workspace", ws, "--timeout", "1m", "--",
			"sh", "-c", "setsid sleep "+arg+" </dev/null >/dev/null 2>&1 & exec sleep "+arg)
		c.Dir = ws
		c.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "GOCOVERDIR=")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		require.NoError(t, c.Start())
		want := "sleep\x00" + arg + "\x00"
		deadline := time.Now().Add(20 * time.Second)
		for proctest.Find(want) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		require.NotZero(t, proctest.Find(want), "the command did not start")
		require.NoError(t, c.Process.Kill())
		c.Wait()
		for proctest.Find(want) != 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		pid := proctest.Find(want)
		for p := pid; p != 0; p = proctest.Find(want) {
			proctest.Kill(p)
			time.Sleep(10 * time.Millisecond)
		}
		assert.Zero(t, pid, "a process of the namespace outlived landjail")
	})
	t.Run("edits at the root and the secret", func(t *testing.T) {
		code, stdout, stderr := run(append(base2, "--", "sh", "-c", nsScript)...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, pick("touch\nmkdir\nsed\nntf\n", "no-touch\nno-mkdir\nno-sed\nno-ntf\n")+"env-refused\nenv-protected\n", stdout)
		if ns {
			assert.NotContains(t, stderr, "frozen directory")
		} else {
			assert.Contains(t, stderr, "landjail: frozen directory "+ws+":")
			assert.Contains(t, stderr, why)
		}
		b, err := os.ReadFile(filepath.Join(ws, ".env"))
		require.NoError(t, err)
		assert.Equal(t, "SECRET=1\n", string(b), "host .env unchanged")
	})
	t.Run("strict", func(t *testing.T) {
		code, _, stderr := run(append(base2, "--strict", "--", "true")...)
		if ns {
			assert.Equal(t, 0, code, stderr)
		} else {
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, "--no-namespaces")
		}
	})
	t.Run("private TMPDIR and the host's /tmp", func(t *testing.T) {
		code, stdout, stderr := run(append(base2, "--", "sh", "-c",
			`echo x > "$TMPDIR/p" && cat "$TMPDIR/p"; stat -c %u:%a "$TMPDIR"; test -e `+host.Name()+` && echo host-visible || echo host-hidden; echo "$TMPDIR"`)...)
		require.Equal(t, 0, code, stderr)
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		require.Len(t, lines, 4, stdout)
		if tmp := lines[3]; strings.HasPrefix(tmp, os.TempDir()+"/landjail-") {
			t.Cleanup(func() { os.RemoveAll(tmp) })
		}
		assert.Equal(t, []string{"x", "65534:700", pick("host-hidden", "host-visible")}, lines[:3])
	})
	t.Run("PID namespace: host processes and /proc", func(t *testing.T) {
		hostSleep := osexec.Command("sleep", "60")
		require.NoError(t, hostSleep.Start())
		t.Cleanup(func() { hostSleep.Process.Kill(); hostSleep.Wait() })
		hp := strconv.Itoa(hostSleep.Process.Pid)
		code, stdout, stderr := run(append(base2, "--", "sh", "-c",
			`kill -0 `+hp+` 2>&1 | grep -o 'No such process\|not permitted'; head -1 /proc/self/status 2>&1 | grep -o 'Name\|denied'; grep -c Cap.*0000000000000000 /proc/self/status 2>/dev/null || echo no-proc`)...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, pick("No such process\nName\n4\n", "not permitted\ndenied\nno-proc\n"), stdout, "in the namespace: the host's sleep does not exist, /proc is the fresh one, no capability (CapInh, CapPrm, CapEff, CapAmb all zero; the stage's ambient ones are cleared)")
	})
	t.Run("--user needs root", func(t *testing.T) {
		// What root's --user 0 run for this workspace would use (cliopts
		// home, workspaceTmp).
		sum := sha256.Sum256([]byte(ws))
		leftovers := []string{
			filepath.Join(os.TempDir(), fmt.Sprintf("landjail-home-0-%x", sum[:8])),
			filepath.Join(os.TempDir(), fmt.Sprintf("landjail-0-%x", sum[:6])),
		}
		t.Cleanup(func() {
			for _, d := range leftovers {
				os.RemoveAll(d)
			}
		})
		code, stdout, stderr := run("run", "--user", "0", "--workspace", ws, "--timeout", "1m", "--", "id", "-u")
		assert.Equal(t, exitUsage, code, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "operation not permitted")
		for _, d := range leftovers {
			assert.NoFileExists(t, d, "a refused --user leaves nothing behind named for uid 0 and owned by 65534")
			assert.NoDirExists(t, d, "a refused --user leaves nothing behind named for uid 0 and owned by 65534")
		}
	})
}

// TestDoctorNamespaces: `landjail doctor` names the namespace layer and,
// where it is off, why. Per mode: natively (root) "available" and the
// default run's layer is namespaces; under LANDJAIL_EMULATE=ns=EPERM or
// ns=ENOSYS (Docker's default profile) "unavailable: ..." with the errno,
// and the run is landlock-only with the same reason; without Landlock
// (landlock=ENOSYS, all=EPERM) the run is path-check whatever namespaces
// say.
func TestDoctorNamespaces(t *testing.T) {
	layer := kerneltest.ExpectNamespaces(t, nsview.Probe())
	errno, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces)
	t.Chdir(t.TempDir())
	code, out, stderr := runCLI(t, "doctor", "--json")
	require.Equal(t, 0, code, stderr)
	var d struct {
		Namespaces string `json:"namespaces"`
		Run        *struct {
			Layer       landlock.Layer `json:"layer"` // the text form round-trips
			LayerReason string         `json:"layer_reason"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	require.NotNil(t, d.Run, out)
	code, text, stderr := runCLI(t, "doctor")
	require.Equal(t, 0, code, stderr)
	if layer {
		assert.Equal(t, "available", d.Namespaces)
		assert.Contains(t, text, "namespaces:     available\n")
	} else {
		assert.True(t, strings.HasPrefix(d.Namespaces, "unavailable: "), d.Namespaces)
		assert.Contains(t, d.Namespaces, errno.Error())
		assert.Contains(t, text, "namespaces:     unavailable: ")
	}
	switch {
	case kernel.LandlockABI() == 0:
		assert.Equal(t, landlock.LayerPathCheck, d.Run.Layer)
	case layer:
		assert.Equal(t, landlock.LayerNamespaces, d.Run.Layer)
	default:
		assert.Equal(t, landlock.LayerLandlockOnly, d.Run.Layer)
		assert.Contains(t, d.Run.LayerReason, errno.Error())
	}
}

// TestRunIPCNamespace: a System V shared-memory segment of the caller
// (mode 0600) is invisible to the command with the namespace layer (its
// own IPC namespace) and in the Landlock-only fallback (the seccomp layer
// refuses System V IPC there), while unconfined `ipcs -m` lists it
// (control), and so does a fallback run with --no-seccomp.
func TestRunIPCNamespace(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	requireProgram(t, "ipcs")
	kerneltest.ExpectNamespaces(t, nsview.Probe()) // the rows hold with and without the layer
	key := 0x4c4a0000 | os.Getpid()&0xffff
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	require.NoError(t, err)
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	hex := fmt.Sprintf("0x%08x", key)

	out, err := osexec.Command("ipcs", "-m").Output()
	require.NoError(t, err)
	require.Contains(t, string(out), hex, "control: the host lists the segment")

	ws := wsDir(t)
	for _, tc := range []struct {
		flags   []string
		visible bool
	}{{nil, false}, {[]string{"--no-namespaces"}, false}, {[]string{"--no-namespaces", "--no-seccomp"}, true}} {
		args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
		code, stdout, stderr := runCLI(t, append(args, "--", "sh", "-c", "ipcs -m; true")...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, tc.visible, strings.Contains(stdout, hex), "%v: %s", tc.flags, stdout)
	}
}

// TestRunPinsMaskParents: the red-team's two-run attack on a pattern with
// a directory component ("**/.kube/config" of --deny-secrets): run 1
// renames .kube away, run 2 reads k/config, which no pattern names. With
// the namespace layer the rename fails (.kube is a mount point in the
// view) and run 2 reads nothing; the control run without landjail shows
// the rename itself works. The Landlock-only fallback cannot pin a
// directory without freezing its parent (README: what it cannot do).
func TestRunPinsMaskParents(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.ExpectNamespaces(t, nsview.Probe()) {
		t.Skip("no namespace layer: the fallback does not pin directories")
	}
	ws := wsDir(t)
	require.NoError(t, os.MkdirAll(filepath.Join(ws, ".kube"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".kube", "config"), []byte("KUBETOKEN"), 0o600))
	base := []string{"run", "--workspace", ws, "--deny-secrets", "--timeout", "1m", "--"}
	code, stdout, stderr := runCLI(t, append(base, "sh", "-c", "cat .kube/config; mv .kube k 2>/dev/null && echo renamed || echo refused")...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "refused\n", stdout)
	code, stdout, stderr = runCLI(t, append(base, "sh", "-c", "cat k/config .kube/config 2>/dev/null; true")...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "KUBETOKEN")
	// Control: unconfined, the rename works.
	require.NoError(t, osexec.Command("mv", filepath.Join(ws, ".kube"), filepath.Join(ws, "k")).Run())
}
