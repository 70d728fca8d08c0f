package main

import (
	"encoding/binary"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/setid"
)

// setIDTree makes, in dir (owned by uid), the programs of the set-ID
// tests: tools/helper (04755), tools/capbin (0755 with cap_net_raw+ep,
// as root only) and tools/plain (0755, the control), each holding
// "ORIGINAL", and copies the mmapwrite probe in. It returns the names
// given to the probe.
func setIDTree(t *testing.T, dir string, uid int) []string {
	t.Helper()
	probe := buildCLI(t, "./testdata/mmapwrite", "CGO_ENABLED=0")
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mmapwrite"), data, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tools"), 0o755))
	names := []string{"tools/helper", "tools/plain"}
	if uid == 0 {
		names = append(names, "tools/capbin")
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		require.NoError(t, os.WriteFile(p, []byte("ORIGINAL program\n"), 0o755))
		require.NoError(t, os.Chown(p, uid, uid))
	}
	for _, n := range []string{"", "tools", "mmapwrite"} {
		require.NoError(t, os.Chown(filepath.Join(dir, n), uid, uid))
	}
	require.NoError(t, os.Chmod(filepath.Join(dir, "tools/helper"), 0o755|os.ModeSetuid))
	if uid == 0 {
		caps := make([]byte, 20) // VFS_CAP_REVISION_2, cap_net_raw permitted and effective
		binary.LittleEndian.PutUint32(caps[0:], 0x02000000|1)
		binary.LittleEndian.PutUint32(caps[4:], 1<<unix.CAP_NET_RAW)
		require.NoError(t, unix.Setxattr(filepath.Join(dir, "tools/capbin"), "security.capability", caps, 0))
	}
	return names
}

// mmapVerdicts parses the probe's lines: name -> "ok" or the failure.
func mmapVerdicts(out string) map[string]string {
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if name, v, ok := strings.Cut(l, " "); ok && !strings.HasPrefix(name, "landjail:") {
			got[name] = v
		}
	}
	return got
}

// assertProgramIntact checks that dir's set-ID programs hold what they
// held and kept their bits.
func assertProgramIntact(t *testing.T, dir, what string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tools/helper"))
	require.NoError(t, err)
	assert.Equal(t, "ORIGINAL program\n", string(b), "%s: the set-user-ID program was rewritten", what)
	fi, err := os.Stat(filepath.Join(dir, "tools/helper"))
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode()&os.ModeSetuid, "%s", what)
	if _, err := os.Stat(filepath.Join(dir, "tools/capbin")); err == nil {
		b, err := os.ReadFile(filepath.Join(dir, "tools/capbin"))
		require.NoError(t, err)
		assert.Equal(t, "ORIGINAL program\n", string(b), "%s: the file-capability program was rewritten", what)
	}
}

