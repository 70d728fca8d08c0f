package preset

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnvFileFIFO: a FIFO in place of the go env file (made by an earlier
// confined run in a HOME it could write) is not read, and does not block
// (red team round 26, R26e-3: every later --preset go start hung).
// Control: a regular file is read.
func TestEnvFileFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "env")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan map[string]string, 1)
	go func() { done <- readEnvFile(fifo) }()
	select {
	case m := <-done:
		assert.Nil(t, m)
	case <-time.After(10 * time.Second):
		t.Fatal("readEnvFile blocked on a FIFO")
	}
	reg := filepath.Join(dir, "regular")
	require.NoError(t, os.WriteFile(reg, []byte("GOFLAGS=-mod=mod\n"), 0o644))
	assert.Equal(t, map[string]string{"GOFLAGS": "-mod=mod"}, readEnvFile(reg), "control")
}
