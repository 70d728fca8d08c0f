// Package dac decides what another set of credentials may do to a file
// under the kernel's discretionary access control: the owner, group and
// other mode bits and the POSIX access ACL, exactly as the kernel's
// generic_permission(9) decides them for a task that holds no
// capability (fs/namei.c acl_permission_check, fs/posix_acl.c
// posix_acl_permission; acl(5)).
//
// landjail plans a command's view with its own credentials, which as
// root hold CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, while the command
// holds no capability and may run as another user (--user). A planning
// walk that listed another user's 0700 directory and read the head of
// its files named them in the command's view (a mask by path in its
// /proc/self/mountinfo) and in the file tools' verdicts: an oracle of
// the existence of private files and of which hold a private key (red
// team round 30, R30d-6). The walk asks this package what the command
// may list and read, and treats the rest as the command sees it:
// unreadable.
//
// What it does not see: other permission models (NFSv4 or FUSE
// permission checks in the file system itself, LSMs). There the answer
// is the mode bits' and ACL's; a file system that refuses more makes the
// command see less than the walk examined, never more.
package dac

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Access bits, as access(2)'s R_OK, W_OK, X_OK (and the kernel's
// MAY_READ, MAY_WRITE, MAY_EXEC).
const (
	Read  = unix.R_OK
	Write = unix.W_OK
	Exec  = unix.X_OK
)

// Creds are the credentials a permission check is made for: the file
// system uid and gid and the supplementary groups (credentials(7)). The
// holder is taken to have no capability.
type Creds struct {
	UID, GID uint32
	Groups   []uint32
}

// Of returns the credentials a command started with cred runs with
// (exec.Cmd.Credential, syscall.SysProcAttr.Credential): cred's uid,
// gid and groups (this process's groups when cred.NoSetGroups), or,
// for nil, this process's effective uid, gid and groups. Errors:
// getgroups(2)'s.
func Of(cred *syscall.Credential) (Creds, error) {
	if cred != nil && !cred.NoSetGroups {
		return Creds{UID: cred.Uid, GID: cred.Gid, Groups: slices.Clone(cred.Groups)}, nil
	}
	gs, err := unix.Getgroups()
	if err != nil {
		return Creds{}, fmt.Errorf("dac: getgroups: %w", err)
	}
	c := Creds{UID: uint32(unix.Geteuid()), GID: uint32(unix.Getegid())}
	if cred != nil {
		c.UID, c.GID = cred.Uid, cred.Gid
	}
	for _, g := range gs {
		c.Groups = append(c.Groups, uint32(g))
	}
	return c, nil
}

// Differs reports whether this process's own permission checks can give
// another answer than c's: it holds CAP_DAC_OVERRIDE or
// CAP_DAC_READ_SEARCH in its effective set (root), or its effective uid,
// gid or groups are not c's. When it does not, what this process can
// open is what c can (and a walk needs no question of this package).
// An error of capget(2) counts as a difference (the caller then checks).
func Differs(c Creds) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return true
	}
	for _, cp := range []int{unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH} {
		if data[cp/32].Effective&(1<<(cp%32)) != 0 {
			return true
		}
	}
	own, err := Of(nil)
	if err != nil {
		return true
	}
	if own.UID != c.UID || own.GID != c.GID || len(own.Groups) != len(c.Groups) {
		return true
	}
	for _, g := range own.Groups {
		if !slices.Contains(c.Groups, g) {
			return true
		}
	}
	return false
}

// inGroup reports whether gid is c's gid or one of its groups
// (in_group_p(9)).
func (c Creds) inGroup(gid uint32) bool {
	return gid == c.GID || slices.Contains(c.Groups, gid)
}

// ACL tags and the xattr version of system.posix_acl_access
// (include/uapi/linux/posix_acl.h, posix_acl_xattr.h).
const (
	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
	aclVersion  = 2
	aclXattr    = "system.posix_acl_access"
)

// ErrBadACL is returned for an access ACL that is not in the kernel's
// xattr form (version 2, 8-byte entries, an ACL_OTHER entry reached).
var ErrBadACL = errors.New("dac: malformed POSIX ACL")

// May reports whether c may access a file whose lstat(2) or fstat(2) is
// st, with acl its system.posix_acl_access xattr (nil or empty: none),
// for want (an OR of Read, Write, Exec), as generic_permission(9)
// decides for a task without capabilities: the owner's mode bits when
// c's uid owns it (an ACL does not matter then), the ACL when it has
// one and the group bits are not zero, else the group bits when c is in
// the file's group and they differ from the other bits, else the other
// bits. Errors: ErrBadACL (the caller fails closed).
func (c Creds) May(st *unix.Stat_t, acl []byte, want uint32) (bool, error) {
	want &= 7
	mode := st.Mode
	if st.Uid == c.UID {
		return want&^((mode>>6)&7) == 0, nil
	}
	if len(acl) > 0 && mode&0o070 != 0 {
		return c.mayACL(st, acl, want)
	}
	if want&(mode^(mode>>3)) != 0 && c.inGroup(st.Gid) {
		mode >>= 3
	}
	return want&^(mode&7) == 0, nil
}

