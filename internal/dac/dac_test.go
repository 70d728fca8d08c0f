package dac

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/osthread"
	"github.com/landjail/landjail/internal/threadcaps"
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

func encodeACL(es []aclEntry) []byte {
	b := binary.LittleEndian.AppendUint32(nil, aclVersion)
	for _, e := range es {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	return b
}

// randomACL is a valid access ACL (sorted, a mask when there are named
// entries) with random permissions, naming some of the test's users and
// groups.
func randomACL(r *rand.Rand) []aclEntry {
	p := func() uint16 { return uint16(r.IntN(8)) }
	es := []aclEntry{{aclUserObj, p(), 0xffffffff}}
	named := false
	for _, u := range []uint32{1003, 1005} {
		if r.IntN(2) == 0 {
			es = append(es, aclEntry{aclUser, p(), u})
			named = true
		}
	}
	es = append(es, aclEntry{aclGroupObj, p(), 0xffffffff})
	for _, g := range []uint32{1002, 1004, 1006} {
		if r.IntN(2) == 0 {
			es = append(es, aclEntry{aclGroup, p(), g})
			named = true
		}
	}
	if named || r.IntN(2) == 0 {
		es = append(es, aclEntry{aclMask, p(), 0xffffffff})
	}
	return append(es, aclEntry{aclOther, p(), 0xffffffff})
}

// testCreds: the owner (1001:1002), its group by gid and by a
// supplementary group, another user, users and groups the ACLs name,
// and root with no capability.
var testCreds = []Creds{
	{1001, 1002, nil},
	{1003, 1002, nil},
	{1003, 1004, []uint32{1002}},
	{1003, 1004, nil},
	{1005, 1004, nil},
	{1007, 1004, []uint32{1006}},
	{1005, 1006, []uint32{1002}},
	{0, 0, nil},
}

// kernelAnswers asks the kernel (faccessat2 with AT_EACCESS on a thread
// whose fsuid, fsgid and groups are c's and which holds no capability)
// whether c may access each path for each want 1..7.
func kernelAnswers(t *testing.T, c Creds, paths []string) map[string][8]bool {
	out := map[string][8]bool{}
	err := osthread.Run(func() error {
		gs := make([]uint32, len(c.Groups)+1)
		copy(gs, c.Groups)
		var ptr unsafe.Pointer
		if len(c.Groups) > 0 {
			ptr = unsafe.Pointer(&gs[0])
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, uintptr(len(c.Groups)), uintptr(ptr), 0); e != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
		unix.RawSyscall(unix.SYS_SETFSGID, uintptr(c.GID), 0, 0)
		unix.RawSyscall(unix.SYS_SETFSUID, uintptr(c.UID), 0, 0)
		if r, _, _ := unix.RawSyscall(unix.SYS_SETFSUID, uintptr(c.UID), 0, 0); uint32(r) != c.UID {
			return fmt.Errorf("setfsuid %d did not take", c.UID)
		}
		if err := threadcaps.Limit(nil); err != nil {
			return err
		}
		for _, p := range paths {
			var a [8]bool
			for want := uint32(1); want < 8; want++ {
				a[want] = unix.Faccessat2(unix.AT_FDCWD, p, want, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) == nil
			}
			out[p] = a
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestMayMatchesKernel: for every mode (no ACL) and 300 random access
// ACLs, on files and directories of 1001:1002, May, MayPath and MayFd
// (of an O_PATH descriptor and of an open file) answer as the kernel does for each credential and each access.
func TestMayMatchesKernel(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (files of other users, setfsuid)")
	}
	dir, err := os.MkdirTemp("", "dac-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	var paths []string
	mk := func(name string, isDir bool) string {
		p := filepath.Join(dir, name)
		if isDir {
			require.NoError(t, os.Mkdir(p, 0o700))
		} else {
			require.NoError(t, os.WriteFile(p, nil, 0o600))
		}
		require.NoError(t, os.Lchown(p, 1001, 1002))
		paths = append(paths, p)
		return p
	}
	for m := range uint32(0o1000) {
		p := mk(fmt.Sprintf("m%03o", m), m%2 == 0)
		require.NoError(t, syscall.Chmod(p, m))
	}
	r := rand.New(rand.NewPCG(30, 6))
	acls := 0
	for i := range 300 {
		p := mk(fmt.Sprintf("acl%03d", i), i%3 == 0)
		if err := unix.Setxattr(p, aclXattr, encodeACL(randomACL(r)), 0); err != nil {
			if i == 0 {
				t.Skipf("no POSIX ACLs here: %v", err)
			}
			require.NoError(t, err)
		}
		if a, _ := ACL(p); len(a) > 0 {
			acls++
		}
	}
	require.Greater(t, acls, 200, "most random ACLs are kept as ACLs (not folded into the mode)")

	mismatches := 0
	for _, c := range testCreds {
		kernel := kernelAnswers(t, c, paths)
		for _, p := range paths {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW, 0)
			require.NoError(t, err)
			rfd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
			require.NoError(t, err)
			var st unix.Stat_t
			require.NoError(t, unix.Fstat(fd, &st))
			acl, err := ACL(p)
			require.NoError(t, err)
			for want := uint32(1); want < 8; want++ {
				got, err := c.May(&st, acl, want)
				require.NoError(t, err)
				byPath, err := c.MayPath(p, want)
				require.NoError(t, err)
				byFd, err := c.MayFd(fd, want) // O_PATH: the ACL by /proc path
				require.NoError(t, err)
				byOpen, err := c.MayFd(rfd, want) // fgetxattr
				require.NoError(t, err)
				if got != kernel[p][want] || byPath != got || byFd != got || byOpen != got {
					mismatches++
					if mismatches < 20 {
						t.Errorf("%+v %s (mode %o, acl %x) want %d: May %v MayPath %v MayFd %v, kernel %v", c, filepath.Base(p), st.Mode, acl, want, got, byPath, byFd, kernel[p][want])
					}
				}
			}
			unix.Close(fd)
			unix.Close(rfd)
		}
	}
	assert.Zero(t, mismatches)
}

// TestMayRefusesBadACL: an ACL not in the kernel's form is an error,
// never an answer.
func TestMayRefusesBadACL(t *testing.T) {
	st := &unix.Stat_t{Mode: unix.S_IFREG | 0o674, Uid: 1, Gid: 2}
	c := Creds{UID: 3, GID: 4}
	for _, acl := range [][]byte{
		{1, 0, 0, 0},                              // version 1
		{2, 0, 0, 0, 1},                           // not whole entries
		encodeACL([]aclEntry{{0x40, 7, 0}}),       // unknown tag
		encodeACL([]aclEntry{{aclUserObj, 7, 0}}), // no ACL_OTHER
	} {
		_, err := c.May(st, acl, Read)
		assert.ErrorIs(t, err, ErrBadACL, "%x", acl)
	}
}

// TestDiffers: as root (CAP_DAC_OVERRIDE) every credential differs; on
// a thread without capabilities, this process's own credentials do not.
func TestDiffers(t *testing.T) {
	own, err := Of(nil)
	require.NoError(t, err)
	other := own
	other.UID++
	err = threadcaps.Run(nil, func() error {
		assert.False(t, Differs(own), "own credentials, no capability")
		assert.True(t, Differs(other), "another uid")
		return nil
	})
	require.NoError(t, err)
	if os.Geteuid() == 0 {
		assert.True(t, Differs(own), "root holds CAP_DAC_OVERRIDE")
	}
	c, err := Of(&syscall.Credential{Uid: 5, Gid: 6, Groups: []uint32{7}})
	require.NoError(t, err)
	assert.Equal(t, Creds{5, 6, []uint32{7}}, c)
	c, err = Of(&syscall.Credential{Uid: 5, Gid: 6, NoSetGroups: true})
	require.NoError(t, err)
	assert.Equal(t, own.Groups, c.Groups, "NoSetGroups keeps this process's groups")
}
