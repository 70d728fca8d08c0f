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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"
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

// TestRunServesTransparent: a 'T' message's second descriptor is served
// as the DNS responder (a listed name gets a synthetic address, an
// unlisted one NXDOMAIN, in the report), the third as a transparent
// listener (a connection to an address never handed out is refused and
// reported). Control: a 'T' message with too few descriptors is refused.
func TestRunServesTransparent(t *testing.T) {
	ours, ctl := controlPair(t)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	require.NoError(t, err)
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	var files []*os.File
	for _, s := range []interface{ File() (*os.File, error) }{l.(*net.TCPListener), pc.(*net.UDPConn), tl.(*net.TCPListener)} {
		f, err := s.File()
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NoError(t, unix.Sendmsg(ours, []byte{'T'}, unix.UnixRights(int(files[0].Fd()), int(files[1].Fd()), int(files[2].Fd())), nil, 0))
	for _, f := range files {
		f.Close()
	}
	dnsAddr, tAddr := pc.LocalAddr().String(), tl.Addr().String()
	l.Close()
	pc.Close()
	tl.Close()

	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- run([]string{"ok.test"}, ctl, &out) }()

	ask := func(name string) (dnsmessage.RCode, int) {
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 1})
		b.StartQuestions()
		b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET})
		q, _ := b.Finish()
		c, err := net.Dial("udp4", dnsAddr)
		require.NoError(t, err)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Write(q)
		require.NoError(t, err)
		buf := make([]byte, 512)
		n, err := c.Read(buf)
		require.NoError(t, err)
		var m dnsmessage.Message
		require.NoError(t, m.Unpack(buf[:n]))
		return m.Header.RCode, len(m.Answers)
	}
	rc, n := ask("ok.test.")
	assert.Equal(t, dnsmessage.RCodeSuccess, rc)
	assert.Equal(t, 1, n)
	rc, n = ask("refused.test.")
	assert.Equal(t, dnsmessage.RCodeNameError, rc)
	assert.Zero(t, n)

	c, err := net.Dial("tcp4", tAddr)
	require.NoError(t, err)
	fmt.Fprint(c, "GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	assert.Error(t, err, "closed without an answer")
	c.Close()

	require.NoError(t, unix.Close(ours))
	require.NoError(t, <-done)
	var rs []refusal
	require.NoError(t, json.Unmarshal([]byte(out.String()), &rs), out.String())
	assert.ElementsMatch(t, []refusal{
		{Host: "127.0.0.1", Port: uint16(tl.Addr().(*net.TCPAddr).Port), Count: 1, Reason: netproxy.ReasonNotSynthetic},
		{Host: "refused.test", Count: 1, Reason: netproxy.ReasonDNSNotListed},
	}, rs)

	// Control: 'T' with two descriptors only.
	ours2, ctl2 := controlPair(t)
	in := int(os.Stdin.Fd())
	require.NoError(t, unix.Sendmsg(ours2, []byte{'T'}, unix.UnixRights(in, in), nil, 0))
	err = run([]string{"ok.test"}, ctl2, io.Discard)
	assert.ErrorContains(t, err, "a message with 2 descriptors, want a listening socket, a UDP socket and transparent listeners")
	unix.Close(ours2)
}
