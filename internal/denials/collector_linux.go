package denials

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
)

// Audit netlink constants (include/uapi/linux/audit.h, netlink.h).
const (
	netlinkAudit      = unix.NETLINK_AUDIT // 9
	auditGet          = 1000               // AUDIT_GET
	auditSet          = 1001               // AUDIT_SET
	auditNlgrpReadlog = 1                  // AUDIT_NLGRP_READLOG
	auditStatusEnable = 0x1                // AUDIT_STATUS_ENABLED
	auditLocked       = 2                  // enabled=2: AUDIT_LOCKED
	statusSize        = 11 * 4             // struct audit_status up to backlog_wait_time_actual
)

// status is the part of struct audit_status this package reads.
type status struct{ Enabled, Pid uint32 }

func getStatus(c *netlink.Conn) (status, error) {
	msgs, err := c.Execute(netlink.Message{Header: netlink.Header{Type: auditGet, Flags: netlink.Request}})
	if err != nil {
		return status{}, fmt.Errorf("AUDIT_GET: %w", err)
	}
	for _, m := range msgs {
		if m.Header.Type == auditGet && len(m.Data) >= 16 {
			return status{Enabled: binary.NativeEndian.Uint32(m.Data[4:]), Pid: binary.NativeEndian.Uint32(m.Data[12:])}, nil
		}
	}
	return status{}, errors.New("AUDIT_GET: no status in reply (cannot happen)")
}

// setEnabled sends AUDIT_SET with only AUDIT_STATUS_ENABLED in the mask, so
// the audit pid, backlog and rate limits are left as they are.
func setEnabled(c *netlink.Conn, enabled uint32) error {
	b := make([]byte, statusSize)
	binary.NativeEndian.PutUint32(b[0:], auditStatusEnable)
	binary.NativeEndian.PutUint32(b[4:], enabled)
	_, err := c.Execute(netlink.Message{Header: netlink.Header{Type: auditSet, Flags: netlink.Request | netlink.Acknowledge}, Data: b})
	if err != nil {
		return fmt.Errorf("AUDIT_SET enabled=%d: %w", enabled, err)
	}
	return nil
}

// Available reports whether Start can work here, and if not, why: it needs
// Landlock ABI >= 7 (audit logging), a kernel with audit (the
// NETLINK_AUDIT socket), CAP_AUDIT_READ to join AUDIT_NLGRP_READLOG, and
// audit either enabled, or disabled but not locked (enabled=2 locks it;
// locked and enabled works, locked and disabled cannot be changed), and a
// program that called Main (the audit watchdog is re-executed from it). It
// opens and closes a netlink socket; it changes nothing.
func Available() (ok bool, why string) {
	if !registered.Load() {
		return false, "the audit watchdog is not registered (the program's main must call denials.Main)"
	}
	if abi := kernel.LandlockRawABI(); abi < 7 {
		return false, fmt.Sprintf("Landlock ABI %d < 7 (audit logging needs Linux >= 6.15)", abi)
	}
	g, err := netlink.Dial(netlinkAudit, &netlink.Config{Groups: auditNlgrpReadlog})
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return false, "joining the audit read-log group needs CAP_AUDIT_READ (run as root)"
		}
		return false, fmt.Sprintf("no audit netlink socket (kernel without CONFIG_AUDIT?): %v", err)
	}
	g.Close()
	// The status is read on a unicast socket: the group socket also
	// receives every record, which would interleave with the reply.
	c, err := netlink.Dial(netlinkAudit, nil)
	if err != nil {
		return false, fmt.Sprintf("audit control socket: %v", err)
	}
	defer c.Close()
	st, err := getStatus(c)
	if err != nil {
		return false, fmt.Sprintf("cannot read audit status: %v", err)
	}
	if st.Enabled == 0 && !hasCap(unix.CAP_AUDIT_CONTROL) {
		return false, "audit is disabled and enabling it needs CAP_AUDIT_CONTROL (run as root)"
	}
	return true, ""
}

