package landlock

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/proctest"
	"github.com/landjail/landjail/internal/wstest"
	"github.com/landjail/landjail/jail"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// fixture is the wstest tree (a workspace with a file inside, a
// read-only root, a secret outside every root, a temporary directory) and
// a Workspace on it with ro allowed read-only.
type fixture struct {
	ws                      *jail.Workspace
	root, ro, outside, tmpd string
}

func newFixture(t *testing.T, opts ...jail.Option) *fixture {
	t.Helper()
	d := wstest.New(t)
	f := &fixture{root: d.Root, ro: d.RO, outside: d.Outside, tmpd: d.Tmp}
	ws, err := jail.New(f.root, append([]jail.Option{jail.WithAllowed(f.ro, jail.ReadOnly)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { ws.Close() })
	f.ws = ws
	return f
}

func TestCompileReport(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	rs, err := Compile(f.ws, Options{System: true, TmpDir: f.tmpd, ConnectTCP: []uint16{443}})
	require.NoError(t, err)
	defer rs.Close()

	rep := rs.Report()
	assert.Equal(t, LevelLandlock, rep.Level)
	assert.Equal(t, ABI(), rep.ABI)
	assert.True(t, rs.Enforced())
	var sources = map[string]bool{}
	for _, r := range rs.Rules() {
		sources[r.Source] = true
		assert.NotEqual(t, "/etc", r.Path, "never /etc whole")
		assert.NotContains(t, []string{"/root", "/home", "/proc", "/etc/shadow"}, r.Path)
	}
	assert.True(t, sources["workspace"] && sources["ro"] && sources["system"] && sources["tmp"], "%v", sources)
	assert.Equal(t, f.tmpd, rs.TmpDir())

	// The ruleset fd is close-on-exec.
	flags, err := unix.FcntlInt(uintptr(rs.fd), unix.F_GETFD, 0)
	require.NoError(t, err)
	assert.NotZero(t, flags&unix.FD_CLOEXEC)

	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, LevelLandlock, back["level"])
	assert.Contains(t, string(b), `"source":"workspace"`)
	assert.Contains(t, string(b), `"read_file"`)
	assert.Contains(t, rep.String(), "rule: workspace "+f.root)
	var decoded Report
	require.NoError(t, json.Unmarshal(b, &decoded))
	assert.Equal(t, rep.Rules, decoded.Rules, "rules round-trip through JSON")
	assert.Error(t, json.Unmarshal([]byte(`{"path":"/x","access":["fly"]}`), &Rule{}))

	assert.True(t, rs.Allows(filepath.Join(f.root, "x/y"), RightsAll))
	assert.True(t, rs.Allows("/usr/bin/sh", RightsReadExec))
	assert.False(t, rs.Allows(filepath.Join(f.ro, "x"), RightsAll))
	assert.False(t, rs.Allows(f.outside+"/secret", RightsRead))
	assert.False(t, rs.Allows(f.root+"-evil/x", RightsRead), "whole components only")

	require.NoError(t, rs.Close())
	require.NoError(t, rs.Close(), "idempotent")
	assert.ErrorIs(t, rs.RestrictSelf(), ErrClosed)
	assert.ErrorIs(t, rs.RestrictSelf(), fs.ErrClosed, "ErrClosed wraps fs.ErrClosed")
}

func TestCompileStrictOnThisKernel(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 6)
	f := newFixture(t)
	rs, err := Compile(f.ws, Options{Strict: true})
	require.NoError(t, err, "ABI >= 6 has every required feature")
	rs.Close()

	_, err = Compile(f.ws, Options{Strict: true, MaxABI: 3})
	var ae *ABIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 3, ae.Have)

	rs, err = Compile(f.ws, Options{MaxABI: 3})
	require.NoError(t, err, "best effort drops instead")
	defer rs.Close()
	assert.Contains(t, names(rs.Report().Dropped), "scope.signal")
}

// TestRestrictSelfConfinesOnlyThisThread applies the ruleset on one locked
// thread and checks that this thread is confined while every other thread
// of the process is not.
func TestRestrictSelfConfinesOnlyThisThread(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	f := newFixture(t)
	rs, err := Compile(f.ws, Options{})
	require.NoError(t, err)
	defer rs.Close()
	secret := filepath.Join(f.outside, "secret")

	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		if err := rs.RestrictSelf(); err != nil {
			done <- err
			return
		}
		_, err := os.ReadFile(secret)
		if !errors.Is(err, unix.EACCES) {
			done <- errors.New("confined thread could read outside: " + errString(err))
			return
		}
		if _, err := os.ReadFile(filepath.Join(f.root, "in.txt")); err != nil {
			done <- err
			return
		}
		if err := os.WriteFile(filepath.Join(f.ro, "w"), nil, 0o644); !errors.Is(err, unix.EACCES) {
			done <- errors.New("confined thread could write into the ro root: " + errString(err))
			return
		}
		done <- nil
	}()
	require.NoError(t, <-done)

	proctest.AssertUnconfined(t, secret)
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// TestCompileWithoutLandlock runs with the Landlock syscalls refused by a
// seccomp filter, as a container profile does.
func TestCompileWithoutLandlock(t *testing.T) {
	for _, errno := range []string{"ENOSYS", "EPERM"} {
		t.Run(errno, func(t *testing.T) {
			if !kerneltest.RunInSubprocess(t, kerneltest.EnvEmulate+"=landlock="+errno) {
				return
			}
			assert.Equal(t, 0, ABI())
			f := newFixture(t)
			rs, err := Compile(f.ws, Options{System: true})
			require.NoError(t, err)
			defer rs.Close()
			assert.Equal(t, LevelPathCheck, rs.Report().Level)
			assert.False(t, rs.Enforced())
			assert.ErrorIs(t, rs.RestrictSelf(), ErrUnavailable)
			assert.True(t, rs.Allows("/usr/bin/sh", RightsReadExec), "rules keep their requested rights for the path check")

			_, err = Compile(f.ws, Options{Strict: true})
			var ae *ABIError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, 0, ae.Have)
		})
	}
}
