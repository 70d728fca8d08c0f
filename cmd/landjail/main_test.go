package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	// buildCLI builds with the user's Go build cache, asked for before
	// XDG_CACHE_HOME moves (go derives GOCACHE from it): a fresh cache
	// meant compiling landjail and its dependencies from scratch in the
	// first test that built it, and again in every re-executed child
	// (kerneltest.RunInSubprocess), 20-40 s each. A child inherits both
	// variables from its parent, and with them the binaries built so far.
	if os.Getenv(envGoCache) == "" {
		out, err := osexec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			panic(fmt.Sprintf("go env GOCACHE: %v", err))
		}
		os.Setenv(envGoCache, strings.TrimSpace(string(out)))
	}
	if os.Getenv(envBinDir) == "" {
		dir, err := os.MkdirTemp("", testCachePrefix+"bin-")
		if err != nil {
			panic(err)
		}
		os.Setenv(envBinDir, dir)
	}
	if pkgDir = os.Getenv(envPkgDir); pkgDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			panic(err)
		}
		pkgDir = wd
		os.Setenv(envPkgDir, pkgDir)
	}
	cache, err := os.MkdirTemp("", testCachePrefix)
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	kerneltest.SerializeAudit() // audit is one per machine: see its doc
	kerneltest.Main(m)
}

// Variables TestMain sets for buildCLI, inherited by re-executed children
// (which may start in a directory a test chdir'd to): the user's Go build
// cache, the directory of the built binaries and this package's directory.
const (
	envGoCache = "LANDJAIL_TEST_GOCACHE"
	envBinDir  = "LANDJAIL_TEST_BINDIR"
	envPkgDir  = "LANDJAIL_TEST_PKGDIR"
)

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

// buildCLI builds the main package pkg ("." for landjail) with env added
// to go build's environment (e.g. CGO_ENABLED=0) and returns the path of
// the binary. It builds each (pkg, env) once per test binary, into the
// directory TestMain made (shared with re-executed children, which reuse
// what their parent built), so tests may share the binary but never
// modify it. Safe for concurrent use.
func buildCLI(tb testing.TB, pkg string, env ...string) string {
	tb.Helper()
	key := pkg + "\x00" + strings.Join(env, "\x00")
	builtMu.Lock()
	once, ok := built[key]
	if !ok {
		once = sync.OnceValues(func() (string, error) { return buildOnce(pkg, env) })
		built[key] = once
	}
	builtMu.Unlock()
	bin, err := once()
	require.NoError(tb, err)
	return bin
}

var (
	// pkgDir is the package's directory (go test starts the binary there).
	pkgDir  string
	builtMu sync.Mutex
	built   = map[string]func() (string, error){}
)

// buildOnce returns the binary of pkg and env in $LANDJAIL_TEST_BINDIR,
// building it unless a parent process has: the name is a hash of pkg and
// env, and the binary is renamed into place complete.
func buildOnce(pkg string, env []string) (string, error) {
	// pkg is relative to this package's directory, whatever a test
	// chdir'd to (go test starts the binary there).
	abs := filepath.Join(pkgDir, pkg)
	sum := sha256.Sum256([]byte(abs + "\x00" + strings.Join(env, "\x00")))
	bin := filepath.Join(os.Getenv(envBinDir), filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := fmt.Sprintf("%s.%d.tmp", bin, os.Getpid())
	cmd := osexec.Command("go", "build", "-o", tmp, abs)
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(), "GOCACHE="+os.Getenv(envGoCache))
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v: %s", pkg, err, out)
	}
	return bin, os.Rename(tmp, bin)
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
