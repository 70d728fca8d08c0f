package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/netproxy"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// TestRunBadEntry: an entry that does not parse ends the process before
// it reads its control socket.
func TestRunBadEntry(t *testing.T) {
	var out strings.Builder
	err := run([]string{"ok.test", "*.com"}, nil, &out)
	assert.ErrorIs(t, err, netproxy.ErrBadAllowEntry)
	assert.Empty(t, out.String())
}

// controlPair returns landjail's end (a raw descriptor) and the proxy's
// end of a control socket.
func controlPair(t *testing.T) (int, *net.UnixConn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	f := os.NewFile(uintptr(fds[1]), "ctl")
	c, err := net.FileConn(f)
	require.NoError(t, err)
	f.Close()
	t.Cleanup(func() { c.Close() })
	return fds[0], c.(*net.UnixConn)
}

// TestRunServesReceivedListener: the listener sent over the control
// socket is served; a refused request is in the report written at end of
// file.
func TestRunServesReceivedListener(t *testing.T) {
	ours, ctl := controlPair(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	lf, err := l.(*net.TCPListener).File()
	require.NoError(t, err)
	require.NoError(t, unix.Sendmsg(ours, []byte{0}, unix.UnixRights(int(lf.Fd())), nil, 0))
	lf.Close()
	addr := l.Addr().String()
	l.Close() // the proxy holds its own copy

	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- run([]string{"ok.test"}, ctl, &out) }()

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	fmt.Fprint(c, "GET http://refused.test/ HTTP/1.1\r\nHost: refused.test\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	c.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)

	require.NoError(t, unix.Close(ours)) // end of file: report
	require.NoError(t, <-done)
	var rs []refusal
	require.NoError(t, json.Unmarshal([]byte(out.String()), &rs), out.String())
	require.Len(t, rs, 1)
	assert.Equal(t, "refused.test", rs[0].Host)
}

// TestRunEOFFirst: end of file before any listener (landjail stopped
// before the command started) reports nothing refused.
func TestRunEOFFirst(t *testing.T) {
	ours, ctl := controlPair(t)
	require.NoError(t, unix.Close(ours))
	var out strings.Builder
	require.NoError(t, run([]string{"ok.test"}, ctl, &out))
	assert.Equal(t, "[]\n", out.String())
}

// TestRunRefusesBadMessage: a message carrying no descriptor, or two, is
// an error, and extra descriptors are closed.
func TestRunRefusesBadMessage(t *testing.T) {
	for _, n := range []int{0, 2} {
		ours, ctl := controlPair(t)
		var rights []byte
		if n > 0 {
			fds := make([]int, n)
			for i := range fds {
				fds[i] = int(os.Stdin.Fd())
			}
			rights = unix.UnixRights(fds...)
		}
		require.NoError(t, unix.Sendmsg(ours, []byte{0}, rights, nil, 0))
		var out strings.Builder
		err := run([]string{"ok.test"}, ctl, &out)
		assert.ErrorContains(t, err, fmt.Sprintf("a message with %d descriptors", n))
		unix.Close(ours)
	}
}

// TestRunAnswersReady: the first message on the control socket says
// whether the list was accepted: "R", or "E" and the reason (a wildcard
// over a public suffix, which landjail's own flag check does not know).
func TestRunAnswersReady(t *testing.T) {
	for _, tc := range []struct {
		allow []string
		want  string
	}{
		{[]string{"ok.test"}, "R"},
		{[]string{"ok.test", "*.github.io"}, "Enetproxy: bad allowlist entry \"*.github.io\": wildcard over the public suffix github.io"},
	} {
		ours, ctl := controlPair(t)
		done := make(chan error, 1)
		go func() { done <- run(tc.allow, ctl, io.Discard) }()
		buf := make([]byte, 512)
		n, err := unix.Read(ours, buf)
		require.NoError(t, err)
		assert.True(t, strings.HasPrefix(string(buf[:n]), tc.want), "%q", buf[:n])
		unix.Close(ours)
		err = <-done
		if tc.want == "R" {
			assert.NoError(t, err)
		} else {
			assert.ErrorIs(t, err, netproxy.ErrBadAllowEntry)
		}
	}
}
