package early_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/stagestart/sysclone"
)

// envInitOrder makes the test binary exit at once (TestMain): it is
// re-executed with GODEBUG=inittrace=1 to list its initialization order.
const envInitOrder = "LANDJAIL_STAGESTART_EARLY_INITORDER"

// envReport makes the test binary report whether this package's
// initializer cloned a stage (sysclone.Take), end that stage and exit:
// TestInitStarts re-executes it with a command line of landjail's.
const envReport = "LANDJAIL_STAGESTART_EARLY_REPORT"

func TestMain(m *testing.M) {
	if len(os.Args) == 1 && os.Args[0] == sysclone.Argv0 {
		os.Exit(0) // a stage the initializer cloned (this binary again)
	}
	if os.Getenv(envInitOrder) != "" {
		os.Exit(0)
	}
	if os.Getenv(envReport) != "" {
		st := sysclone.Take()
		fmt.Print(st != nil)
		if st != nil {
			<-st.Done
			if st.Err == nil {
				syscall.Kill(st.Pid, syscall.SIGKILL)
				var ws syscall.WaitStatus
				syscall.Wait4(st.Pid, &ws, 0, nil)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInitStarts: as uid 65534, the initializer clones a stage for a
// run's command line (read from /proc/self/cmdline, os.Args not being
// set yet) and for nothing else: not for --help, not for a process
// marked as the stage (LANDJAIL_NSINIT, whatever its argv), not under
// the emulation (LANDJAIL_EMULATE); as root never. Control: the plain run
// row clones one. Shown able to fail: without the marker check in init
// the marked row cloned a stage (true).
func TestInitStarts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534") // not a kernel feature
	}
	if _, _, e := syscall.Syscall(444, 0, 0, 1); e != 0 {
		t.Skip("no Landlock: the initializer clones nothing") // the real kernel's, not the emulation's
	}
	dir, err := os.MkdirTemp("", "landjail-early-") // t.TempDir's parent is 0700
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "early.test")
	data, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "LANDJAIL_EMULATE=") {
			env = append(env, e)
		}
	}
	for _, tc := range []struct {
		name  string
		args  []string
		extra string
		root  bool
		want  string
	}{
		{"control: a run", []string{"run", "--", "true"}, "", false, "true"},
		{"help", []string{"run", "--help"}, "", false, "false"},
		{"marked as a stage", []string{"run", "--", "true"}, sysclone.EnvMarker + "=x", false, "false"},
		{"emulated", []string{"run", "--", "true"}, "LANDJAIL_EMULATE=ns=EPERM", false, "false"},
		{"root", []string{"run", "--", "true"}, "", true, "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := osexec.Command(bin, tc.args...)
			c.Dir = dir
			c.Env = append(append([]string(nil), env...), envReport+"=1")
			if tc.extra != "" {
				c.Env = append(c.Env, tc.extra)
			}
			if !tc.root {
				c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
			}
			out, err := c.Output()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tc.want, string(out))
		})
	}
}

// TestInitBeforeOS: this package's initializer, which clones the stage,
// runs before package os is initialized (and so before os/exec and the
// rest of a program that imports them), right after syscall's: its
// imports need nothing more (GODEBUG=inittrace=1 of this test binary,
// whose packages are ordered by the same rule as landjail's). Control:
// os is initialized in the same binary. Shown able to fail: with an
// import of os in this package its initializer came after os (red).
func TestInitBeforeOS(t *testing.T) {
	c := osexec.Command(os.Args[0])
	c.Env = append(os.Environ(), envInitOrder+"=1", "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^init (\S+) @`).FindAllStringSubmatch(string(out), -1) {
		order = append(order, m[1])
	}
	self := slices.Index(order, "github.com/landjail/landjail/internal/stagestart/early")
	osInit := slices.Index(order, "os")
	require.GreaterOrEqual(t, self, 0, "%s", out)
	require.GreaterOrEqual(t, osInit, 0, "control: os is initialized (%s)", out)
	assert.Less(t, self, osInit, "%q", order)
	assert.Less(t, slices.Index(order, "syscall"), self, "%q", order)
}
