package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFolios: a file just written (1 MiB and one byte, one write) is
// cached whole: every page counted, in at least one folio and at most
// one a page; an empty file has no page.
func TestFolios(t *testing.T) {
	if _, err := os.ReadFile("/proc/kpageflags"); err != nil {
		t.Skip("no /proc/kpageflags:", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("pagemap hides page frame numbers from others than root")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte{1}, 1<<20+1), 0o644))
	p, err := folios(path)
	require.NoError(t, err)
	assert.Equal(t, 257, p.pages)
	assert.Equal(t, 257, p.cached, "a file just written is in the page cache")
	assert.GreaterOrEqual(t, p.folios, 2, "the last byte's page is a folio of its own at least")
	assert.LessOrEqual(t, p.folios, p.cached)
	t.Logf("%d pages in %d folios", p.cached, p.folios)

	empty := filepath.Join(dir, "e")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	p, err = folios(empty)
	require.NoError(t, err)
	assert.Equal(t, profile{}, p)
}
