package main

import (
	"bufio"
	"debug/elf"
	"encoding/json"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
)

// dockerfileExample is the container example of README's "Running in
// containers".
const dockerfileExample = "../../docs/container/Dockerfile"

// dockerfileArgv returns the exec-form (JSON) ENTRYPOINT and CMD of the
// final stage of the Dockerfile at name, and its WORKDIR.
func dockerfileArgv(t *testing.T, name string) (entrypoint, cmd []string, workdir string) {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM": // a new stage: only the last one's count
			entrypoint, cmd, workdir = nil, nil, ""
		case "ENTRYPOINT":
			require.NoError(t, json.Unmarshal([]byte(rest), &entrypoint), "ENTRYPOINT must be in exec form: %s", line)
		case "CMD":
			require.NoError(t, json.Unmarshal([]byte(rest), &cmd), "CMD must be in exec form: %s", line)
		case "WORKDIR":
			workdir = strings.TrimSpace(rest)
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, entrypoint, "no ENTRYPOINT in %s", name)
	return entrypoint, cmd, workdir
}

// TestContainerExample runs the exact ENTRYPOINT and CMD of
// docs/container/Dockerfile, with a static (CGO_ENABLED=0) landjail, under
// an outer seccomp filter that refuses namespaces and mounts as Docker's
// default profile does without CAP_SYS_ADMIN (internal/kerneltest/outer
// -spec ns=EPERM), in a directory standing for the WORKDIR: the command
// runs and writes its workspace, a write outside it is refused (control:
// the same write without landjail succeeds), and --report says the level
// README's table promises there: Landlock without the namespace layer,
// for the reason EPERM (path-check where this test binary's emulation
// takes Landlock away too).
func TestContainerExample(t *testing.T) {
	entrypoint, cmd, workdir := dockerfileArgv(t, dockerfileExample)
	require.Equal(t, "landjail", entrypoint[0])
	require.Equal(t, "run", entrypoint[1])
	require.Equal(t, "--", entrypoint[len(entrypoint)-1], "CMD (or docker run's arguments) is the confined command")
	require.NotEmpty(t, workdir)

	bin := buildCLI(t, ".", "CGO_ENABLED=0")
	ef, err := elf.Open(bin)
	require.NoError(t, err)
	for _, p := range ef.Progs {
		assert.NotEqual(t, elf.PT_INTERP, p.Type, "CGO_ENABLED=0 gives a static binary: no dynamic loader")
	}
	ef.Close()
	outer := buildCLI(t, "../../internal/kerneltest/outer")

	base := wsDir(t)
	ws, outside := filepath.Join(base, "work"), filepath.Join(base, "outside")
	require.NoError(t, os.Mkdir(ws, 0o755))
	require.NoError(t, os.Mkdir(outside, 0o755))
	// A container's environment: no terminal, HOME and TMPDIR its own.
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=" + base, "TMPDIR=" + base}
	docker := func(argv ...string) (int, string) {
		c := osexec.Command(outer, append([]string{"-spec", "ns=EPERM", "--", bin}, argv...)...)
		c.Dir, c.Env = ws, env
		out, err := c.CombinedOutput()
		var ee *osexec.ExitError
		if err != nil {
			require.ErrorAs(t, err, &ee, "%s", out)
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}

	// The example as written.
	code, out := docker(append(entrypoint[1:], cmd...)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "hello from the sandbox")
	assert.FileExists(t, filepath.Join(ws, "hello.txt"))

	// Confined: a write outside the workspace is refused.
	victim := filepath.Join(outside, "planted")
	code, out = docker(append(entrypoint[1:], "sh", "-c", "echo x > "+victim)...)
	assert.NotEqual(t, 0, code, out)
	assert.NoFileExists(t, victim)
	// Control: the same command without landjail writes it.
	require.NoError(t, osexec.Command("sh", "-c", "echo x > "+victim).Run())
	require.FileExists(t, victim)

	// The level, from the same command with --report.
	report := filepath.Join(base, "report.json")
	withReport := append([]string{entrypoint[1], "--report", report}, entrypoint[2:]...)
	code, out = docker(append(withReport, cmd...)...)
	require.Equal(t, 0, code, out)
	rep := readReport(t, report)
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock); blocked || kerneltestABI() == 0 {
		assert.Equal(t, landlock.LevelPathCheck, rep.Report.Level)
		assert.Equal(t, landlock.LayerPathCheck, rep.Report.Layer)
		return
	}
	assert.Equal(t, landlock.LevelLandlock, rep.Report.Level)
	assert.Equal(t, landlock.LayerLandlockOnly, rep.Report.Layer)
	assert.Contains(t, rep.Report.LayerReason, "operation not permitted")
	assert.NotEmpty(t, rep.Seccomp, "landjail's seccomp filter is in force under Docker's")
	assert.Contains(t, out, "namespace layer unavailable", "one line says what the run loses")
}
