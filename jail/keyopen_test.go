package jail_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
)

// TestPathKeyScanOpensNothingElse: the key scans by path open a regular
// file only, and follow no symbolic link on the way: a directory of the
// tree swapped for a link to one outside (the command's RENAME_EXCHANGE
// while a planning walk runs) made them open a FIFO there and release its
// waiting writer, and open devices (red team round 27, R27e-5). The name
// counts as a key (fail closed). Control: a key and a plain file at
// their own paths.
func TestPathKeyScanOpensNothingElse(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	require.NoError(t, os.Mkdir(out, 0o700))
	fifo := filepath.Join(out, "k.pem")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	opened := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until a reader opens
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	t.Cleanup(func() {
		if fd, err := unix.Open(fifo, unix.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			select { // released now, unless the scan did it already
			case <-opened:
			case <-time.After(2 * time.Second):
			}
			unix.Close(fd)
		}
	})
	require.NoError(t, os.Symlink(out, filepath.Join(dir, "sub")))
	time.Sleep(50 * time.Millisecond) // the writer waits in open

	for name, scan := range map[string]func(string) bool{"PathHoldsPrivateKey": jail.PathHoldsPrivateKey, "PathHeadHoldsPrivateKey": jail.PathHeadHoldsPrivateKey} {
		assert.True(t, scan(filepath.Join(dir, "sub", "k.pem")), "%s through a link: counted as a key", name)
	}
	assert.True(t, jail.PathHoldsPrivateKey(fifo), "a FIFO by a key's name: counted as a key, unopened")
	assert.False(t, jail.PathHeadHoldsPrivateKey(fifo), "a FIFO is not examined by its head, nor opened")
	select {
	case <-opened:
		t.Fatal("the FIFO's writer was released: the scan opened it")
	case <-time.After(200 * time.Millisecond):
	}

	key := filepath.Join(dir, "id.pem")
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600))
	plain := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(plain, []byte("package main\n"), 0o600))
	assert.True(t, jail.PathHoldsPrivateKey(key), "control: a key")
	assert.False(t, jail.PathHoldsPrivateKey(plain), "control: a plain file")
	assert.False(t, jail.PathHeadHoldsPrivateKey(plain), "control: a plain file")
	assert.False(t, jail.PathHoldsPrivateKey(filepath.Join(dir, "missing")), "control: missing")
	assert.False(t, jail.PathHoldsPrivateKey(dir), "control: a directory")
	assert.False(t, jail.PathHeadHoldsPrivateKey(dir), "control: a directory")
}
