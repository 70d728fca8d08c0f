package exec_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

var inotifyAttackBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "landjail-exec-inotifyattack-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "inotifyattack")
	if out, err := osexec.Command("go", "build", "-o", bin, "./testdata/inotifyattack").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build inotifyattack: %v\n%s", err, out)
	}
	return bin, nil
})

// withInotifyAttack copies testdata/inotifyattack into the fixture's
// read-exec root.
func (f *fixture) withInotifyAttack(t *testing.T) string {
	t.Helper()
	src, err := inotifyAttackBin()
	require.NoError(t, err)
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	bin := filepath.Join(f.rox, "inotifyattack")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin
}

// inotifyFixture is a fixture with a 0700 directory outside the policy
// (keys, the host's ~/.ssh), a symbolic link to it in the workspace and
// the attacker program, compiled with the seccomp filter.
type inotifyFixture struct {
	*fixture
	rs     *landlock.Ruleset
	filter *seccomp.Filter
	bin    string
	keys   string
}

func newInotifyFixture(t *testing.T) *inotifyFixture {
	kerneltest.RequireLandlockABI(t, 1)
	f := &inotifyFixture{fixture: newFixture(t)}
	f.bin = f.withInotifyAttack(t)
	f.keys = filepath.Join(f.outside, "keys")
	require.NoError(t, os.Mkdir(f.keys, 0o700))
	require.NoError(t, os.Symlink(f.keys, filepath.Join(f.root, "keys-link")))
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "file"), nil, 0o644))
	f.rs = f.compile(t, landlock.Options{})
	var err error
	f.filter, err = seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI()})
	require.NoError(t, err)
	require.True(t, f.filter.Brokered(), "Landlock ABI >= 1: the inotify rule goes to the broker")
	return f
}

// spawnModes are the ways exec spawns a child; each installs the filter
// on another kind of thread.
var spawnModes = []struct {
	name         string
	fresh, noPID bool
}{
	{"pooled", false, true},
	{"fresh thread", true, true},
	{"pid namespace", false, false},
}

// watchRun starts c (its stdout not set), creates dir/name once it
// prints "watching", and returns everything it printed.
func watchRun(t *testing.T, start func(stdout *os.File) error, wait func(), dir, name string) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	err = start(w)
	w.Close()
	require.NoError(t, err)
	defer wait()
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == "watching" {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("k"), 0o600))
		}
	}
	return strings.Join(lines, "\n")
}

func (f *inotifyFixture) confined(t *testing.T, fresh, noPID bool, dir, name string, args ...string) string {
	c := exec.CommandContext(context.Background(), f.ws, f.rs, f.bin, args...)
	c.Seccomp = f.filter
	c.FreshThread = fresh
	c.NoPIDNamespace = noPID
	return watchRun(t, func(w *os.File) error { c.Stdout = w; return c.Start() }, func() { c.Wait() }, dir, name)
}

func (f *inotifyFixture) unconfined(t *testing.T, dir, name string, args ...string) string {
	c := osexec.Command(f.bin, args...)
	c.Dir = f.root
	return watchRun(t, func(w *os.File) error { c.Stdout = w; return c.Start() }, func() { c.Wait() }, dir, name)
}

// TestInotifyBroker: inotify_add_watch under the filter lands only where
// the child may read. Each refusal has its unconfined control: the same
// call outside the sandbox gets the host's create event by name (so
// Landlock alone would leak it: it does not mediate inotify marks).
func TestInotifyBroker(t *testing.T) {
	f := newInotifyFixture(t)
	const leak = "watching\nevent k"
	refused := "inotify_add_watch: permission denied"
	for _, tc := range []struct {
		name, path, dir string
		opts            []string
		want, control   string
	}{
		{"denied directory", f.keys, f.keys, nil, refused, leak},
		{"symlink in the workspace to it", filepath.Join(f.root, "keys-link"), f.keys, nil, refused, leak},
		{"relative path climbing to it", "../outside/keys", f.keys, nil, refused, leak},
		{"O_PATH descriptor through /proc/self/fd", f.keys, f.keys, []string{"opath"}, "", leak},
		{"workspace", f.root, f.root, nil, leak, leak},
		{"workspace relative", ".", f.root, nil, leak, leak},
		{"IN_ONLYDIR on a file", filepath.Join(f.root, "file"), f.root, []string{"onlydir"},
			"inotify_add_watch: not a directory", "inotify_add_watch: not a directory"},
		{"missing", filepath.Join(f.root, "nothing"), f.root, nil,
			"inotify_add_watch: no such file or directory", "inotify_add_watch: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"watch", tc.path, "k"}, tc.opts...)
			os.Remove(filepath.Join(tc.dir, "k"))
			assert.Equal(t, tc.control, f.unconfined(t, tc.dir, "k", args...), "unconfined control")
			for _, m := range spawnModes {
				os.Remove(filepath.Join(tc.dir, "k"))
				got := f.confined(t, m.fresh, m.noPID, tc.dir, "k", args...)
				if tc.want == "" {
					// Refused one way or another: RESOLVE_IN_ROOT
					// refuses magic links, the openat fallback
					// finds no such descriptor or a denied one.
					assert.Regexp(t, `^inotify_add_watch: `, got, m.name)
					continue
				}
				assert.Equal(t, tc.want, got, m.name)
			}
		})
	}
}

