package denials

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	osexec "os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/reaper"
)

// The audit watchdog. Audit's enabled flag is one setting of the whole
// system, and a collector that enabled it cannot restore it once it is
// SIGKILLed. So the flag is changed by a separate process, the watchdog,
// re-executed from this binary (Main): it records the state it found,
// enables audit, counts the collectors connected to it, and when the last
// connection closes (Stop, exit, or the kernel closing a killed process's
// descriptors) it restores the state and exits. Collectors of every
// landjail process on the host share one watchdog.
//
// Rendezvous, in runDir (root's, mode 0700):
//   - audit.lock: flock(2)ed by a collector while it connects or starts a
//     watchdog, and by the watchdog while it decides to exit, restores and
//     removes its socket. So a collector sees either a watchdog that will
//     count it or no watchdog at all, never one on its way out.
//   - audit.sock: the watchdog's listening socket. The collector connects
//     and waits for the one-byte acknowledgement (counted, audit enabled);
//     to release it sends 'r' and waits for the reply ('0': released, and
//     restored if it was the last; '1': the restore failed).
//   - audit.state: "0" while a watchdog owes the system enabled=0. It is
//     written before audit is enabled and removed after it is disabled
//     again, so a watchdog that is itself SIGKILLed leaves it behind; the
//     next watchdog (started by a collector that finds the socket dead)
//     then restores 0 instead of the 1 it finds.
const (
	envWatchdog   = "LANDJAIL_AUDIT_WATCHDOG" // its value: the rendezvous directory
	watchdogArgv0 = "landjail-audit-watchdog"
	lockName      = "audit.lock"
	sockName      = "audit.sock"
	stateName     = "audit.state"
	watchdogFD    = 3 // the listening socket, ExtraFiles[0]

	ackOK   = 'a' // connection counted, audit enabled
	release = 'r' // the collector gives its reference back
	relOK   = '0'
	relFail = '1'
)

// runDir is the rendezvous directory; tests use their own.
var runDir = "/run/landjail"

// rendezvousTimeout bounds each wait of a collector on the lock and on the
// watchdog's replies: the watchdog holds the lock for one AUDIT_SET and
// answers at once, so only a stopped or hung watchdog takes longer.
const rendezvousTimeout = 5 * time.Second

var registered atomic.Bool

// testHookStarted, when set (tests only), runs right after the watchdog
// process is started, before its acknowledgement is awaited.
var testHookStarted func()

// Main registers the audit watchdog for this program: call it first thing
// in main (or TestMain), before any goroutine that matters. Start needs
// it: the watchdog is this binary re-executed (/proc/self/exe). In the
// re-executed watchdog Main runs it and exits (0, or 1 when it could not
// enable audit or restore it, 125 when LANDJAIL_AUDIT_WATCHDOG is set in
// a process that was not started as a watchdog: a stray variable cannot
// turn the program into one). In every other process it returns at once.
// Linux only; elsewhere it does nothing.
func Main() {
	if dir, ok := os.LookupEnv(envWatchdog); ok {
		closeInherited()
		os.Exit(runWatchdog(dir))
	}
	registered.Store(true)
}

// ensureRunDir makes runDir (0700) and checks that it is a directory, not
// a symbolic link, owned by root or the caller and not writable by others:
// the state file in it decides what the system's audit flag is set to.
func ensureRunDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || (st.Uid != 0 && int(st.Uid) != os.Geteuid()) || fi.Mode().Perm()&0o022 != 0 {
		return &os.PathError{Op: "check", Path: dir, Err: fmt.Errorf("not a directory owned by root and closed to others (%v, uid %d)", fi.Mode(), st.Uid)}
	}
	return nil
}

// lockRunDir opens and flock(2)s dir's lock file, waiting at most
// rendezvousTimeout. Closing the returned file unlocks it.
func lockRunDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(rendezvousTimeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) || time.Now().After(deadline) {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: f.Name(), Err: err}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hold is one collector's reference on the watchdog. When the watchdog
// dies while the collector still runs (SIGKILL, or a supervisor's kill of
// all its descendants that did not spare it), watch connects again, which
// starts a new watchdog; that one finds its predecessor's state file.
type hold struct {
	mu        sync.Mutex
	conn      *net.UnixConn
	releasing bool
	reply     chan error
	errs      []error // reconnection failures, reported by release
}

// acquire connects to the watchdog, starting it if none runs, and returns
// once audit is enabled (or was already).
func acquire() (*hold, error) {
	conn, err := connectWatchdog()
	if err != nil {
		return nil, err
	}
	h := &hold{conn: conn, reply: make(chan error, 1)}
	go h.watch(conn)
	return h, nil
}

