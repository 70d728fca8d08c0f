package denials

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Records captured on this machine (Linux 6.18, Landlock ABI 7) by
// TestCollectorLive, as received on AUDIT_NLGRP_READLOG.
const (
	recAccessHex = `audit(1795466677.679:10): domain=1a4e0f612 blockers=fs.read_file path=2F746D702F54657374436F6C6C6563746F724C697665656E61626C65643D303931363934313634332F3030312F7365637265742066696C6520227822 dev="vda" ino=10111301`
	recAlloc     = `audit(1795466677.679:10): domain=1a4e0f612 status=allocated mode=enforcing pid=959 uid=0 exe="/tmp/go-build2417666164/b001/denials.test" comm="denials.test"`
	recSyscall   = `audit(1795466677.679:10): arch=c000003e syscall=257 success=no exit=-13 a0=ffffffffffffff9c a1=3a785e360140 a2=80000 a3=0 items=0 ppid=959 pid=975 auid=4294967295 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=(none) ses=4294967295 comm="denials.test" exe="/tmp/go-build2417666164/b001/denials.test" key=(null)`
	recNet       = `audit(1795466677.679:11): domain=1a4e0f612 blockers=net.connect_tcp daddr=127.0.0.1 dest=33115`
	recDealloc   = `audit(1795466677.723:12): domain=1a4e0f612 status=deallocated denials=2`
	// From Documentation/admin-guide/LSM/landlock.rst.
	recDocRefer = `audit(1729738800.268:30): domain=1a6fdc66f blockers=fs.refer path="/usr/bin" dev="vda2" ino=351`
)

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name   string
		typ    uint16
		text   string
		serial uint64
		want   map[string]string
	}{
		{"hex path with space and quote", TypeLandlockAccess, recAccessHex, 10, map[string]string{
			"domain": "1a4e0f612", "blockers": "fs.read_file", "dev": "vda", "ino": "10111301",
			"path": `/tmp/TestCollectorLiveenabled=0916941643/001/secret file "x"`}},
		{"quoted path", TypeLandlockAccess, recDocRefer, 30, map[string]string{
			"domain": "1a6fdc66f", "blockers": "fs.refer", "path": "/usr/bin", "dev": "vda2", "ino": "351"}},
		{"net", TypeLandlockAccess, recNet, 11, map[string]string{
			"domain": "1a4e0f612", "blockers": "net.connect_tcp", "daddr": "127.0.0.1", "dest": "33115"}},
		{"allocated", TypeLandlockDomain, recAlloc, 10, map[string]string{
			"domain": "1a4e0f612", "status": "allocated", "mode": "enforcing", "pid": "959", "uid": "0",
			"exe": "/tmp/go-build2417666164/b001/denials.test", "comm": "denials.test"}},
		{"deallocated, trailing NUL", TypeLandlockDomain, recDealloc + "\x00", 12, map[string]string{
			"domain": "1a4e0f612", "status": "deallocated", "denials": "2"}},
		// domain is hex-looking but not an untrusted string: never decoded.
		{"hex-looking domain kept", TypeLandlockAccess, `audit(1.2:3): domain=4142 blockers=fs.execute path=2F61`, 3, map[string]string{
			"domain": "4142", "blockers": "fs.execute", "path": "/a"}},
		// an odd-length or non-hex unquoted path stays as is
		{"not hex", TypeLandlockAccess, `audit(1.2:3): path=2F6 comm=(null)`, 3, map[string]string{"path": "2F6", "comm": "(null)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseRecord(tt.typ, tt.text)
			require.NoError(t, err)
			assert.Equal(t, tt.serial, r.Serial)
			assert.Equal(t, tt.typ, r.Type)
			assert.Equal(t, tt.want, r.Fields)
			assert.Len(t, r.Order, len(tt.want))
		})
	}
	sys, err := ParseRecord(typeSyscall, recSyscall)
	require.NoError(t, err)
	assert.Equal(t, "975", sys.Fields["pid"])
	assert.Equal(t, "(null)", sys.Fields["key"])
}

func TestParseRecordMalformed(t *testing.T) {
	for _, text := range []string{
		"",
		"domain=1 blockers=fs.read_file",        // no header
		"audit(1.2): domain=1",                  // no serial
		"audit(1.2:x): domain=1",                // serial not a number
		"audit(1.2:3) domain=1",                 // header not terminated
		`audit(1.2:3): path="/unterminated`,     // open quote
		"audit(1.2:3): domain=1 stray blockers", // field without '='
	} {
		_, err := ParseRecord(TypeLandlockAccess, text)
		assert.ErrorIs(t, err, ErrMalformed, "%q", text)
	}
}

