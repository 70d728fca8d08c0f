package regfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestOpenRegularOnly: a regular file opens (directly and through a
// link when follow is set); a FIFO is never opened: a writer blocked on
// it stays blocked (a plain open for reading releases it, the control);
// a directory, a device and a link with follow unset are ErrNotRegular.
func TestOpenRegularOnly(t *testing.T) {
	dir := t.TempDir()
	reg := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(reg, []byte("hello"), 0o644))
	require.NoError(t, os.Symlink(reg, filepath.Join(dir, "l")))
	for _, follow := range []bool{true, false} {
		f, err := Open(reg, follow)
		require.NoError(t, err)
		b, _ := io.ReadAll(f)
		f.Close()
		assert.Equal(t, "hello", string(b))
	}
	f, err := Open(filepath.Join(dir, "l"), true)
	require.NoError(t, err)
	f.Close()
	_, err = Open(filepath.Join(dir, "l"), false)
	assert.ErrorIs(t, err, ErrNotRegular)
	for _, p := range []string{dir, "/dev/null"} {
		_, err := Open(p, true)
		assert.ErrorIs(t, err, ErrNotRegular, p)
	}

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	released := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until a reader opens
		if err == nil {
			w.Close()
		}
		released <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_, err = Open(fifo, true)
	assert.ErrorIs(t, err, ErrNotRegular)
	select {
	case <-released:
		t.Fatal("the FIFO's writer was released: Open opened it")
	case <-time.After(200 * time.Millisecond):
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0) // control
	require.NoError(t, err)
	defer r.Close()
	select {
	case err := <-released:
		assert.NoError(t, err, "control: a plain open releases the writer")
	case <-time.After(5 * time.Second):
		t.Fatal("control: the writer was not released")
	}
	assert.False(t, errors.Is(err, ErrNotRegular))
}