// Collector reads Landlock audit records from AUDIT_NLGRP_READLOG until
// Stop. It never sets the audit daemon pid nor changes the backlog or rate
// limits, so a running auditd keeps receiving every record; the records are
// copies delivered to the multicast group.
type Collector struct {
	conn    *netlink.Conn
	hold    *hold // reference on the audit watchdog
	filter  Filter
	done    chan struct{}
	mu      sync.Mutex
	records []Record
	access  map[uint64]bool // serials of the Landlock access records kept
	dropped int             // records not kept because of maxRecords or maxRecordBytes
	bytes   int             // recordSize of the records kept
	errs    []error
	stopped bool
	// fence is the token of the user message Stop sends (typeFence);
	// fenced is closed when read sees it come back.
	fence  string
	fenced chan struct{}
	// throttle, when set (SetThrottle), runs the handling of each batch
	// of records read.
	throttle atomic.Pointer[func(work func())]
}

// SetThrottle makes the Collector handle each batch of records it reads
// through throttle (nil: directly): landjail run passes the command's
// --cpus share, which freezes the command while landjail's work for it
// is owed (red team round 30, R30b-5: a flood of denied connects, each
// an audit record parsed here, cost landjail 5 times a --cpus 0.05
// share). The records wait in the socket's buffer meanwhile (4 MiB;
// what overflows it is reported by Stop).
func (c *Collector) SetThrottle(throttle func(work func())) {
	if throttle == nil {
		c.throttle.Store(nil)
		return
	}
	c.throttle.Store(&throttle)
}

// typeFence is AUDIT_TRUSTED_APP, the user message type Stop sends as a
// fence: kauditd delivers records in the order they were queued, so once
// the fence is read every record the command's processes caused before
// they exited has been too.
const typeFence = 1121

// fenceWait bounds how long Stop waits for its fence (a loaded host's
// kauditd can lag well past settle; red in CI's loaded native pass:
// TestRunLearnNeverLiftsProtections read nothing after 200 ms).
const fenceWait = 10 * time.Second

// Start joins AUDIT_NLGRP_READLOG (needs CAP_AUDIT_READ) and, if audit is
// disabled (enabled=0), enables it (AUDIT_SET, needs CAP_AUDIT_CONTROL);
// with enabled=2 (locked) it only reads. Denials of the domains filter
// accepts are returned by Stop (see Filter; the zero Filter accepts every
// domain on the host).
//
// Restoring the previous enabled state survives the death of the caller:
// audit is enabled and restored by the audit watchdog, a process
// re-executed from this program (Main) and shared by the collectors of
// every process on the host. Each Collector holds a connection to it; when
// the last one closes (Stop, or the kernel closing the descriptors of a
// process that exited or was SIGKILLed) the watchdog restores the state
// the first collector found and exits. Stop waits for that restore. If the
// watchdog itself is SIGKILLed, a running Collector starts a new one,
// which restores the state the dead one recorded (/run/landjail/
// audit.state); if no Collector is left to notice, audit stays enabled
// until the next Start's watchdog ends (or `auditctl -e 0`). Start
// installs no signal handler.
//
// ctx cancels reading early (Stop still returns what was read). Errors
// wrap ErrUnavailable.
func Start(ctx context.Context, filter Filter) (*Collector, error) {
	if ok, why := Available(); !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, why)
	}
	conn, err := netlink.Dial(netlinkAudit, &netlink.Config{Groups: auditNlgrpReadlog})
	if err != nil {
		return nil, fmt.Errorf("%w: joining AUDIT_NLGRP_READLOG: %w", ErrUnavailable, err)
	}
	_ = conn.SetReadBuffer(4 << 20) // best effort; records lost on overflow are reported by Stop
	h, err := acquire()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	c := &Collector{conn: conn, hold: h, filter: filter, done: make(chan struct{}), access: map[uint64]bool{},
		fence: fenceToken(), fenced: make(chan struct{})}
	go c.read()
	go func() {
		select {
		case <-ctx.Done():
			_ = c.conn.SetReadDeadline(time.Now())
		case <-c.done:
		}
	}()
	return c, nil
}

func (c *Collector) read() {
	for {
		msgs, err := c.conn.Receive()
		if err != nil {
			c.mu.Lock()
			if !c.stopped && !errors.Is(err, os.ErrDeadlineExceeded) {
				c.errs = append(c.errs, fmt.Errorf("reading audit records: %w", err))
			}
			c.mu.Unlock()
			if errors.Is(err, unix.ENOBUFS) {
				continue // records lost to a full socket buffer; keep reading
			}
			return
		}
		if t := c.throttle.Load(); t != nil {
			(*t)(func() { c.handle(msgs) })
		} else {
			c.handle(msgs)
		}
	}
}