func connectWatchdog() (*net.UnixConn, error) {
	dir := runDir
	if err := ensureRunDir(dir); err != nil {
		return nil, fmt.Errorf("audit watchdog: %w", err)
	}
	lock, err := lockRunDir(dir)
	if err != nil {
		return nil, fmt.Errorf("audit watchdog: %w", err)
	}
	defer lock.Close()
	if conn, err := dialWatchdog(dir); err == nil {
		return conn, nil
	}
	// None runs (ENOENT), or the socket is a dead one's (ECONNREFUSED),
	// or it died before answering: start one. The lock keeps every other
	// collector from doing the same meanwhile.
	conn, err := startWatchdog(dir)
	if err != nil {
		return nil, fmt.Errorf("audit watchdog: %w", err)
	}
	return conn, nil
}

// dialWatchdog connects and waits for the acknowledgement.
func dialWatchdog(dir string) (*net.UnixConn, error) {
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: filepath.Join(dir, sockName), Net: "unix"})
	if err != nil {
		return nil, err
	}
	return awaitAck(conn)
}

// awaitAck waits for the watchdog's acknowledgement on conn (closed on
// failure).
func awaitAck(conn *net.UnixConn) (*net.UnixConn, error) {
	var b [1]byte
	_ = conn.SetDeadline(time.Now().Add(rendezvousTimeout))
	_, err := io.ReadFull(conn, b[:])
	_ = conn.SetDeadline(time.Time{})
	switch {
	case err != nil:
		conn.Close()
		return nil, fmt.Errorf("waiting for the watchdog: %w", err)
	case b[0] != ackOK:
		conn.Close()
		return nil, fmt.Errorf("watchdog answered %q (cannot happen)", b[0])
	}
	return conn, nil
}

// startWatchdog binds a new socket (removing a dead watchdog's), connects
// to it, starts the watchdog with it and returns the acknowledged
// connection. The caller holds the lock. The connection is queued before
// the watchdog runs: if this process dies at any point after the start,
// the watchdog still finds one connection (closed), and exits restoring.
// The watchdog is a child of this process in a session of its own (a
// terminal's ^C does not reach it), with /dev/null for stdio (it holds no
// pipe of the caller's open), spared by reaper.KillDescendants.
func startWatchdog(dir string) (*net.UnixConn, error) {
	if !registered.Load() {
		return nil, errors.New("not registered: the program's main must call denials.Main (cannot happen in landjail)")
	}
	sock := filepath.Join(dir, sockName)
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false)
	f, err := l.File()
	l.Close()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	conn, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		return nil, err
	}
	cmd := &osexec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{watchdogArgv0},
		Env:         []string{envWatchdog + "=" + dir},
		Dir:         "/",
		ExtraFiles:  []*os.File{f},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, err
	}
	if testHookStarted != nil {
		testHookStarted()
	}
	pid := cmd.Process.Pid
	reaper.Spare(pid)
	go func() {
		// Unspared before it is reaped: a reaped pid can be recycled.
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		reaper.Unspare(pid)
		_ = cmd.Wait()
	}()
	return awaitAck(conn)
}

// watch waits on the connection: the only byte the watchdog sends
// unasked is none, so a read returns either the reply to release or an
// error (the watchdog died). A watchdog that dies, before release or
// after release wrote to it, is replaced (connectWatchdog starts a new
// one, which finds the dead one's state file); when release is under way
// by then, the reference is released on the new one and its reply (the
// restore done) is release's: release never returns while audit stays
// enabled on its account.
func (h *hold) watch(conn *net.UnixConn) {
	for {
		var b [1]byte
		_, err := conn.Read(b[:])
		h.mu.Lock()
		releasing := h.releasing
		h.mu.Unlock()
		if releasing && err == nil {
			h.reply <- releaseReply(b[0])
			return
		}
		conn.Close()
		if testHookReconnect != nil {
			testHookReconnect(h)
		}
		next, err := connectWatchdog()
		h.mu.Lock()
		releasing = h.releasing
		if err != nil {
			err = fmt.Errorf("the audit watchdog died and could not be restarted: %w", err)
			h.conn = nil
			if !releasing {
				h.errs = append(h.errs, err)
			}
			h.mu.Unlock()
			if releasing {
				h.reply <- err
			}
			return
		}
		if releasing { // release wrote to the dead connection
			h.mu.Unlock()
			h.reply <- releaseOn(next)
			return
		}
		h.conn = next
		conn = next
		h.mu.Unlock()
	}
}

