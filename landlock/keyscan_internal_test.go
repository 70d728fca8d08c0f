package landlock

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestKeyScanBounded (red team round 11, R11b-1): the private-key scan
// of a compile reads each file once whatever its hard links (2,000
// links to one 1 MiB-less-a-bit *.pem read 1,048,000 bytes, not 2 GB),
// and past its byte budget counts every file left as a key, unread
// (fail closed), while plain files, read by their first 16 KiB only, are
// not charged to it. Control: with the budget not reached, the same
// certificate-only file is not a key.
func TestKeyScanBounded(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	big := make([]byte, 1_048_000)
	for i := range big {
		big[i] = 'A'
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "k0.pem"), big, 0o644))
	for i := 1; i < 2000; i++ {
		require.NoError(t, os.Link(filepath.Join(root, "k0.pem"), filepath.Join(root, "k"+strconv.Itoa(i)+".pem")))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "other.pem"), []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"), 0o644))
	ws, err := jail.New(root, jail.WithDenySecrets())
	require.NoError(t, err)
	defer ws.Close()
	walk := func() map[string]bool {
		carves, err := walkCarves(ws, []string{root}, DefaultWalkLimit)
		require.NoError(t, err)
		out := map[string]bool{}
		for _, c := range carves {
			out[filepath.Base(c.path)] = true
		}
		return out
	}
	got := walk()
	assert.False(t, got["k0.pem"], "not a key")
	assert.False(t, got["other.pem"], "control: a certificate is not a key")

	k := &keyScan{}
	for i := 0; i < 2000; i++ {
		p := filepath.Join(root, "k"+strconv.Itoa(i)+".pem")
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.False(t, k.holdsKey(p, fi.Mode().Type(), jail.NarrowPrivateKey))
	}
	assert.EqualValues(t, len(big), k.bytes.Load(), "read once for all its links")

	old := maxKeyScanBytes
	maxKeyScanBytes = 1000
	defer func() { maxKeyScanBytes = old }()
	// A plain file is read by its head only, which the budget does not
	// count (red team round 12, R12-5: ordinary large trees spent it).
	plain := make([]byte, 20<<10)
	for i := range plain {
		plain[i] = 'x'
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "notes.txt"), plain, 0o644))
	got = walk()
	assert.True(t, got["other.pem"] || got["k0.pem"], "past the budget: counted as keys, unread")
	assert.False(t, got["notes.txt"], "a plain file's head read is not charged")
}
