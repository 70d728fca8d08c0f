package jail

import (
	"bytes"
	"testing"
)

// FuzzKeyText: keyText never panics, and a key header put anywhere into
// arbitrary text is found (PEM and ssh.com anywhere, PuTTY at the start
// of a line), so no prefix or suffix can hide a header that lies in the
// examined bytes. The seeds are the shapes of TestHeadHoldsPrivateKey.
func FuzzKeyText(f *testing.F) {
	for _, s := range []string{"", "x", "-----BEGIN ", "-----BEGIN CERTIFICATE-----\n", "PuTTY-User-Key-File-", "\r\n", "-----"} {
		for which := range uint8(5) {
			f.Add([]byte(s), []byte(s), which)
		}
	}
	headers := [][]byte{
		[]byte("-----BEGIN OPENSSH PRIVATE KEY-----"),
		[]byte("-----BEGIN PRIVATE KEY-----"),
		[]byte("-----BEGIN PGP PRIVATE KEY BLOCK-----"),
		[]byte("\nPuTTY-User-Key-File-3:"),
		[]byte("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"),
	}
	f.Fuzz(func(t *testing.T, prefix, suffix []byte, which uint8) {
		_ = keyText(prefix)
		h := headers[int(which)%len(headers)]
		b := bytes.Join([][]byte{prefix, h, suffix}, nil)
		if !keyText(b) {
			t.Fatalf("header %q not found in %q", h, b)
		}
	})
}