// handle keeps what msgs hold of the Landlock denials, and notes the
// fence.
func (c *Collector) handle(msgs []netlink.Message) {
	for _, m := range msgs {
		t := uint16(m.Header.Type)
		if t == typeFence && strings.Contains(string(m.Data), c.fence) {
			c.mu.Lock()
			select {
			case <-c.fenced:
			default:
				close(c.fenced)
			}
			c.mu.Unlock()
			continue
		}
		if t != TypeLandlockAccess && t != TypeLandlockDomain && t != typeSyscall {
			continue
		}
		r, err := ParseRecord(t, string(m.Data))
		c.mu.Lock()
		switch {
		case err != nil:
			c.errs = append(c.errs, err)
		case t == typeSyscall && !c.access[r.Serial]:
			// not a Landlock event: with auditd rules loaded the host
			// emits many of these; keep only those that name the
			// process of a Landlock denial (they follow it in the event)
		case len(c.records) >= maxRecords || c.bytes+recordSize(r) > maxRecordBytes:
			c.dropped++
		default:
			c.bytes += recordSize(r)
			if t == TypeLandlockAccess {
				c.access[r.Serial] = true
			}
			c.records = append(c.records, r)
		}
		c.mu.Unlock()
	}
}

// maxRecords bounds the memory a Collector uses when the host (other
// sandboxes included) produces many denials: 1<<16 records of a few hundred
// bytes each, about 20 MiB. Records beyond it are counted and reported by
// Stop as an error wrapping ErrTruncated.
const maxRecords = 1 << 16

// maxRecordBytes bounds the same memory by size: a record's size is the
// command's to choose (audit writes its executable's path, hex-encoded,
// and its working directory into every record: 65,536 records from a
// binary at a 3,600-byte path took landjail to 1 GB, red team round 17,
// R17b-2). recordSize estimates what a record holds on the heap.
const maxRecordBytes = 16 << 20

// recordSize estimates the heap bytes of r: its text, its fields'
// decoded copies and names, and the map and slice around them.
func recordSize(r Record) int {
	n := len(r.Raw) + 256
	for k, v := range r.Fields {
		n += len(k) + len(v) + 64
	}
	return n + 16*len(r.Order)
}

// settle is how long Stop keeps reading after it is called: the kernel
// queues records to the kauditd thread, which sends them asynchronously.
const settle = 200 * time.Millisecond

// Stop waits briefly for records still queued in the kernel, stops reading,
// restores the audit enabled state (see Start) and returns the distinct
// denials of the accepted domains (see Dedup). The error joins read and
// parse errors (ENOBUFS means records were lost) and a failed restore;
// the denials are returned even then. A second Stop returns ErrStopped.
func (c *Collector) Stop() ([]Denial, error) {
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return nil, ErrStopped
	}
	c.mu.Unlock()
	// The command has ended: what is left to read is read at once (a
	// hold now would only delay the fence).
	c.SetThrottle(nil)
	// A fence when the kernel takes one (CAP_AUDIT_WRITE): read until it
	// comes back; otherwise (or if it never does) the fixed settle.
	if _, err := c.conn.Send(netlink.Message{
		Header: netlink.Header{Type: netlink.HeaderType(typeFence), Flags: netlink.Request},
		Data:   []byte("landjail fence " + c.fence),
	}); err == nil {
		select {
		case <-c.fenced:
		case <-time.After(fenceWait):
		}
	} else {
		time.Sleep(settle)
	}
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	close(c.done)
	_ = c.conn.SetReadDeadline(time.Now())
	_ = c.conn.Close()
	errs := []error{c.hold.release()}
	c.mu.Lock()
	defer c.mu.Unlock()
	errs = append(errs, c.errs...)
	if c.dropped > 0 {
		errs = append(errs, fmt.Errorf("%w: %d records beyond %d (or %d MiB) not kept", ErrTruncated, c.dropped, maxRecords, maxRecordBytes>>20))
	}
	return Dedup(c.records, c.filter), errors.Join(errs...)
}

// Records returns a copy of the raw records read so far (all Landlock and
// SYSCALL records on the host, unfiltered), for --report and debugging.
func (c *Collector) Records() []Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Record(nil), c.records...)
}

// hasCap reports whether the calling thread has capability cap effective.
func hasCap(cap int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[cap/32].Effective&(1<<(uint(cap)%32)) != 0
}

// fenceToken is a random token naming one Collector's fence.
func fenceToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
