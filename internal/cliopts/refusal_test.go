package cliopts

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFormatRefusal: one line per refusal; IPv6 hosts bracketed; a
// refusal without a port (an origin-form request that was not a proxy
// request) names the host as the request gave it, not "[host]:0".
func TestFormatRefusal(t *testing.T) {
	for _, tc := range []struct {
		r    Refusal
		want string
	}{
		{Refusal{Host: "evil.example", Port: 443, Count: 1, Reason: "not on the allowlist"}, "proxy refused evil.example:443 1 time (not on the allowlist)"},
		{Refusal{Host: "2001:db8::1", Port: 80, Count: 3, Reason: "IP literal not on the allowlist"}, "proxy refused [2001:db8::1]:80 3 times (IP literal not on the allowlist)"},
		{Refusal{Host: "127.0.0.1:18091", Count: 1, Reason: "not a proxy request"}, "proxy refused 127.0.0.1:18091 1 time (not a proxy request)"},
		{Refusal{Host: "", Count: 2, Reason: "bad host"}, "proxy refused (no host) 2 times (bad host)"},
	} {
		assert.Equal(t, tc.want, FormatRefusal(tc.r))
	}
}