// mayACL is posix_acl_permission (fs/posix_acl.c) for c.
func (c Creds) mayACL(st *unix.Stat_t, acl []byte, want uint32) (bool, error) {
	if len(acl) < 4 || (len(acl)-4)%8 != 0 || binary.LittleEndian.Uint32(acl) != aclVersion {
		return false, ErrBadACL
	}
	type entry struct {
		tag, perm uint16
		id        uint32
	}
	var es []entry
	for b := acl[4:]; len(b) >= 8; b = b[8:] {
		es = append(es, entry{binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]), binary.LittleEndian.Uint32(b[4:])})
	}
	grants := func(perm uint16) bool { return want&^uint32(perm&7) == 0 }
	masked := func(i int) bool { // the label "mask" of posix_acl_permission
		for _, m := range es[i+1:] {
			if m.tag == aclMask {
				return grants(es[i].perm & m.perm)
			}
		}
		return grants(es[i].perm)
	}
	found := false
	for i, e := range es {
		switch e.tag {
		case aclUserObj:
			if st.Uid == c.UID {
				return grants(e.perm), nil
			}
		case aclUser:
			if e.id == c.UID {
				return masked(i), nil
			}
		case aclGroupObj, aclGroup:
			g := e.id
			if e.tag == aclGroupObj {
				g = st.Gid
			}
			if c.inGroup(g) {
				found = true
				if grants(e.perm) {
					return masked(i), nil
				}
			}
		case aclMask:
		case aclOther:
			if found {
				return false, nil
			}
			return grants(e.perm), nil
		default:
			return false, ErrBadACL
		}
	}
	return false, ErrBadACL
}

// ACL returns the access ACL of the file at path (system.posix_acl_access
// read with getxattr(2), which follows a final symbolic link: pass
// /proc/self/fd/N of an O_PATH descriptor to read that file's), or nil
// when it has none (ENODATA, or a file system without xattrs). Errors:
// getxattr(2)'s other errors.
func ACL(path string) ([]byte, error) {
	return readACL(func(b []byte) (int, error) { return unix.Getxattr(path, aclXattr, b) }, path)
}

// readACL reads an access ACL with get (getxattr, lgetxattr or
// fgetxattr into the buffer given): nil when there is none. The first
// try uses a buffer on the stack, so a file without an ACL (nearly all)
// costs no allocation. what names the file in an error.
func readACL(get func([]byte) (int, error), what string) ([]byte, error) {
	var small [128]byte
	buf := small[:]
	for {
		n, err := get(buf)
		switch {
		case err == nil:
			return append([]byte(nil), buf[:n]...), nil
		case errors.Is(err, unix.ENODATA), errors.Is(err, unix.EOPNOTSUPP):
			return nil, nil
		case errors.Is(err, unix.ERANGE) && len(buf) < 1<<20:
			buf = make([]byte, len(buf)*8)
		default:
			return nil, &os.PathError{Op: "getxattr", Path: what, Err: err}
		}
	}
}

// MayFd is May for the file open as fd: its fstat(2) and its ACL
// (fgetxattr(2); for an O_PATH descriptor, which fgetxattr refuses,
// getxattr of /proc/self/fd/fd), so the answer is about that inode
// whatever its names do meanwhile. Errors: fstat's, the ACL read's,
// ErrBadACL (the caller fails closed).
func (c Creds) MayFd(fd int, want uint32) (bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	if !c.needsACL(&st) {
		return c.May(&st, nil, want)
	}
	acl, err := readACL(func(b []byte) (int, error) { return unix.Fgetxattr(fd, aclXattr, b) }, "fd")
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Err == unix.EBADF {
		acl, err = ACL("/proc/self/fd/" + strconv.Itoa(fd))
	}
	if err != nil {
		return false, err
	}
	return c.May(&st, acl, want)
}

// needsACL reports whether May's answer for st can depend on an ACL:
// not when c owns the file (its owner bits decide) nor when the group
// bits are zero (the kernel then consults no ACL: acl_permission_check).
func (c Creds) needsACL(st *unix.Stat_t) bool {
	return st.Uid != c.UID && st.Mode&0o070 != 0
}

// MayPath is May for the file at path, not following a final symbolic
// link (lstat(2) and lgetxattr(2); a link is answered yes: the kernel
// checks no permission on a link itself). It answers for the file at that moment: a caller that must
// not be raced opens an O_PATH descriptor and asks MayFd. Errors:
// lstat's, ACL's, ErrBadACL.
func (c Creds) MayPath(path string, want uint32) (bool, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return false, &os.PathError{Op: "lstat", Path: path, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return true, nil
	}
	if !c.needsACL(&st) {
		return c.May(&st, nil, want)
	}
	acl, err := readACL(func(b []byte) (int, error) { return unix.Lgetxattr(path, aclXattr, b) }, path)
	if err != nil {
		return false, err
	}
	return c.May(&st, acl, want)
}
