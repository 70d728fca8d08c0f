package refusal

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetMerges(t *testing.T) {
	var s Set
	s.Add(Refusal{Layer: View, Path: "/etc/x", Right: RightWrite, Rule: "read-only view", Flag: "--rw /etc/x", Comm: "sh", Noise: true})
	s.Add(Refusal{Layer: Seccomp, Right: RightSocket, Rule: "seccomp inet-non-tcp: UDP socket", Flag: "--allow-domain HOST"})
	s.Add(Refusal{Layer: View, Path: "/etc/x", Right: RightWrite, Rule: "read-only view", Count: 2, Comm: "cat"})
	// Another rule on the same path is another refusal (control for the merge).
	s.Add(Refusal{Layer: Landlock, Path: "/etc/x", Right: RightWrite, Rule: "outside every root"})
	got := s.List()
	require.Len(t, got, 3)
	assert.Equal(t, 3, got[0].Count)
	assert.Equal(t, "", got[0].Comm, "two programs: none named")
	assert.False(t, got[0].Noise, "one occurrence was not noise")
	assert.Equal(t, 1, got[1].Count)
	assert.Equal(t, Landlock, got[2].Layer)
}

func TestLayerText(t *testing.T) {
	for _, l := range []Layer{Landlock, View, Seccomp, Proxy, PathCheck} {
		b, err := json.Marshal(Refusal{Layer: l})
		require.NoError(t, err)
		var r Refusal
		require.NoError(t, json.Unmarshal(b, &r))
		assert.Equal(t, l, r.Layer)
	}
	_, err := Layer(0).MarshalText()
	assert.Error(t, err)
	var l Layer
	assert.Error(t, l.UnmarshalText([]byte("selinux")))
}

func TestRemedyAndTarget(t *testing.T) {
	assert.Equal(t, "not allowed by design", Refusal{ByDesign: true}.Remedy())
	assert.Equal(t, "--rw /d", Refusal{Flag: "--rw /d", ByDesign: true}.Remedy())
	assert.Equal(t, "proxy.golang.org:443", Refusal{Host: "proxy.golang.org", Port: 443}.Target())
	assert.Equal(t, "TCP port 22", Refusal{Port: 22}.Target())
}
