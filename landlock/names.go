package landlock

import (
	"fmt"
	"strconv"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// The names of Landlock rights and scopes, keyed by go-landlock's typed
// bits (landlock/syscall), spelt as go-landlock's String methods and the
// kernel's LANDLOCK_ACCESS_FS_*, LANDLOCK_ACCESS_NET_* and LANDLOCK_SCOPE_*
// flags (lower case, without the prefix). Kept here rather than parsed
// from go-landlock's display strings; TestNamesMatchGoLandlock checks
// both agree.
var (
	fsRightNames = []named[golandlock.AccessFSSet]{
		{ll.AccessFSExecute, "execute"},
		{ll.AccessFSWriteFile, "write_file"},
		{ll.AccessFSReadFile, "read_file"},
		{ll.AccessFSReadDir, "read_dir"},
		{ll.AccessFSRemoveDir, "remove_dir"},
		{ll.AccessFSRemoveFile, "remove_file"},
		{ll.AccessFSMakeChar, "make_char"},
		{ll.AccessFSMakeDir, "make_dir"},
		{ll.AccessFSMakeReg, "make_reg"},
		{ll.AccessFSMakeSock, "make_sock"},
		{ll.AccessFSMakeFifo, "make_fifo"},
		{ll.AccessFSMakeBlock, "make_block"},
		{ll.AccessFSMakeSym, "make_sym"},
		{ll.AccessFSRefer, "refer"},
		{ll.AccessFSTruncate, "truncate"},
		{ll.AccessFSIoctlDev, "ioctl_dev"},
		{ll.AccessFSResolveUnix, "resolve_unix"},
	}
	netRightNames = []named[golandlock.AccessNetSet]{
		{ll.AccessNetBindTCP, "bind_tcp"},
		{ll.AccessNetConnectTCP, "connect_tcp"},
		{ll.AccessNetBindUDP, "bind_udp"},
		{ll.AccessNetConnectSendUDP, "connect_send_udp"},
	}
	scopeNames = []named[golandlock.ScopedSet]{
		{ll.ScopeAbstractUnixSocket, "abstract_unix_socket"},
		{ll.ScopeSignal, "signal"},
	}
)

type named[T ~uint64] struct {
	bit  T
	name string
}

// namesOf returns the names of the bits of set, lowest bit first; a bit
// the table lacks is named "1<<N", as go-landlock does. Never nil.
func namesOf[T ~uint64](set T, table []named[T]) []string {
	out := []string{}
	for i := range 64 {
		bit := T(1) << i
		if set&bit == 0 {
			continue
		}
		name := ""
		for _, n := range table {
			if n.bit == bit {
				name = n.name
				break
			}
		}
		if name == "" {
			name = "1<<" + strconv.Itoa(i)
		}
		out = append(out, name)
	}
	return out
}

// nameOf is the name of a single bit.
func nameOf[T ~uint64](bit T, table []named[T]) string {
	if n := namesOf(bit, table); len(n) == 1 {
		return n[0]
	}
	return fmt.Sprintf("%#x", uint64(bit)) // not a single bit: cannot happen for callers in this package
}

// accessNames returns the names of the filesystem rights in a.
func accessNames(a golandlock.AccessFSSet) []string { return namesOf(a, fsRightNames) }
