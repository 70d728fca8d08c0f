package seccomp

import (
	"context"
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// unixServer listens on a stream UNIX socket at path and answers every
// connection with tag; it returns the socket's identity.
func unixServer(t testing.TB, path, tag string) UnixSocket {
	t.Helper()
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	serveTag(t, l, tag)
	var st unix.Stat_t
	require.NoError(t, unix.Stat(path, &st))
	return UnixSocket{Path: path, Dev: st.Dev, Ino: st.Ino}
}

// serveTag answers every connection to l with tag until the test ends.
func serveTag(t testing.TB, l net.Listener, tag string) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(tag))
			c.Close()
		}
	}()
}

// dialTag connects a fresh stream UNIX socket to path with connect(2)
// and returns what the server says, or connect's errno.
func dialTag(path string) (string, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return "", err
	}
	buf := make([]byte, 16)
	n, _ := unix.Read(fd, buf)
	return string(buf[:max(n, 0)]), nil
}

// TestUnixConnectLive: with AllowUnix and a broker, a stream UNIX socket
// connects to the named socket (by its path, a symbolic link to it or a
// relative name) and to nothing else: another socket gets EACCES, an
// abstract address EPERM, a missing path ENOENT, a thread with another
// fsuid than the supervisor's EACCES; datagram UNIX sockets
// and datagram pairs are refused; a TCP connect is passed on (the broker
// connects it). Installed without a broker (Install: execve in place,
// the user-namespace stage) no UNIX socket can be made. Control: on an
// unfiltered thread every one of those connects and socket calls works.
func TestUnixConnectLive(t *testing.T) {
	requireSeccomp(t)
	dir := t.TempDir()
	a := unixServer(t, filepath.Join(dir, "a.sock"), "A")
	unixServer(t, filepath.Join(dir, "b.sock"), "B")
	require.NoError(t, os.Symlink("b.sock", filepath.Join(dir, "to-b")))
	require.NoError(t, os.Symlink("a.sock", filepath.Join(dir, "to-a")))
	abstract, err := net.Listen("unix", "@landjail-test-"+filepath.Base(dir))
	require.NoError(t, err)
	serveTag(t, abstract, "@")
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveTag(t, tcp, "T")
	tcpAddr := tcp.Addr().(*net.TCPAddr)

	attempts := func() map[string]error {
		res := map[string]error{}
		for _, p := range []string{a.Path, filepath.Join(dir, "to-a"), filepath.Join(dir, "b.sock"), filepath.Join(dir, "to-b"), filepath.Join(dir, "missing"), "@" + abstract.Addr().String()[1:]} {
			name := p
			if p[0] == '@' {
				p, name = "\x00"+p[1:], "abstract"
			}
			tag, err := dialTag(p)
			if err == nil && tag != "A" && tag != "B" && name != "abstract" {
				err = unix.EIO
			}
			res[name] = err
		}
		_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		res["socket-dgram"] = err
		_, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		res["socketpair-dgram"] = err
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: tcpAddr.Port, Addr: [4]byte{127, 0, 0, 1}})
			unix.Close(fd)
		}
		res["tcp"] = err
		return res
	}
	for name, err := range attempts() {
		if name == filepath.Join(dir, "missing") {
			assert.ErrorIs(t, err, unix.ENOENT, "control")
			continue
		}
		assert.NoError(t, err, "control: unfiltered %s", name)
	}

	f, err := Build(Options{LandlockABI: 7, NetRestricted: true, AllowUnix: []UnixSocket{a}})
	require.NoError(t, err)
	assert.True(t, f.Supervised() && f.Brokered())
	onBrokeredThread(t, f, newThreadBroker(), func() {
		res := attempts()
		assert.NoError(t, res[a.Path], "the named socket")
		assert.NoError(t, res[filepath.Join(dir, "to-a")], "a symbolic link to the named socket")
		assert.ErrorIs(t, res[filepath.Join(dir, "b.sock")], unix.EACCES, "a socket not named")
		assert.ErrorIs(t, res[filepath.Join(dir, "to-b")], unix.EACCES, "a symbolic link to a socket not named")
		assert.ErrorIs(t, res[filepath.Join(dir, "missing")], unix.ENOENT)
		assert.ErrorIs(t, res["abstract"], unix.EPERM)
		assert.ErrorIs(t, res["socket-dgram"], unix.EPERM)
		assert.ErrorIs(t, res["socketpair-dgram"], unix.EPERM)
		assert.NoError(t, res["tcp"], "TCP is connected by the broker")
		// A relative name, from the thread's working directory.
		wd, err := os.Getwd()
		require.NoError(t, err)
		rel, err := filepath.Rel(wd, a.Path)
		require.NoError(t, err)
		tag, err := dialTag(rel)
		assert.NoError(t, err, "relative %s", rel)
		assert.Equal(t, "A", tag)
		if unix.Geteuid() == 0 {
			// This thread only (a raw setfsuid; the thread dies
			// after): a child whose credentials are not landjail's
			// is refused, since the daemon would see landjail's.
			unix.RawSyscall(unix.SYS_SETFSUID, 65534, 0, 0)
			_, err = dialTag(a.Path)
			assert.ErrorIs(t, err, unix.EACCES, "another fsuid than the supervisor's")
		}
	})
	onFilteredThread(t, f, func() {
		_, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		assert.ErrorIs(t, err, unix.EPERM, "Install without a broker: UNIX sockets refused")
	})
}

