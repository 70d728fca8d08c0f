package gitignore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpen: which rules can still match below a path. Each row's
// pattern is checked against the path; a false row is the control of
// the true one above it (the same pattern, a path it cannot continue).
func TestOpen(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"config/*/secret.txt", "config/prod", true},
		{"config/*/secret.txt", "config/prod/x", false},
		{"config/*/secret.txt", "other", false},
		{"config/**/secret.txt", "config/a/b/c", true},
		{"config/**/secret.txt", "conf/a", false},
		{"**/x/**/secret.txt", "anything/at/all", true},
		{"**/.kube/config", "a/.kube", false}, // a tail rule: TailState's
		{"*.pem", "a", false},
		{"a/b", "", true},
		{"config/prod/", "config.bak", true}, // with the copy's spelling
	} {
		m, err := New("", []string{c.pattern})
		require.NoError(t, err)
		var parts []string
		if c.path != "" {
			parts = strings.Split(c.path, "/")
		}
		alts := func(s string) []string { return []string{strings.TrimSuffix(s, ".bak")} }
		assert.Equal(t, c.want, m.Open(parts, alts), "%s below %q", c.pattern, c.path)
	}
}

// TestTailState: paths that begin the same matches of a tail rule have
// the same state, others not; a copy's spelling counts once.
func TestTailState(t *testing.T) {
	m, err := New("", []string{"**/.config/gh/hosts.yml", "**/x"})
	require.NoError(t, err)
	alts := func(s string) []string { return []string{strings.TrimSuffix(s, ".bak")} }
	state := func(p string) string { return string(m.TailState(nil, strings.Split(p, "/"), alts)) }
	assert.Equal(t, state("a/l17"), state("b/c/l18"), "neither begins a match")
	assert.Equal(t, state("a/.config"), state("b/c/.config"))
	assert.NotEqual(t, state("a/.config"), state("a/l17"))
	assert.NotEqual(t, state("a/.config/gh"), state("a/.config"))
	assert.NotEqual(t, state("a/.config.bak/gh"), state("a/.config/gh"), "begun through a copy's spelling only")
	assert.NotEqual(t, state("a/.config.bak/gh"), state("a/l17/gh"))
	assert.Equal(t, state("a/.config.bak/gh.bak"), state("a/l17"), "two spellings: no copy of a copy of two names")
}
