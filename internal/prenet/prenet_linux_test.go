package prenet_test

import (
	"errors"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/listentest"
	"github.com/landjail/landjail/internal/prenet"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// inNamespace runs fn on a locked thread of its own (it dies afterwards)
// that joined the network namespace fd.
func inNamespace(fd int, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		done <- fn()
	}()
	return <-done
}

func ifaces() (string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return "", err
	}
	var names []string
	for _, i := range ifs {
		up := "down"
		if i.Flags&net.FlagUp != 0 {
			up = "up"
		}
		names = append(names, i.Name+":"+up)
	}
	slices.Sort(names)
	return strings.Join(names, ","), nil
}

func dial(addr string) string {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		if errors.Is(err, unix.ECONNREFUSED) {
			return "ECONNREFUSED"
		}
		return err.Error()
	}
	c.Close()
	return "ok"
}

// TestStartTake: the namespace Start makes is a new one (not the host's),
// holds only "lo", up, and isolates: the test's loopback listener is
// unreachable from it (control: reachable from the host's namespace).
// Take hands it out once. A TakeMount before (StartWithMount was not
// called) returns nothing at once and leaves Start working (red when it
// used up Start's once). With namespaces refused (LANDJAIL_EMULATE=
// ns=EPERM, as under Docker's default seccomp profile) Start makes
// nothing and Take returns -1; not root, it skips (fails with
// LANDJAIL_REQUIRE_KERNEL=1).
func TestStartTake(t *testing.T) {
	mnt, ipc := prenet.TakeMount()
	assert.Equal(t, [2]int{-1, -1}, [2]int{mnt, ipc}, "TakeMount without StartWithMount")
	prenet.Start()
	ino, made := prenet.Peek()
	if _, blocked := kerneltest.Blocked(kerneltest.FeatureNamespaces); blocked {
		assert.False(t, made, "a network namespace was made with namespaces refused")
		assert.Equal(t, -1, prenet.Take())
		return
	}
	if os.Geteuid() != 0 {
		assert.False(t, made, "a network namespace was made without CAP_SYS_ADMIN")
		kerneltest.Missing(t, "not root: no network namespace")
	}
	require.True(t, made, "Start made no namespace as root")
	var host unix.Stat_t
	require.NoError(t, unix.Stat("/proc/thread-self/ns/net", &host))
	assert.NotEqual(t, host.Ino, ino, "the namespace is the host's")

	fd := prenet.Take()
	require.GreaterOrEqual(t, fd, 0)
	defer unix.Close(fd)
	assert.Equal(t, -1, prenet.Take(), "the namespace was handed out twice")
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	assert.Equal(t, ino, st.Ino)

	ln := listentest.Listen(t, "tcp", "127.0.0.1:0")
	var got, reach string
	require.NoError(t, inNamespace(fd, func() (err error) {
		var in unix.Stat_t
		if err := unix.Stat("/proc/thread-self/ns/net", &in); err != nil {
			return err
		}
		if in.Ino != ino {
			return errors.New("setns did not move the thread")
		}
		if got, err = ifaces(); err != nil {
			return err
		}
		reach = dial(ln.Addr().String())
		return nil
	}))
	assert.Equal(t, "lo:up", got, "interfaces")
	assert.Equal(t, "ECONNREFUSED", reach, "the host's loopback listener")
	// Control: from the host's namespace the listener answers.
	assert.Equal(t, "ok", dial(ln.Addr().String()))
}