func parseAll(t *testing.T, recs ...struct {
	typ  uint16
	text string
}) []Record {
	t.Helper()
	var out []Record
	for _, r := range recs {
		p, err := ParseRecord(r.typ, r.text)
		require.NoError(t, err)
		out = append(out, p)
	}
	return out
}

type raw = struct {
	typ  uint16
	text string
}

func TestDedup(t *testing.T) {
	foreignAlloc := `audit(5.0:20): domain=bbb status=allocated mode=enforcing pid=4242 uid=0 exe="/x" comm="x"`
	foreignAccess := `audit(5.0:20): domain=bbb blockers=fs.read_file path="/etc/shadow" dev="vda" ino=7`
	recs := parseAll(t,
		raw{TypeLandlockAccess, recAccessHex}, raw{TypeLandlockDomain, recAlloc}, raw{typeSyscall, recSyscall},
		raw{TypeLandlockAccess, recNet},
		// the same port again in a later event: counted, not repeated
		raw{TypeLandlockAccess, `audit(1795466677.690:13): domain=1a4e0f612 blockers=net.connect_tcp daddr=127.0.0.1 dest=33115`},
		raw{TypeLandlockDomain, recDealloc},
		// an access record arriving before its allocation record
		raw{TypeLandlockAccess, foreignAccess}, raw{TypeLandlockDomain, foreignAlloc},
		// a domain whose allocation was never seen
		raw{TypeLandlockAccess, `audit(6.0:30): domain=ccc blockers=fs.make_reg path="/tmp/y" dev="vda" ino=8`},
	)
	tests := []struct {
		name   string
		filter Filter
		want   []Denial
	}{
		{"ours only", Filter{CreatorPIDs: []int{959}}, []Denial{
			{Domain: "1a4e0f612", Blockers: []string{"fs.read_file"}, Path: `/tmp/TestCollectorLiveenabled=0916941643/001/secret file "x"`,
				Dev: "vda", Ino: 10111301, PID: 975, Comm: "denials.test", Exe: "/tmp/go-build2417666164/b001/denials.test", Count: 1},
			{Domain: "1a4e0f612", Blockers: []string{"net.connect_tcp"}, Addr: "127.0.0.1", Port: 33115, Count: 2},
		}},
		{"foreign creator only", Filter{CreatorPIDs: []int{4242}}, []Denial{
			{Domain: "bbb", Blockers: []string{"fs.read_file"}, Path: "/etc/shadow", Dev: "vda", Ino: 7, Count: 1},
		}},
		{"nobody's", Filter{CreatorPIDs: []int{1}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Dedup(recs, tt.filter))
		})
	}
	all := Dedup(recs, Filter{})
	assert.Len(t, all, 4, "no filter: every domain, including the unattributed one")
}

func TestBlocker(t *testing.T) {
	tests := []struct {
		name, right string
		abi         int
	}{
		{"fs.read_file", "LANDLOCK_ACCESS_FS_READ_FILE", 1},
		{"fs.write_file", "LANDLOCK_ACCESS_FS_WRITE_FILE", 1},
		{"fs.make_reg", "LANDLOCK_ACCESS_FS_MAKE_REG", 1},
		{"fs.execute", "LANDLOCK_ACCESS_FS_EXECUTE", 1},
		{"fs.refer", "LANDLOCK_ACCESS_FS_REFER", 2},
		{"fs.truncate", "LANDLOCK_ACCESS_FS_TRUNCATE", 3},
		{"net.connect_tcp", "LANDLOCK_ACCESS_NET_CONNECT_TCP", 4},
		{"net.bind_tcp", "LANDLOCK_ACCESS_NET_BIND_TCP", 4},
		{"fs.ioctl_dev", "LANDLOCK_ACCESS_FS_IOCTL_DEV", 5},
		{"scope.signal", "LANDLOCK_SCOPE_SIGNAL", 6},
		{"scope.abstract_unix_socket", "LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET", 6},
		{"fs.change_topology", "", 1},
	}
	for _, tt := range tests {
		info, ok := Blocker(tt.name)
		require.True(t, ok, tt.name)
		assert.Equal(t, tt.right, info.Right, tt.name)
		assert.Equal(t, tt.abi, info.ABI, tt.name)
		assert.NotEmpty(t, info.Sentence, tt.name)
	}
	_, ok := Blocker("fs.future_right")
	assert.False(t, ok)
}