// TestUnixConnectSendAddress: the stream and seqpacket sockets the
// filter lets the child make cannot send to an address of their
// choosing, so connect is their only way to a socket: sendto with an
// address fails on a stream socket (EOPNOTSUPP unconnected) and is
// ignored by a connected seqpacket socket. Measured here on the running
// kernel, with no filter (the property the unix-connect rule relies on).
func TestUnixConnectSendAddress(t *testing.T) {
	dir := t.TempDir()
	dgram := filepath.Join(dir, "d.sock")
	d, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: dgram, Net: "unixgram"})
	require.NoError(t, err)
	defer d.Close()
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(s)
	err = unix.Sendto(s, []byte("x"), 0, &unix.SockaddrUnix{Name: dgram})
	assert.ErrorIs(t, err, unix.EOPNOTSUPP, "stream socket: no send address")
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	require.NoError(t, err)
	defer unix.Close(pair[0])
	defer unix.Close(pair[1])
	require.NoError(t, unix.Sendto(pair[0], []byte("x"), 0, &unix.SockaddrUnix{Name: dgram}))
	buf := make([]byte, 4)
	n, err := unix.Read(pair[1], buf)
	require.NoError(t, err)
	assert.Equal(t, "x", string(buf[:n]), "seqpacket: the address is ignored, the peer gets it")
	// Control: a datagram socket sends to the address.
	x, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
	require.NoError(t, err)
	defer unix.Close(x)
	require.NoError(t, unix.Sendto(x, []byte("y"), 0, &unix.SockaddrUnix{Name: dgram}))
	n, _, err = d.ReadFromUnix(buf)
	require.NoError(t, err)
	assert.Equal(t, "y", string(buf[:n]))
}

