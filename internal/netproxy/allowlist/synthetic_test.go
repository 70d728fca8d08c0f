package allowlist

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransparentPorts(t *testing.T) {
	for _, tc := range []struct {
		allow []string
		want  []uint16
	}{
		{[]string{"a.test"}, []uint16{80, 443}},
		{[]string{"a.test:22", "b.test:22", "*.c.test:8443"}, []uint16{22, 8443}},
		{[]string{"a.test:*"}, []uint16{80, 443}},
		{[]string{"192.0.2.7:5432"}, []uint16{}}, // IP entries: no name maps to them
	} {
		rules, err := ParseAllow(tc.allow)
		require.NoError(t, err)
		assert.Equal(t, tc.want, TransparentPorts(rules), "%v", tc.allow)
	}
}

// TestListsNameAndOpaquePort: the controls are the names and ports no
// entry covers.
func TestListsNameAndOpaquePort(t *testing.T) {
	rules, err := ParseAllow([]string{"a.test", "git.test:22", "any.test:*", "*.w.test", "192.0.2.7"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name          string
		listed, exact bool
	}{
		{"a.test", true, true}, {"git.test", true, true}, {"x.y.w.test", true, false},
		{"w.test", false, false}, {"b.test", false, false}, {"xa.test", false, false},
		{"192.0.2.7", false, false},
	} {
		l, e := ListsName(rules, tc.name)
		assert.Equal(t, [2]bool{tc.listed, tc.exact}, [2]bool{l, e}, tc.name)
	}
	for _, tc := range []struct {
		name string
		port uint16
		want bool
	}{
		{"git.test", 22, true}, {"any.test", 443, true}, {"any.test", 5, true},
		{"a.test", 443, false}, {"a.test", 80, false}, {"git.test", 23, false},
		{"x.w.test", 443, false}, {"b.test", 22, false},
	} {
		assert.Equal(t, tc.want, OpaquePort(rules, tc.name, tc.port), "%s:%d", tc.name, tc.port)
	}
}
