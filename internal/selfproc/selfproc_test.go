package selfproc

import (
	"bytes"
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

	"github.com/landjail/landjail/internal/presetpaths"
)

// envChild makes the test binary run childStarted and exit: Start is
// once per process, so the started case runs in a child.
const envChild = "SELFPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		if err := childStarted(); err != nil {
			fmt.Print(err)
			os.Exit(1)
		}
		fmt.Print("ok")
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childStarted starts the goroutine and checks what it read against
// direct reads, and that it runs the one function Go hands it.
func childStarted() error {
	Start()
	Start() // once
	direct, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	// pid, comm and starttime (field 22) never change; counters do.
	if got, want := fixed(Stat()), fixed(direct); got != want || got == "" {
		return fmt.Errorf("stat: %q, read directly %q", got, want)
	}
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/pid", &st); err != nil {
		return err
	}
	if PIDNamespace() != st.Ino {
		return fmt.Errorf("pid namespace %d, stat %d", PIDNamespace(), st.Ino)
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	if !bytes.Equal(MountInfo(), mi) {
		return fmt.Errorf("mountinfo differs from a direct read:\n%s\n%s", MountInfo(), mi)
	}
	ran := make(chan bool, 1)
	if !Go(func() { ran <- true }) {
		return fmt.Errorf("Go after Start: false")
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the function handed to Go did not run")
	}
	if Go(func() {}) {
		return fmt.Errorf("Go a second time: true (the goroutine runs one function)")
	}
	return checkPaths()
}

// checkPaths checks TakePath and ReleasePaths in a started process.
func checkPaths() error {
	fd, isDir, err, ok := TakePath("/usr")
	if !ok || err != nil || !isDir {
		return fmt.Errorf("TakePath(/usr): %d %v %v %v", fd, isDir, err, ok)
	}
	var a, b syscall.Stat_t
	if err := syscall.Fstat(fd, &a); err != nil {
		return err
	}
	if err := syscall.Stat("/usr", &b); err != nil {
		return err
	}
	if a.Ino != b.Ino || a.Dev != b.Dev {
		return fmt.Errorf("TakePath(/usr) is another inode")
	}
	syscall.Close(fd)
	if _, _, _, ok := TakePath("/usr"); ok {
		return fmt.Errorf("TakePath(/usr) twice: ok")
	}
	if _, _, _, ok := TakePath("/not/in/the/preset"); ok {
		return fmt.Errorf("TakePath of a path outside the preset: ok")
	}
	for _, p := range presetpaths.All() {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == syscall.ENOENT {
			if _, _, err, ok := TakePath(p); !ok || err != syscall.ENOENT {
				return fmt.Errorf("TakePath(%s), missing: %v %v", p, err, ok)
			}
			break
		}
	}
	// What is left is closed by ReleasePaths: as many descriptors fewer
	// as the preset's paths that exist and were not taken.
	left := 0
	pathsMu.Lock()
	for _, f := range paths {
		if f.fd >= 0 {
			left++
		}
	}
	pathsMu.Unlock()
	before, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	ReleasePaths()
	after, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	if left == 0 || len(before)-len(after) != left {
		return fmt.Errorf("ReleasePaths closed %d descriptors, %d were left", len(before)-len(after), left)
	}
	if _, _, _, ok := TakePath("/dev/null"); ok {
		return fmt.Errorf("TakePath after ReleasePaths: ok")
	}
	return nil
}

// fixed returns the pid, comm (which may hold spaces) and starttime
// (field 22) of a /proc/PID/stat line, or "".
func fixed(b []byte) string {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return s[:i+1] + " " + f[19]
}

// TestStarted: after Start, the facts are what direct reads of /proc
// give and Go runs one function on the goroutine (a child process).
func TestStarted(t *testing.T) {
	c := osexec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), envChild+"=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "ok", string(out))
}

// TestNotStarted: without Start (this process) nothing is read and Go
// refuses, so callers read /proc and start their own goroutine.
func TestNotStarted(t *testing.T) {
	assert.Nil(t, Stat())
	assert.Zero(t, PIDNamespace())
	assert.Nil(t, MountInfo())
	assert.False(t, Go(func() { t.Error("ran without Start") }))
	_, _, _, ok := TakePath("/usr")
	assert.False(t, ok)
	ReleasePaths() // nothing to do
}

// TestIsRun: a run is seen whatever its flags, up to "--"; help and
// --print-rules (any number of dashes, with a value after "=") and other
// subcommands are not; a "--help" after "--" is the command's.
func TestIsRun(t *testing.T) {
	for args, want := range map[string]bool{
		"landjail run -- true":                         true,
		"landjail run --no-namespaces --net host -- x": true,
		"landjail run -- true --help":                  true,
		"landjail run --help":                          false,
		"landjail run -h":                              false,
		"landjail run --print-rules -- true":           false,
		"landjail run -print-rules=true -- true":       false,
		"landjail gc":                                  false,
		"landjail":                                     false,
	} {
		assert.Equal(t, want, IsRun(strings.Fields(args)), args)
	}
}

// TestReadFileGrows: a file larger than the first buffer is read whole.
func TestReadFileGrows(t *testing.T) {
	p := t.TempDir() + "/f"
	want := []byte(strings.Repeat("0123456789", 1000) + strconv.Itoa(7))
	require.NoError(t, os.WriteFile(p, want, 0o600))
	assert.Equal(t, want, readFile(p, 16))
	assert.Nil(t, readFile(t.TempDir()+"/missing", 16))
}

// TestStartMakesTemplateThread: Start's goroutine makes the runtime's
// template thread (the clone the first LockOSThread makes), so that the
// thread that locks itself later (package exec's, about to execve) does
// not: after Start, LockOSThread adds no thread; the control, without
// Start, adds one (testdata/templateprobe, a program of its own). Red
// with Start's LockOSThread removed.
func TestStartMakesTemplateThread(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "templateprobe")
	out, err := osexec.Command("go", "build", "-o", bin, "./testdata/templateprobe").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for args, want := range map[string]string{"start": "0", "": "1"} {
		out, err := osexec.Command(bin, args).CombinedOutput()
		require.NoError(t, err, "%q: %s", args, out)
		assert.Equal(t, want, string(out), "%q", args)
	}
}