// TestInotifyBrokerMeetsModeBits: the broker opens with no capability,
// as the child it answers for (red team R5): root's children hold none
// (an empty bounding set), so another user's 0700 directory in the
// workspace is refused to them, and a watch there through the broker
// must be refused too. The unconfined control (root with
// CAP_DAC_READ_SEARCH) gets the event by name.
func TestInotifyBrokerMeetsModeBits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: another user's directory, and capabilities to drop")
	}
	f := newInotifyFixture(t)
	theirs := filepath.Join(f.root, "theirs")
	require.NoError(t, os.Mkdir(theirs, 0o700))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	args := []string{"watch", theirs, "k"}
	os.Remove(filepath.Join(theirs, "k"))
	assert.Equal(t, "watching\nevent k", f.unconfined(t, theirs, "k", args...), "unconfined control")
	for _, m := range spawnModes {
		os.Remove(filepath.Join(theirs, "k"))
		assert.Equal(t, "inotify_add_watch: permission denied", f.confined(t, m.fresh, m.noPID, theirs, "k", args...), m.name)
	}
}

var watchInfo = regexp.MustCompile(`inotify wd:\S+ ino:(\S+) sdev:(\S+)`)

// TestInotifyRace: an attacker swaps the path buffer (another thread
// rewrites it byte by byte) or a symbolic link between the denied
// directory and the workspace while calling inotify_add_watch in a loop.
// No watch may ever land on the denied directory's inode (the inotify
// descriptor's fdinfo lists every watch). The unconfined control shows
// the attack lands watches there when nothing checks, and every confined
// run must land some on the workspace (the race really alternated).
func TestInotifyRace(t *testing.T) {
	f := newInotifyFixture(t)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(f.keys, &st))
	denied := fmt.Sprintf("ino:%x", st.Ino)
	link := filepath.Join(f.root, "race-link")
	const n = "3000"
	for _, args := range [][]string{
		{"race-buffer", f.keys, f.root, n},
		{"race-link", f.keys, f.root, link, n},
	} {
		t.Run(args[0], func(t *testing.T) {
			inos := raceRun(t, f.unconfinedCmd(args...))
			assert.Contains(t, inos, denied, "unconfined control: the attack lands watches on the denied directory")
			for _, m := range spawnModes {
				c := exec.CommandContext(context.Background(), f.ws, f.rs, f.bin, args...)
				c.Seccomp, c.FreshThread, c.NoPIDNamespace = f.filter, m.fresh, m.noPID
				inos := raceRun(t, c)
				assert.NotContains(t, inos, denied, m.name)
				assert.NotEmpty(t, inos, "%s: no watch landed at all", m.name)
			}
		})
	}
}

func (f *inotifyFixture) unconfinedCmd(args ...string) *osexec.Cmd {
	c := osexec.Command(f.bin, args...)
	c.Dir = f.root
	return c
}

// raceStarter is what raceRun needs of an exec.Cmd or an os/exec Cmd.
type raceStarter interface {
	Start() error
	Wait() error
}

