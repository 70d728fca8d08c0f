package early

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/prenet"
	"github.com/landjail/landjail/internal/selfproc"
)

// envChild makes the test binary report what this package's initializer
// did (whether prenet holds a namespace) and exit: the child of
// TestInitializer, started with a landjail-like command line.
const envChild = "PRENET_EARLY_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "1":
		fmt.Print(childReport())
		os.Exit(0)
	case "facts":
		fmt.Print(selfproc.Stat() != nil)
		os.Exit(0)
	}
	kerneltest.Main(m)
}

// childReport says which namespaces prenet holds in the child: "made"
// when the network, mount and IPC namespaces all are there and none is
// the child's own, "none" when none is, else what it found.
func childReport() string {
	own := func(kind string) uint64 {
		var st syscall.Stat_t
		if syscall.Stat("/proc/self/ns/"+kind, &st) != nil {
			return 0
		}
		return st.Ino
	}
	ino := func(fd int) uint64 {
		var st syscall.Stat_t
		if fd < 0 || syscall.Fstat(fd, &st) != nil {
			return 0
		}
		return st.Ino
	}
	mnt, ipc := prenet.TakeMount()
	got := map[string]uint64{"net": ino(prenet.Take()), "mnt": ino(mnt), "ipc": ino(ipc)}
	made, none := 0, 0
	var odd []string
	for kind, i := range got {
		switch {
		case i == 0:
			none++
		case i == own(kind):
			odd = append(odd, kind+" is the child's own")
		default:
			made++
		}
	}
	switch {
	case len(odd) > 0:
		return strings.Join(odd, ", ")
	case made == len(got):
		return "made"
	case none == len(got):
		return "none"
	}
	return fmt.Sprintf("partial %v", got)
}

var wantedRows = []struct {
	args []string
	want bool
}{
	{[]string{"landjail", "run", "--workspace", "w", "--", "/bin/true"}, true},
	{[]string{"landjail", "run", "--", "ls", "--no-namespaces", "--net=host"}, true}, // the command's own flags
	{[]string{"landjail", "run", "-w", "w", "--no-pid-namespace", "true"}, true},
	{[]string{"landjail", "run", "--no-namespaces", "--", "true"}, false},
	{[]string{"landjail", "run", "--net=host", "--", "true"}, false},
	{[]string{"landjail", "run", "--net", "none", "--", "true"}, false}, // a guess: maybe open
	{[]string{"landjail", "run", "--connect-tcp=443", "--", "true"}, false},
	{[]string{"landjail", "run", "--bind-tcp", "8080", "--", "true"}, false},
	{[]string{"landjail", "run", "--config", "c.toml", "--", "true"}, false},
	{[]string{"landjail", "run", "--print-rules", "--", "true"}, false},
	{[]string{"landjail", "run", "-h"}, false},
	{[]string{"landjail", "run", "--help"}, false},
	{[]string{"landjail", "--version"}, false},
	{[]string{"landjail", "resolve", "run"}, false},
	{[]string{"landjail"}, false},
	{nil, false},
}

// TestWanted: the command-line glance, row by row (flags after "--" are
// the command's).
func TestWanted(t *testing.T) {
	for _, r := range wantedRows {
		assert.Equal(t, r.want, wanted(r.args), "%q", r.args)
	}
}

// TestInitializer: the package initializer itself, in a child started
// with each command line: as root, a "landjail run" that wants a private
// network gets its network, mount and IPC namespaces made before main
// (prenet holds them, none the child's own), every other command line
// none. Red with the initializer's prenet.Start
// removed (every row "none"). With namespaces refused
// (LANDJAIL_EMULATE=ns=EPERM, inherited by the child) nothing is made;
// not root, nothing either.
func TestInitializer(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	_, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
	root := os.Geteuid() == 0
	for _, r := range wantedRows {
		if len(r.args) == 0 {
			continue
		}
		cmd := osexec.Command(exe)
		cmd.Args = r.args // argv[0] "landjail": only the path runs the test binary
		cmd.Env = append(os.Environ(), envChild+"=1")
		out, err := cmd.Output()
		require.NoError(t, err, "%q", r.args)
		want := "none"
		if r.want && root && !blocked {
			want = "made"
		}
		assert.Equal(t, want, strings.TrimSpace(string(out)), "%q", r.args)
	}
	if !root {
		kerneltest.Missing(t, "not root: the initializer makes nothing")
	}
}

// TestInitializerFacts: as root, a "landjail run" that does not want the
// early namespaces (--no-namespaces, a host network, ...) gets the facts
// the control-group work reads first read by the initializer's goroutine
// (internal/selfproc); one that wants them, any other command line and a
// run marked as landjail's init stage (LANDJAIL_NSINIT) do not; not
// root, none. Red with the initializer's selfproc.Start removed (every
// row false); the marked row's control is the same run unmarked.
func TestInitializerFacts(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	root := os.Geteuid() == 0
	type row struct {
		args  []string
		stage bool
		want  bool
	}
	var rows []row
	for _, r := range wantedRows {
		if len(r.args) > 0 {
			rows = append(rows, row{r.args, false, root && !r.want && selfproc.IsRun(r.args)})
		}
	}
	noNS := []string{"landjail", "run", "--no-namespaces", "--", "true"}
	rows = append(rows, row{noNS, false, root}, row{noNS, true, false})
	for _, r := range rows {
		cmd := osexec.Command(exe)
		cmd.Args = r.args
		cmd.Env = append(os.Environ(), envChild+"=facts")
		if r.stage {
			cmd.Env = append(cmd.Env, envNsinit+"=x")
		}
		out, err := cmd.Output()
		require.NoError(t, err, "%q", r.args)
		assert.Equal(t, fmt.Sprint(r.want), string(out), "%q stage %v", r.args, r.stage)
	}
	if !root {
		kerneltest.Missing(t, "not root: the initializer starts nothing")
	}
}
