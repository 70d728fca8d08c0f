package rawread

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFile: a file read whole past its first buffer (10,000 bytes from
// 16), nil past max, nil for a missing file; an empty file is empty.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789"), 1000)
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, big, 0o644); err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, big, File(p, 16, 1<<20))
	assert.Nil(t, File(p, 16, 4096), "more than max")
	assert.Nil(t, File(filepath.Join(dir, "missing"), 16, 1<<20))
	empty := filepath.Join(dir, "e")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	assert.Empty(t, File(empty, 16, 1<<20))
	assert.NotNil(t, File(empty, 16, 1<<20))
}
