package landlock

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUnder: whole components only; "/" holds every absolute path.
func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, dir, rest string
		ok           bool
	}{
		{"/w/ws/.env", "/w/ws", ".env", true},
		{"/w/ws", "/w/ws", "", true},
		{"/w/wsx/.env", "/w/ws", "", false},
		{"/w/ws/.env", "/", "w/ws/.env", true},
	} {
		rest, ok := under(c.p, c.dir)
		assert.Equal(t, c.ok, ok, "%s in %s", c.p, c.dir)
		assert.Equal(t, c.rest, rest, "%s in %s", c.p, c.dir)
	}
}

// TestLiteralPattern: gitignore escapes name one literal path; an
// unescaped wildcard or a re-include does not (R23c-6).
func TestLiteralPattern(t *testing.T) {
	for _, c := range []struct {
		in, out string
		ok      bool
	}{
		{"/etc/pip.conf", "/etc/pip.conf", true},
		{`/opt/app/creds\[prod\].txt`, "/opt/app/creds[prod].txt", true},
		{`/opt/app/\#notes`, "/opt/app/#notes", true},
		{"/opt/app/{prod}.json", "/opt/app/{prod}.json", true},
		{`/opt/a\\b`, `/opt/a\b`, true},
		{"/opt/*.json", "", false},
		{"/opt/creds[ab].txt", "", false},
		{"/opt/x?", "", false},
		{"!/opt/x", "", false},
		{`/opt/x\`, "", false},
	} {
		out, ok := literalPattern(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.out, out, c.in)
	}
}
