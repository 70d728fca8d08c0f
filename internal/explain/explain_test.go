package explain

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/refusal"
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