// raceRun runs a race mode and returns the "ino:HEX" of every watch its
// inotify descriptor held at the end.
func raceRun(t *testing.T, c raceStarter) []string {
	t.Helper()
	out, w, err := os.Pipe()
	require.NoError(t, err)
	defer out.Close()
	in, inW, err := os.Pipe()
	require.NoError(t, err)
	var pid func() int
	switch c := c.(type) {
	case *exec.Cmd:
		c.Stdout, c.Stdin = w, in
		pid = func() int { return c.Process.Pid }
	case *osexec.Cmd:
		c.Stdout, c.Stdin = w, in
		pid = func() int { return c.Process.Pid }
	}
	err = c.Start()
	w.Close()
	in.Close()
	require.NoError(t, err)
	defer c.Wait()
	defer inW.Close()
	sc := bufio.NewScanner(out)
	var fd string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "fd "); ok {
				fd = v
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the race did not finish in 60 s")
	}
	require.NotEmpty(t, fd, "no fd line")
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid(), fd))
	require.NoError(t, err)
	var inos []string
	for _, m := range watchInfo.FindAllStringSubmatch(string(b), -1) {
		inos = append(inos, "ino:"+m[1])
	}
	return inos
}

// TestInotifyBrokerNamespaceView: in the namespace layer a denied file
// (.env, WithDenySecrets) is masked, not refused by Landlock (the
// Ruleset grants the workspace whole and is correct only inside the
// view). A watch on it, directly, relative or through an absolute
// symbolic link, must land on the mask, never on the host's .env: the
// broker resolves in the children's mount namespace (it joins the
// spawner thread's), with openat2 and without (openat2=ENOSYS takes the
// openat fallback, where an absolute link resolves from the broker's own
// root). Control: unconfined, the same calls watch the host's inode.
func TestInotifyBrokerNamespaceView(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newNSFixture(t)
	bin := f.withInotifyAttack(t)
	env := filepath.Join(f.root, ".env")
	require.NoError(t, os.Symlink(env, filepath.Join(f.root, "envlink")))
	var st unix.Stat_t
	require.NoError(t, unix.Stat(env, &st))
	hostIno := fmt.Sprintf("ino:%x", st.Ino)
	rs := f.compile(t, landlock.Options{Namespaces: true})
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI()})
	require.NoError(t, err)
	// The workspace itself: some watch must land (the broker works).
	args := []string{"add", env, ".env", filepath.Join(f.root, "envlink"), f.root}

	control := osexec.Command(bin, args...)
	control.Dir = f.root
	assert.Contains(t, raceRun(t, control), hostIno, "unconfined control")
	for _, m := range spawnModes {
		c := exec.CommandContext(context.Background(), f.ws, rs, bin, args...)
		c.Seccomp, c.FreshThread, c.NoPIDNamespace = filter, m.fresh, m.noPID
		inos := raceRun(t, c)
		assert.NotContains(t, inos, hostIno, m.name)
		assert.NotEmpty(t, inos, "%s: the workspace is watched", m.name)
	}
}

// TestInotifyBrokerCarvedDirectory (red team round 15, R15b-1): under
// Landlock alone a denied directory is carved out with its listing kept,
// so the broker's open of it succeeded and a watch there told when the
// host opened the key inside. The broker now refuses what the carve
// denies; controls: the same call unconfined gets the event, and the
// workspace stays watchable. Red before: the confined watch got the
// event.
func TestInotifyBrokerCarvedDirectory(t *testing.T) {
	f := newInotifyFixture(t)
	secrets := filepath.Join(f.root, "secrets")
	require.NoError(t, os.Mkdir(secrets, 0o700))
	ws, err := jail.New(f.root, jail.WithAllowed(f.ro, jail.ReadOnly), jail.WithAllowed(f.rox, jail.ReadExec), jail.WithDeny("secrets/"))
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	f.ws = ws
	f.rs = f.compile(t, landlock.Options{})
	if _, view := f.rs.View(); view {
		t.Fatal("the fixture compiles Landlock alone")
	}
	const leak = "watching\nevent k"
	os.Remove(filepath.Join(secrets, "k"))
	assert.Equal(t, leak, f.unconfined(t, secrets, "k", "watch", secrets, "k"), "unconfined control")
	for _, m := range spawnModes {
		if !m.noPID {
			continue // a PID namespace needs the view; this is Landlock alone
		}
		os.Remove(filepath.Join(secrets, "k"))
		assert.Equal(t, "inotify_add_watch: permission denied", f.confined(t, m.fresh, m.noPID, secrets, "k", "watch", secrets, "k"), m.name)
		os.Remove(filepath.Join(f.root, "k"))
		assert.Equal(t, leak, f.confined(t, m.fresh, m.noPID, f.root, "k", "watch", f.root, "k"), "control, workspace: %s", m.name)
	}
}
