// Package threadcaps runs a function on an OS thread of its own whose
// capability sets hold no more than the capabilities asked for:
// capset(2) acts on the calling thread only (capabilities(7), "Thread
// capability sets"), so a root process can do some of its work with the
// permission checks of an unprivileged one, while its other threads keep
// what they hold. The thread is osthread's: never the main thread, ended
// after the function, so the reduced sets are never handed back to the
// Go scheduler; Go creates new threads from its template thread, not
// from a locked one, so none inherits them either.
//
// landjail-mcp's file tools run this way: as root they had kept
// CAP_DAC_OVERRIDE and read another user's 0600 file that the same
// server's bash, which holds no capability, is refused (red team round
// 27, R27c-1).
package threadcaps

import (
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
)

// Run runs fn on a fresh OS thread whose effective, permitted and
// inheritable capability sets are the calling process's, less every
// capability not in keep (CAP_* numbers, unix.CAP_CHOWN ...; nil keeps
// none), and returns fn's error. If capget(2) or capset(2) fails, fn is
// not run and Run returns that error (fail closed). The thread dies
// after fn; Run waits for it. Capabilities the process does not hold
// are not gained. Works on any kernel with 64-bit capability sets
// (Linux 2.6.26, _LINUX_CAPABILITY_VERSION_3).
func Run(keep []int, fn func() error) error {
	mask, err := maskOf(keep)
	if err != nil {
		return err
	}
	return runOn(func() error { return limit(mask) }, fn)
}

// runOn runs setup then fn on a fresh osthread thread, and returns fn's
// error, or setup's (fn not run) wrapped as threadcaps'.
func runOn(setup, fn func() error) error {
	ran := false
	err := osthread.Run(func() error {
		if err := setup(); err != nil {
			return err
		}
		ran = true
		return fn()
	})
	if !ran && err != nil {
		return fmt.Errorf("threadcaps: %w", err)
	}
	return err
}

// RunAs is Run with no capability kept, on a thread whose file-system
// uid and gid and supplementary groups are cred's (nil: this process's):
// every permission check fn's system calls meet is the one a command
// started with cred, holding no capability, meets. The ids are set with
// raw setgroups(2), setfsgid(2) and setfsuid(2), which act on the
// calling thread only (Go's syscall.Setgroups and glibc's apply them to
// every thread), before the capabilities are dropped. If one fails (the
// process lacks CAP_SETUID or CAP_SETGID: then it cannot start a command
// as cred either), fn is not run and RunAs returns the error.
func RunAs(cred *syscall.Credential, fn func() error) error { return RunAsKeeping(cred, nil, fn) }

// RunAsKeeping is RunAs keeping the capabilities in keep (CAP_* numbers)
// that the process holds: effective again after the fsuid change, which
// clears the file-system ones (capabilities(7), "Effect of user ID
// changes on capabilities"). landjail's sweep undoes what a command did
// with the command's permission checks and CAP_CHOWN alone, to give a
// restored file its owner back.
func RunAsKeeping(cred *syscall.Credential, keep []int, fn func() error) error {
	mask, err := maskOf(keep)
	if err != nil {
		return err
	}
	return runOn(func() error {
		if cred != nil {
			if !cred.NoSetGroups {
				gs := append([]uint32(nil), cred.Groups...)
				var ptr unsafe.Pointer
				if len(gs) > 0 {
					ptr = unsafe.Pointer(&gs[0])
				}
				if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(gs)), uintptr(ptr), 0); e != 0 {
					return fmt.Errorf("setgroups: %w", e)
				}
			}
			unix.RawSyscall(unix.SYS_SETFSGID, uintptr(cred.Gid), 0, 0)
			if r, _, _ := unix.RawSyscall(unix.SYS_SETFSGID, uintptr(cred.Gid), 0, 0); uint32(r) != cred.Gid {
				return fmt.Errorf("setfsgid %d: not permitted", cred.Gid)
			}
			unix.RawSyscall(unix.SYS_SETFSUID, uintptr(cred.Uid), 0, 0)
			if r, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, uintptr(cred.Uid), 0, 0); uint32(r) != cred.Uid {
				return fmt.Errorf("setfsuid %d: not permitted", cred.Uid)
			}
		}
		return limitFromPermitted(mask)
	}, fn)
}

// Limit reduces the calling thread's effective, permitted and
// inheritable capability sets to those in keep (nil: none), as Run does
// for its fresh thread. The caller must hold a thread of its own for
// the rest of the thread's life (runtime.LockOSThread, never unlocked,
// as in osthread.Run): Go would otherwise run other goroutines on a
// thread with fewer capabilities than the process. Errors: a
// capability out of range, capget(2)'s or capset(2)'s (then the sets
// may be unchanged: the caller fails closed).
func Limit(keep []int) error {
	mask, err := maskOf(keep)
	if err != nil {
		return err
	}
	if err := limit(mask); err != nil {
		return fmt.Errorf("threadcaps: %w", err)
	}
	return nil
}

// maskOf is keep (CAP_* numbers) as capability set words.
func maskOf(keep []int) ([2]uint32, error) {
	var mask [2]uint32
	for _, c := range keep {
		if c < 0 || c >= 64 {
			return mask, fmt.Errorf("threadcaps: capability %d out of range", c)
		}
		mask[c/32] |= 1 << (c % 32)
	}
	return mask, nil
}

// limit reduces the calling thread's capability sets to mask.
func limit(mask [2]uint32) error {
	return adjust(mask, func(d *unix.CapUserData, m uint32) {
		d.Effective &= m
		d.Permitted &= m
		d.Inheritable &= m
	})
}

// limitFromPermitted sets the calling thread's permitted and inheritable
// sets to theirs within mask, and its effective set to the permitted one
// (what an fsuid change cleared comes back, within mask).
func limitFromPermitted(mask [2]uint32) error {
	return adjust(mask, func(d *unix.CapUserData, m uint32) {
		d.Permitted &= m
		d.Inheritable &= m
		d.Effective = d.Permitted
	})
}

// adjust applies f to each word of the calling thread's capability sets
// (capget(2), then capset(2)), with mask's word.
func adjust(mask [2]uint32, f func(d *unix.CapUserData, m uint32)) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	for i := range data {
		f(&data[i], mask[i])
	}
	hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// Effective returns the calling thread's effective capability set (bit
// n is CAP n), from capget(2): for tests, and for callers that check
// what a thread holds.
func Effective() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, err
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}
