package explain

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/jail"
)

// TestRelate: with a seccomp UDP refusal, the resolver's configuration
// reads point to the UDP fix; without one (the control: --net host, where
// --ro is the fix) they keep --ro.
func TestRelate(t *testing.T) {
	resolv := refusal.Refusal{Layer: refusal.Landlock, Path: "/etc/resolv.conf", Right: "read_file", Rule: "outside every allowed root", Flag: "--ro /etc/resolv.conf"}
	other := refusal.Refusal{Layer: refusal.Landlock, Path: "/etc/shadow", Right: "read_file", Flag: "--ro /etc/shadow"}
	udp := refusal.Refusal{Layer: refusal.Seccomp, Right: refusal.RightSocket, Rule: "seccomp inet-non-tcp: socket(AF_INET, SOCK_DGRAM, 0) (EPERM)", Flag: "--allow-domain HOST"}

	got := Relate([]refusal.Refusal{resolv, other})
	assert.Equal(t, "--ro /etc/resolv.conf", got[0].Flag, "control: no UDP refusal")

	got = Relate([]refusal.Refusal{resolv, other, udp})
	assert.Equal(t, "--allow-domain HOST (or --allow-dns and --ro /etc/resolv.conf)", got[0].Flag)
	assert.Equal(t, "--ro /etc/shadow", got[1].Flag)
}

// TestPathCheck: the fallback's refusal (a start error wrapping a jail
// sentinel) becomes a pathcheck record with its flag; another start error
// (the control: the program does not exist) is none.
func TestPathCheck(t *testing.T) {
	err := fmt.Errorf("exec: %w", &fs.PathError{Op: "check", Path: "/srv/data", Err: jail.ErrOutsideWorkspace})
	got := PathCheck(err)
	if assert.Len(t, got, 1) {
		assert.Equal(t, refusal.PathCheck, got[0].Layer)
		assert.Equal(t, "/srv/data", got[0].Path)
		assert.Contains(t, got[0].Flag, "--ro /srv/data")
	}
	got = PathCheck(&fs.PathError{Op: "check", Path: "/opt/go/bin/go", Err: jail.ErrNotExecutable})
	if assert.Len(t, got, 1) {
		assert.Equal(t, "--rox /opt/go", got[0].Flag)
	}
	assert.Nil(t, PathCheck(&fs.PathError{Op: "fork/exec", Path: "/nope", Err: fs.ErrNotExist}))
	assert.Nil(t, PathCheck(errors.New("other")))
}
