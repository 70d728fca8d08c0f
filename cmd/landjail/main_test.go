package main

import (
	"bytes"
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
)

func TestMain(m *testing.M) {
	denials.Main() // first: an in-process --explain re-executes this binary as its audit watchdog
	// run's private HOME lives in the caller's cache directory: the
	// tests' (one per workspace) go to a directory of this test binary,
	// not into the real ~/.cache. kerneltest.Main exits without a hook,
	// so the directories of earlier runs (older than an hour: never one
	// of a run still going) are removed here.
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), testCachePrefix+"*"))
	for _, d := range old {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() && time.Since(fi.ModTime()) > time.Hour {
			os.RemoveAll(d)
		}
	}
	cache, err := os.MkdirTemp("", testCachePrefix)
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	kerneltest.Main(m)
}

// testCachePrefix names the test binaries' cache directories in TMPDIR.
const testCachePrefix = "landjail-test-cache-"

// runCLI runs the CLI in-process (never "run" without --timeout/--report,
// which would replace the test process) and returns its exit code and
// output.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out bytes.Buffer
	var errb lockedBuffer // landjail-netproxy's stderr is copied in from a goroutine
	code = runMain(context.Background(), append([]string{"landjail"}, underEmulation(args)...), strings.NewReader(""), &out, &errb)
	return code, out.String(), dropLayerLine(errb.String())
}

// runCLIRaw is runCLI without underEmulation and dropLayerLine: for the
// tests of --strict's refusals under an emulation that blocks namespaces,
// and of the layer line itself.
func runCLIRaw(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out bytes.Buffer
	var errb lockedBuffer
	code = runMain(context.Background(), append([]string{"landjail"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// layerLine starts the one line a run prints when the namespace layer is
// unavailable (sandbox: checkLayer).
const layerLine = "landjail: warning: namespace layer unavailable ("

// underEmulation adapts a run's arguments to an emulation that blocks
// namespaces (LANDJAIL_EMULATE=ns=...), as a user under Docker's default
// profile would: --strict then refuses unless --no-namespaces accepts the
// Landlock-only layer, so a --strict run gets --no-namespaces (what each
// test checks is its own strict refusal). TestRunNamespaceLayerUnavailable
// calls runMain itself to check the refusal and the line.
func underEmulation(args []string) []string {
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); !blocked || len(args) == 0 || args[0] != "run" {
		return args
	}
	strict, noNS := false, false
	for _, a := range args {
		if a == "--" {
			break
		}
		strict = strict || a == "--strict"
		noNS = noNS || a == "--no-namespaces"
	}
	if !strict || noNS {
		return args
	}
	return append([]string{"run", "--no-namespaces"}, args[1:]...)
}

// dropLayerLine removes the namespace-layer line from a run's output
// (every run under an emulation that blocks namespaces prints it; the
// tests of that line read the output themselves).
func dropLayerLine(s string) string {
	if !strings.Contains(s, layerLine) {
		return s
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !strings.HasPrefix(l, layerLine) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// lockedBuffer is a bytes.Buffer safe for concurrent Writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// buildCLI builds the main package pkg ("." for landjail) into a
// temporary directory and returns its path; env is added to go build's
// environment (e.g. CGO_ENABLED=0).
func buildCLI(tb testing.TB, pkg string, env ...string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "landjail")
	cmd := osexec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(tb, err, "go build %s: %s", pkg, out)
	return bin
}

// runBin runs the built binary with args and returns its exit code as a
// shell reports it (128+N when signal N killed it: without --timeout
// landjail has become the command) and its combined output.
func runBin(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := osexec.Command(bin, underEmulation(args)...)
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		var ee *osexec.ExitError
		require.ErrorAs(t, err, &ee, "running %s: %s", bin, out)
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), dropLayerLine(string(out))
		}
		return ee.ExitCode(), dropLayerLine(string(out))
	}
	return 0, dropLayerLine(string(out))
}

// readStatus returns the value of a "Name:" line of /proc/self/status.
func readStatus(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/self/status", name)
	return ""
}

// kerneltestABI is the Landlock ABI the tests run with.
func kerneltestABI() int { return landlock.ABI() }
