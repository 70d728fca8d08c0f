package main

import (
	"bytes"
	"encoding/binary"
	"os"
	osexec "os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
)

// auditEnabled reads audit's enabled flag (AUDIT_GET; struct
// audit_status.enabled is its second u32).
func auditEnabled(t *testing.T) uint32 {
	t.Helper()
	c, err := netlink.Dial(unix.NETLINK_AUDIT, nil)
	require.NoError(t, err)
	defer c.Close()
	msgs, err := c.Execute(netlink.Message{Header: netlink.Header{Type: unix.AUDIT_GET, Flags: netlink.Request}})
	require.NoError(t, err)
	for _, m := range msgs {
		if m.Header.Type == unix.AUDIT_GET && len(m.Data) >= 8 {
			return binary.NativeEndian.Uint32(m.Data[4:])
		}
	}
	t.Fatal("AUDIT_GET: no status in the reply")
	return 0
}

// setAuditEnabled sends AUDIT_SET with only the enabled bit in the mask.
func setAuditEnabled(t *testing.T, v uint32) {
	t.Helper()
	c, err := netlink.Dial(unix.NETLINK_AUDIT, nil)
	require.NoError(t, err)
	defer c.Close()
	b := make([]byte, 44)
	binary.NativeEndian.PutUint32(b[0:], 1) // AUDIT_STATUS_ENABLED
	binary.NativeEndian.PutUint32(b[4:], v)
	_, err = c.Execute(netlink.Message{Header: netlink.Header{Type: unix.AUDIT_SET, Flags: netlink.Request | netlink.Acknowledge}, Data: b})
	require.NoError(t, err)
}

// pollEnabled waits (at most 5 s) until audit's enabled flag is want
// and returns the last value read.
func pollEnabled(t *testing.T, want uint32) uint32 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := auditEnabled(t)
		if got == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// requireAuditOff skips without audit, sets enabled=0 for the test and
// restores the state found afterwards (audit is the host's: the other
// tests on it must find it as it was, even when this one fails).
func requireAuditOff(t *testing.T) {
	t.Helper()
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		t.SkipNow()
	}
	before := auditEnabled(t)
	if before == 2 {
		t.Skip("audit is locked (enabled=2): cannot set the initial state")
	}
	setAuditEnabled(t, 0)
	t.Cleanup(func() { setAuditEnabled(t, before) })
}

// TestExplainKilledRestoresAudit: the built landjail, `run --explain`,
// SIGKILLed while the command runs: audit is disabled again, as it was
// before the run (the watchdog restores it when the dead landjail's
// descriptor closes). Shown red on 99b6380 (in-process restore only):
// enabled stayed 1.
func TestExplainKilledRestoresAudit(t *testing.T) {
	requireAuditOff(t)
	bin := landjailBin(t)
	cmd := osexec.Command(bin, "run", "--workspace", wsDir(t), "--explain", "--", "sleep", "5")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	require.Equal(t, uint32(1), pollEnabled(t, 1), "--explain enables audit")
	require.NoError(t, cmd.Process.Signal(unix.SIGKILL))
	cmd.Wait()
	assert.Equal(t, uint32(0), pollEnabled(t, 0), "audit restored after landjail was SIGKILLed")
}

// TestExplainConcurrentRuns: two `run --explain` at once. The first,
// which enabled audit, ends while the second runs (it waits until the
// second's command has started, so the second's collector runs too); the
// second's command is denied a read after that, and its --explain still
// names the denial (audit stayed enabled); when the second ends audit is
// disabled again. Shown red on 99b6380: the first run's end disabled
// audit under the second, which reported nothing.
func TestExplainConcurrentRuns(t *testing.T) {
	requireAuditOff(t)
	bin := landjailBin(t)
	outside, err := os.MkdirTemp("/var/tmp", "landjail-explain-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(outside) })
	secret := filepath.Join(outside, "secret")
	require.NoError(t, os.WriteFile(secret, []byte("s3cret"), 0o600))
	ws2 := wsDir(t)
	ready := filepath.Join(ws2, "ready")

	var first bytes.Buffer
	a := osexec.Command(bin, "run", "--workspace", wsDir(t), "--ro", ws2, "--explain", "--",
		"sh", "-c", "until [ -e "+ready+" ]; do sleep 0.02; done")
	a.Stdout, a.Stderr = &first, &first
	require.NoError(t, a.Start())
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	require.Equal(t, uint32(1), pollEnabled(t, 1), "the first run enabled audit")

	var second bytes.Buffer
	b := osexec.Command(bin, "run", "--workspace", ws2, "--explain", "--",
		"sh", "-c", "touch "+ready+"; sleep 1; cat "+secret)
	b.Stdout, b.Stderr = &second, &second
	require.NoError(t, b.Start())
	t.Cleanup(func() { b.Process.Kill(); b.Wait() })
	require.NoError(t, a.Wait(), first.String())
	assert.Equal(t, uint32(1), auditEnabled(t), "the second run still collects: audit stays enabled")
	require.Error(t, b.Wait(), "cat is denied: %s", second.String())
	assert.Contains(t, second.String(), "read_file "+secret, "the second run saw its denial after the first ended")
	assert.Equal(t, uint32(0), auditEnabled(t), "the last run restored enabled=0")
}