// TestUnixConnectRace: attackers swap what the name means while the
// filtered thread connects in a loop: a buffer whose path flips between
// the named socket and another (changed between the copy and the
// kernel's connect, it would redirect a CONTINUE), a symbolic link
// retargeted between the two, and the other socket renamed over the
// named path and back. The broker must never connect to the other
// socket (every successful connect is answered "A"). Control: the same
// loop unfiltered reaches "B" through each.
func TestUnixConnectRace(t *testing.T) {
	requireSeccomp(t)
	if testing.Short() {
		t.Skip("race loop (-short)")
	}
	dir := t.TempDir()
	a := unixServer(t, filepath.Join(dir, "a.sock"), "A")
	unixServer(t, filepath.Join(dir, "b.sock"), "B")
	named := filepath.Join(dir, "named") // a hard link of a.sock, swapped with b.sock's
	require.NoError(t, os.Link(a.Path, named))
	a.Path = named
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink("a.sock", link))
	// The flipping buffer: one sockaddr_un, its path switched in place.
	pathA, pathB := []byte(filepath.Join(dir, "a.sock")+"\x00"), []byte(filepath.Join(dir, "b.sock")+"\x00")
	require.Equal(t, len(pathA), len(pathB))
	var sa [sockaddrUnLen]byte
	*(*uint16)(unsafe.Pointer(&sa[0])) = unix.AF_UNIX
	copy(sa[2:], pathA)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	attack := func(fn func(i int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				fn(i)
			}
		}()
	}
	attack(func(i int) {
		p := pathA
		if i%2 == 1 {
			p = pathB
		}
		for j := range p { // byte by byte, as a racing store would
			*(*byte)(unsafe.Pointer(&sa[2+j])) = p[j]
		}
	})
	attack(func(i int) {
		target := "a.sock"
		if i%2 == 1 {
			target = "b.sock"
		}
		tmp := filepath.Join(dir, "link.tmp")
		os.Remove(tmp)
		if os.Symlink(target, tmp) == nil {
			os.Rename(tmp, link)
		}
	})
	attack(func(i int) {
		src := filepath.Join(dir, "a.sock")
		if i%2 == 1 {
			src = filepath.Join(dir, "b.sock")
		}
		tmp := filepath.Join(dir, "named.tmp")
		os.Remove(tmp)
		if os.Link(src, tmp) == nil {
			os.Rename(tmp, named)
		}
	})
	defer func() { close(stop); wg.Wait() }()

	rawDial := func() (string, error) {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return "", err
		}
		defer unix.Close(fd)
		if _, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa[0])), sockaddrUnLen); e != 0 {
			return "", e
		}
		buf := make([]byte, 4)
		n, _ := unix.Read(fd, buf)
		return string(buf[:max(n, 0)]), nil
	}
	type tally struct{ a, b, refused atomic.Int64 }
	loop := func(n int) map[string]*tally {
		res := map[string]*tally{"buffer": {}, "symlink": {}, "rename": {}}
		for range n {
			for name, dial := range map[string]func() (string, error){
				"buffer":  rawDial,
				"symlink": func() (string, error) { return dialTag(link) },
				"rename":  func() (string, error) { return dialTag(named) },
			} {
				tag, err := dial()
				switch {
				case err != nil:
					res[name].refused.Add(1)
				case tag == "A":
					res[name].a.Add(1)
				default:
					res[name].b.Add(1)
				}
			}
		}
		return res
	}
	const n = 500
	for name, c := range loop(n) {
		assert.Positive(t, c.b.Load(), "control: unfiltered, %s reaches the other socket", name)
	}
	f, err := Build(Options{LandlockABI: 7, AllowUnix: []UnixSocket{a}})
	require.NoError(t, err)
	onBrokeredThread(t, f, newThreadBroker(), func() {
		for name, c := range loop(n) {
			assert.Zero(t, c.b.Load(), "%s: connected to a socket not named", name)
			assert.Positive(t, c.a.Load(), "%s: the named socket was reached", name)
			t.Logf("%s: %d to the named socket, %d refused, %d to the other", name, c.a.Load(), c.refused.Load(), c.b.Load())
		}
	})
}

