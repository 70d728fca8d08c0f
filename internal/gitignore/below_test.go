package gitignore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestState: paths that reached the same positions of the rules that are
// not tail rules have the same state, others not; a copy's spelling
// counts once; past an anchored rule's end nothing is left to tell.
func TestState(t *testing.T) {
	m, err := New("", []string{"config/*/secret.txt", "config/**/prod/x", "a/b"})
	require.NoError(t, err)
	alts := func(s string) []string { return []string{strings.TrimSuffix(s, ".bak")} }
	state := func(p string) string { return string(m.State(nil, strings.Split(p, "/"), alts)) }
	assert.Equal(t, state("config/l1/l2/l3"), state("config/l1/l2/l3/l4/l5"), "config/** reached, and past config/*/secret.txt")
	assert.NotEqual(t, state("config/l1"), state("config/l1/l2"), "config/*/ then secret.txt still open")
	assert.NotEqual(t, state("config/l1/prod"), state("config/l1/l2"), "prod begun")
	assert.NotEqual(t, state("config.bak/l1"), state("other/l1"), "config.bak spells config")
	assert.NotEqual(t, state("config.bak/l1"), state("config/l1"), "through a copy's spelling only")
	assert.Equal(t, state("x/y"), state("x/y/z"), "no rule begun")
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