// testHookReconnect, when set (tests only), runs in watch after the
// watchdog's connection ended, before a new watchdog is connected.
var testHookReconnect func(*hold)

// releaseReply is the outcome the watchdog's reply byte b reports.
func releaseReply(b byte) error {
	if b == relOK {
		return nil
	}
	return errors.New("audit watchdog: restoring the audit enabled state failed (see audit.state in " + runDir + ")")
}

// releaseOn gives the reference held by conn back, waits for the reply
// and closes conn.
func releaseOn(conn *net.UnixConn) error {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(rendezvousTimeout))
	var b [1]byte
	if _, err := conn.Write([]byte{release}); err != nil {
		return fmt.Errorf("audit watchdog: releasing: %w", err)
	}
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fmt.Errorf("audit watchdog: releasing: %w", err)
	}
	return releaseReply(b[0])
}

// release gives the reference back and waits until the watchdog has
// restored the state (when this was the last reference) or counted it.
func (h *hold) release() error {
	h.mu.Lock()
	h.releasing = true
	conn := h.conn
	errs := h.errs
	h.mu.Unlock()
	if conn == nil {
		return errors.Join(errs...)
	}
	_ = conn.SetDeadline(time.Now().Add(rendezvousTimeout))
	_, _ = conn.Write([]byte{release}) // a dead watchdog: watch reconnects and releases there
	err := <-h.reply
	conn.Close()
	return errors.Join(append(errs, err)...)
}

// watchdog is the re-executed process's state.
type watchdog struct {
	dir     string
	ln      *net.UnixListener
	sockIno uint64 // the socket file it bound, so it removes only its own
	ctl     *netlink.Conn
	owes    bool // audit.state written: restore enabled=0 at the end

	mu      sync.Mutex
	refs    int
	closing bool
	exitMu  sync.Mutex // serialises tryExit
	exit    chan int
}

// closeInherited closes the descriptors above watchdogFD that the
// watchdog inherited from the first caller (not close-on-exec there: a
// pipe, a flock(1) lock, a make jobserver): the watchdog outlives that
// caller while other runs use it, and must not hold them (red team round
// 11, R11b-5). The Go runtime's own (its netpoller's epoll and eventfd
// descriptors, if made yet) are left.
func closeInherited() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= watchdogFD {
			continue
		}
		t, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || t == "anon_inode:[eventpoll]" || t == "anon_inode:[eventfd]" || strings.HasPrefix(t, "/proc/") {
			continue // the runtime's, or ReadDir's own descriptor of /proc/self/fd
		}
		unix.Close(fd)
	}
}

// runWatchdog is the watchdog's body; dir is the rendezvous directory.
func runWatchdog(dir string) int {
	os.Unsetenv(envWatchdog)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "landjail: audit watchdog: "+format+"\n", a...)
		return 125
	}
	// Only a process started by startWatchdog has a listening UNIX
	// socket bound at dir/audit.sock on descriptor 3.
	sa, err := unix.Getsockname(watchdogFD)
	if err != nil {
		return fail("%s set but descriptor %d is not a socket (%v); refusing", envWatchdog, watchdogFD, err)
	}
	un, ok := sa.(*unix.SockaddrUnix)
	acc, err := unix.GetsockoptInt(watchdogFD, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if !ok || un.Name != filepath.Join(dir, sockName) || err != nil || acc != 1 {
		return fail("%s set but descriptor %d is not the listening socket %s; refusing", envWatchdog, watchdogFD, filepath.Join(dir, sockName))
	}
	if err := ensureRunDir(dir); err != nil {
		return fail("%v", err)
	}
	fi, err := os.Lstat(filepath.Join(dir, sockName))
	if err != nil {
		return fail("%v", err)
	}
	signal.Ignore(unix.SIGINT, unix.SIGHUP, unix.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, unix.SIGTERM)
	lf, err := net.FileListener(os.NewFile(watchdogFD, "audit.sock"))
	if err != nil {
		return fail("%v", err)
	}
	w := &watchdog{dir: dir, ln: lf.(*net.UnixListener), sockIno: fi.Sys().(*syscall.Stat_t).Ino, exit: make(chan int, 1)}
	w.ln.SetUnlinkOnClose(false)
	w.ctl, err = netlink.Dial(netlinkAudit, nil)
	if err != nil {
		return fail("audit control socket: %v", err)
	}
	if err := w.enable(); err != nil {
		// The collectors waiting for the acknowledgement get end of
		// file instead: Start fails.
		fmt.Fprintf(os.Stderr, "landjail: audit watchdog: %v\n", err)
		return 1
	}
	go w.accept()
	select {
	case <-term:
		// Shutdown: restore now, whoever still collects (their
		// connections see end of file and start a new watchdog).
		return w.tryExit(true)
	case code := <-w.exit:
		return code
	}
}