// BenchmarkUnixConnect is the price of one connect(2) through the
// supervisor (notification, the address copied, /proc/TID/root,
// NOTIF_ID_VALID, pidfd_getfd, SO_DOMAIN, an O_PATH open on the broker's
// thread, fstat, /proc/TID/status, connect to /proc/self/fd/N, the
// answer) against the direct call, each with a fresh socket to a named
// listening socket (closed at once: the server's accept loop keeps up),
// and of a TCP connect on the broker's thread.
func BenchmarkUnixConnect(b *testing.B) {
	requireSeccomp(b)
	a := unixServer(b, filepath.Join(b.TempDir(), "a.sock"), "A")
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	serveTag(b, tcp, "T")
	port := tcp.Addr().(*net.TCPAddr).Port
	f, err := Build(Options{LandlockABI: 7, AllowUnix: []UnixSocket{a}})
	if err != nil {
		b.Fatal(err)
	}
	unixLoop := func(b *testing.B) {
		for b.Loop() {
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := unix.Connect(fd, &unix.SockaddrUnix{Name: a.Path}); err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
	}
	tcpLoop := func(b *testing.B) {
		for b.Loop() {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
	}
	b.Run("unix/direct", unixLoop)
	b.Run("unix/brokered", func(b *testing.B) { onBrokeredThread(b, f, newThreadBroker(), func() { unixLoop(b) }) })
	b.Run("tcp/direct", tcpLoop)
	b.Run("tcp/brokered", func(b *testing.B) { onBrokeredThread(b, f, newThreadBroker(), func() { tcpLoop(b) }) })
}

// envDial makes the test binary connect to the UNIX socket it names and
// print what the server said (dialMain), as a child forked from a
// filtered thread.
const envDial = "LANDJAIL_SECCOMP_DIAL"

func dialMain(path string) int {
	tag, err := dialTag(path)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("ok", tag)
	return 0
}

// inConnect reports whether a thread of process pid is in connect(2)
// (/proc/PID/task/*/syscall starts with its number while it waits).
func inConnect(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/syscall", pid))
	for _, p := range tasks {
		b, err := os.ReadFile(p)
		if err == nil && strings.HasPrefix(string(b), strconv.Itoa(unix.SYS_CONNECT)+" ") {
			return true
		}
	}
	return false
}

// TestUnixConnectBlockedDoesNotHold: a brokered connect that waits (a
// blocking socket, the named daemon's backlog full, nobody accepting)
// must not hold the supervisor: another connect of a process under the
// same filter is answered meanwhile. Shown red with the connect made on
// the supervisor's goroutine (the second child then waits for the
// first: killed at the timeout).
func TestUnixConnectBlockedDoesNotHold(t *testing.T) {
	requireSeccomp(t)
	dir := t.TempDir()
	a := unixServer(t, filepath.Join(dir, "a.sock"), "A")
	fullPath := filepath.Join(dir, "full.sock")
	lfd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(lfd) }) // last: wakes the waiting connect (ECONNREFUSED)
	require.NoError(t, unix.Bind(lfd, &unix.SockaddrUnix{Name: fullPath}))
	require.NoError(t, unix.Listen(lfd, 0))
	for i := 0; ; i++ { // fill the backlog, never accept
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
		require.NoError(t, err)
		t.Cleanup(func() { unix.Close(fd) })
		if err := unix.Connect(fd, &unix.SockaddrUnix{Name: fullPath}); err != nil {
			require.ErrorIs(t, err, unix.EAGAIN)
			break
		}
		require.Less(t, i, 100, "the backlog never fills")
	}
	var st unix.Stat_t
	require.NoError(t, unix.Stat(fullPath, &st))
	full := UnixSocket{Path: fullPath, Dev: st.Dev, Ino: st.Ino}
	f, err := Build(Options{LandlockABI: 7, AllowUnix: []UnixSocket{a, full}})
	require.NoError(t, err)

	var out []byte
	var dialErr error
	onBrokeredThread(t, f, newThreadBroker(), func() {
		blocker := osexec.Command(os.Args[0], "-test.run=^$")
		blocker.Env = append(os.Environ(), envDial+"="+fullPath)
		if dialErr = blocker.Start(); dialErr != nil {
			return
		}
		defer func() { blocker.Process.Kill(); blocker.Wait() }()
		deadline := time.Now().Add(10 * time.Second)
		for !inConnect(blocker.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		dial := osexec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		dial.Env = append(os.Environ(), envDial+"="+a.Path)
		out, dialErr = dial.Output()
	})
	require.NoError(t, dialErr, "%s", out)
	assert.Equal(t, "ok A\n", string(out))
}