// TestSetIDProgramsReadOnly: red team round 31, R31a-5. Stores through a
// shared writable mapping keep a program's set-user-ID bit and file
// capabilities (write(2) strips them): a confined command that may open
// such a program of the workspace for writing puts its own code in a
// program that runs as the owner outside the sandbox. Under
// --protect-agent-config `landjail run` makes them read-only in both
// layers: the probe's open O_RDWR is refused, the program is intact,
// its sibling is written. Controls: unconfined, the probe rewrites the
// program and the bit stays (the kernel's behaviour the attack needs);
// confined without --protect-agent-config it does too (README says so).
func TestSetIDProgramsReadOnly(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root: set-user-ID programs of root, file capabilities") // not a kernel feature
	}
	t.Parallel()
	bin := landjailBin(t)

	ctrl := wsDir(t)
	names := setIDTree(t, ctrl, 0)
	cmd := osexec.Command(filepath.Join(ctrl, "mmapwrite"), names...)
	cmd.Dir = ctrl
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, n := range names {
		require.Equal(t, "ok", mmapVerdicts(string(out))[n], "control, unconfined: %s", out)
	}
	fi, err := os.Stat(filepath.Join(ctrl, "tools/helper"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSetuid, "control: the bit survives a store through the mapping")

	for _, layer := range [][]string{nil, {"--no-namespaces"}} {
		ws := wsDir(t)
		setIDTree(t, ws, 0)
		// The program by its own name, and by the names a command would
		// try instead: a hard link of it, its directory renamed, a copy
		// of its directory's entry made by rename.
		script := "ln tools/helper hl; mv tools t2; mkdir -p d && mv tools/capbin d/capbin; ./mmapwrite " + strings.Join(names, " ") + " hl t2/helper d/capbin"
		args := append(append([]string{"run", "--workspace", ws, "--protect-agent-config", "--timeout", "1m"}, layer...), "--", "sh", "-c", script)
		_, got := runBinCtx(t, 60*time.Second, bin, args...)
		v := mmapVerdicts(got)
		assert.Regexp(t, `^open:(EACCES|EROFS)$`, v["tools/helper"], "%v: %s", layer, got)
		assert.Regexp(t, `^open:(EACCES|EROFS)$`, v["tools/capbin"], "%v: %s", layer, got)
		assert.Equal(t, "ok", v["tools/plain"], "%v: the sibling is written: %s", layer, got)
		assertProgramIntact(t, ws, strings.Join(append([]string{"--protect-agent-config"}, layer...), " "))
		// What the command could write by another name is no program:
		// every set-ID or file-capability program in the tree holds
		// what it held (mv falls back to a copy, which loses the bits).
		require.NoError(t, filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
			require.NoError(t, err)
			if is, err := setid.Path(p); err == nil && is {
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				assert.Equal(t, "ORIGINAL program\n", string(b), "%v: a program was written as %s: %s", layer, p, got)
			}
			return nil
		}))

		ws = wsDir(t)
		setIDTree(t, ws, 0)
		args = append(append([]string{"run", "--workspace", ws, "--timeout", "1m"}, layer...), "--", "./mmapwrite")
		_, got = runBinCtx(t, 60*time.Second, bin, append(args, names...)...)
		assert.Equal(t, "ok", mmapVerdicts(got)["tools/helper"], "%v, control: without --protect-agent-config: %s", layer, got)
	}
}

// TestSetIDProgramsReadOnlyUnprivileged: the same as uid 65534 (the
// user-namespace stage in the default layer), with a set-user-ID program
// of its own: run afterwards by another user, it would run the command's
// code as uid 65534. Refused under --protect-agent-config in both layers;
// control: written without it.
func TestSetIDProgramsReadOnlyUnprivileged(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature
	}
	if _, err := osexec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv")
	}
	t.Parallel()
	bin := landjailBin(t)
	for _, layer := range [][]string{nil, {"--no-namespaces"}} {
		for _, protect := range []bool{true, false} {
			ws, err := os.MkdirTemp("/var/tmp", "landjail-setid-ws-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(ws) })
			names := setIDTree(t, ws, 65534)
			args := []string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "run", "--workspace", ws, "--timeout", "1m"}
			if protect {
				args = append(args, "--protect-agent-config")
			}
			args = append(append(append(args, layer...), "--", "./mmapwrite"), names...)
			cmd := osexec.Command("setpriv", args...)
			cmd.Dir = ws
			cmd.Env = []string{"HOME=" + ws, "PATH=/usr/bin:/bin"}
			out, _ := cmd.CombinedOutput()
			v := mmapVerdicts(string(out))
			if !protect {
				assert.Equal(t, "ok", v["tools/helper"], "%v, control: without --protect-agent-config: %s", layer, out)
				continue
			}
			assert.Regexp(t, `^open:(EACCES|EROFS)$`, v["tools/helper"], "%v: %s", layer, out)
			assert.Equal(t, "ok", v["tools/plain"], "%v: the sibling is written: %s", layer, out)
			assertProgramIntact(t, ws, "uid 65534 "+strings.Join(layer, " "))
		}
	}
}