// enable records what to restore and enables audit. A state file left by
// a watchdog that died owes the system enabled=0, whatever is found now.
func (w *watchdog) enable() error {
	st, err := getStatus(w.ctl)
	if err != nil {
		return err
	}
	state := filepath.Join(w.dir, stateName)
	b, err := os.ReadFile(state)
	switch {
	case err == nil && strings.TrimSpace(string(b)) == "0":
		w.owes = true
	case err == nil:
		return &os.PathError{Op: "read", Path: state, Err: fmt.Errorf("unexpected content %q", b)}
	case !errors.Is(err, os.ErrNotExist):
		return err
	case st.Enabled == 0:
		if err := writeState(state); err != nil {
			return err
		}
		w.owes = true
	}
	if st.Enabled == 0 {
		return setEnabled(w.ctl, 1)
	}
	return nil
}

// writeState writes "0" to path, durably enough for tmpfs: a new file
// renamed into place, so a reader never sees it half written.
func writeState(path string) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("0\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (w *watchdog) accept() {
	for {
		c, err := w.ln.AcceptUnix()
		if err != nil {
			return // closed by tryExit
		}
		w.mu.Lock()
		if w.closing { // cannot happen: connections come under the lock
			w.mu.Unlock()
			c.Close()
			continue
		}
		w.refs++
		w.mu.Unlock()
		go w.serve(c)
	}
}

// serve acknowledges one collector and waits for its release (or for its
// end: the kernel closes a dead process's socket).
func (w *watchdog) serve(c *net.UnixConn) {
	defer c.Close()
	if _, err := c.Write([]byte{ackOK}); err != nil {
		w.drop(c, false)
		return
	}
	var b [1]byte
	n, _ := c.Read(b[:])
	w.drop(c, n == 1 && b[0] == release)
}

// drop gives one reference back; the last one makes the watchdog try to
// exit. reply: the collector waits for the outcome.
func (w *watchdog) drop(c *net.UnixConn, reply bool) {
	w.mu.Lock()
	w.refs--
	last := w.refs == 0
	w.mu.Unlock()
	code := -1
	if last {
		code = w.tryExit(false)
	}
	if reply {
		r := byte(relOK)
		if code > 0 {
			r = relFail
		}
		_, _ = c.Write([]byte{r})
	}
	if code >= 0 {
		w.exit <- code
	}
}

// tryExit exits (returns the exit code) unless a collector connected
// meanwhile (returns -1). Under the lock: a collector that connects now
// either was counted before, or finds no socket and starts a new
// watchdog, which reads the state this one restored.
func (w *watchdog) tryExit(force bool) int {
	w.exitMu.Lock()
	defer w.exitMu.Unlock()
	lock, lerr := lockRunDir(w.dir)
	if lock != nil {
		defer lock.Close()
	}
	w.mu.Lock()
	if w.closing || (w.refs > 0 && !force) {
		w.mu.Unlock()
		return -1
	}
	w.closing = true
	w.mu.Unlock()
	w.ln.Close()
	sock := filepath.Join(w.dir, sockName)
	if fi, err := os.Lstat(sock); err == nil && fi.Sys().(*syscall.Stat_t).Ino == w.sockIno {
		os.Remove(sock)
	}
	if lerr != nil {
		fmt.Fprintf(os.Stderr, "landjail: audit watchdog: %v; restoring anyway\n", lerr)
	}
	if !w.owes {
		return 0
	}
	// An audit daemon that registered since (auditd's AUDIT_SET of its
	// pid) keeps audit on: it would log nothing from now on (red team
	// round 11, R11b-6). The kernel has no compare-and-set: a daemon
	// registering between this read and the write below is not seen.
	if st, err := getStatus(w.ctl); err == nil && st.Pid != 0 {
		fmt.Fprintf(os.Stderr, "landjail: audit watchdog: an audit daemon (pid %d) registered while audit was on for --explain: left enabled\n", st.Pid)
		os.Remove(filepath.Join(w.dir, stateName))
		return 0
	}
	if err := setEnabled(w.ctl, 0); err != nil {
		fmt.Fprintf(os.Stderr, "landjail: audit watchdog: %v (audit.state left for the next watchdog)\n", err)
		return 1
	}
	os.Remove(filepath.Join(w.dir, stateName))
	return 0
}
