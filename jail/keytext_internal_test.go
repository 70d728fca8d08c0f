package jail

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestBase64PEMKey (red team round 20, R20b-9): a PEM private key encoded
// in base64 from its first byte (a Kubernetes Secret's tls.key, a Helm
// value) is a key; controls: a base64 certificate, the prefix alone, a
// key encoded from another offset (not found: README says so).
func TestBase64PEMKey(t *testing.T) {
	enc := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + strings.Repeat("x", 200) + "\n-----END RSA PRIVATE KEY-----\n"
	for _, c := range []struct {
		text string
		want bool
	}{
		{"apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.crt: " + enc("-----BEGIN CERTIFICATE-----\nMIID\n-----END CERTIFICATE-----\n") + "\n  tls.key: " + enc(key) + "\n", true},
		{"key: " + enc("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"), true},
		{"key: " + enc("-----BEGIN PRIVATE KEY-----\n"), true},
		{"tls.crt: " + enc("-----BEGIN CERTIFICATE-----\nMIID\n-----END CERTIFICATE-----\n"), false},
		{"LS0tLS1CRUdJTi", false},
		{"x: " + enc("x"+key), false},
	} {
		assert.Equal(t, c.want, keyText([]byte(c.text)), c.text[:min(len(c.text), 60)])
	}
}
