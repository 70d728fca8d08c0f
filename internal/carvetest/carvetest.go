// Package carvetest loads testdata/carveouts.toml, the one table of
// carve-out cases that every layer runs: the jail.Workspace operations,
// landjail resolve, and a Landlock-confined child. Each case is a tree, a
// policy (in the keys of a landjail --config file), one path, one access
// and the expected verdict, so the layers cannot drift apart.
package carvetest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/cliopts"
)

// Marker is in the content of every secret of the table ("@secret" and
// "@key" files); no layer may ever print it when it refuses access.
const Marker = "LANDJAIL-SECRET-MARKER"

// Verdicts, for Case.Want.
const (
	OK       = "ok"
	Denied   = "denied"
	ReadOnly = "read-only"
	// Outside: outside every root of the policy (jail.ErrOutsideWorkspace;
	// Landlock's EACCES; hidden by the namespace view's private /tmp).
	Outside = "outside"
)

// Accesses, for Case.Access.
const (
	Read   = "read"   // read the file (cat)
	Write  = "write"  // append to it, creating it if missing (>>)
	Remove = "remove" // unlink it (rm)
)

// Policy is a case's policy, in the keys of a landjail --config file. ro
// lists roots relative to the workspace; "{ws}" in read_only is replaced
// by the workspace's canonical path.
type Policy struct {
	Deny               []string `toml:"deny"`
	DenySecrets        bool     `toml:"deny_secrets"`
	ReadOnly           []string `toml:"read_only"`
	ProtectAgentConfig bool     `toml:"protect_agent_config"`
	RO                 []string `toml:"ro"`
}

// Case is one row of the table.
type Case struct {
	Name string `toml:"name"`
	// Tree is the tree spec: "d/" a directory, "f" a file holding its
	// own name, "a => b" a symlink, "f = CONTENT" a file holding
	// CONTENT, where "@secret" is a line with the Marker, "@key" a PEM
	// private key holding the Marker, "@cert" a PEM certificate, and the
	// other "@" words those of Content; "f = @fifo" makes a FIFO;
	// "f = @suid", "@sgid" and "@sgid-nox" make a program (a shell
	// script) of mode 04755, 02755 and 02745, "@caps" one of mode 0755
	// with file capabilities (cap_net_raw+ep; the case is skipped where
	// setting them is refused: not root).
	Tree   []string `toml:"tree"`
	Policy Policy   `toml:"policy"`
	Path   string   `toml:"path"`
	Access string   `toml:"access"`
	Want   string   `toml:"want"`
	// LandlockWant overrides Want for the Landlock layer, where Landlock
	// is stricter than the Workspace by design (Why says why).
	LandlockWant string `toml:"landlock_want"`
	// JailWant overrides Want for a bare jail.Workspace, which holds no
	// system preset (the entry points add it: resolve, the MCP file
	// tools, a child's Landlock rules).
	JailWant string `toml:"jail_want"`
	Why      string `toml:"why"`
}

// WantFor returns the verdict expected from layer "landlock" or any other.
func (c *Case) WantFor(layer string) string {
	if layer == "landlock" && c.LandlockWant != "" {
		return c.LandlockWant
	}
	if layer == "jail" && c.JailWant != "" {
		return c.JailWant
	}
	return c.Want
}

// Load reads the table at path (testdata/carveouts.toml).
func Load(t testing.TB, path string) []Case {
	t.Helper()
	var f struct {
		Case []Case `toml:"case"`
	}
	md, err := toml.DecodeFile(path, &f)
	require.NoError(t, err)
	require.Empty(t, md.Undecoded(), "unknown keys in %s", path)
	require.NotEmpty(t, f.Case)
	for _, c := range f.Case {
		require.Contains(t, []string{Read, Write, Remove}, c.Access, c.Name)
		require.Contains(t, []string{OK, Denied, ReadOnly, Outside}, c.Want, c.Name)
	}
	return f.Case
}

// Key is a PEM private key block holding the Marker (not a real key: the
// rule is on the block's label, RFC 7468).
const Key = "-----BEGIN PRIVATE KEY-----\n" + Marker + "\n-----END PRIVATE KEY-----\n"

// Cert is a PEM certificate block (a CA bundle entry).
const Cert = "-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n"

// OpenSSHKey is an OpenSSH private key block holding the Marker
// (ssh-keygen's format, OpenSSH PROTOCOL.key; not a real key).
const OpenSSHKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + Marker +
	"\n-----END OPENSSH PRIVATE KEY-----\n"

// PuTTYKey is a PuTTY private key file (PPK version 3, PuTTY manual
// appendix C) holding the Marker.
const PuTTYKey = "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\n" +
	"Public-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAI\nAAAA\nPrivate-Lines: 1\n" + Marker + "\nPrivate-MAC: 00\n"

// ServiceAccount is a cloud service-account key file: JSON whose
// "private_key" string holds a PEM key (with "\n" escapes), the Marker
// in it.
const ServiceAccount = `{"type": "service_account", "project_id": "p", "private_key": ` +
	`"-----BEGIN PRIVATE KEY-----\n` + Marker + `\n-----END PRIVATE KEY-----\n", "client_email": "a@p"}` + "\n"

// Prose names private keys without a key header: it is no key.
const Prose = "Deploy notes: the PRIVATE KEY lives in the vault. Never commit a private key;\n" +
	"a key file starts with its BEGIN line, which this file does not have.\n"

// BigSize is the size of the "@big" file: 5 MiB, above jail.MaxKeyScan.
const BigSize = 5 << 20

// Content returns the content the tree spec gives a file. "@big" is
// BigSize bytes of one line of deterministic noise repeated (printable,
// no key header: read_file, which shows at most 256 KiB of text, then
// shows every distinct line of it).
func Content(spec string) (name, content string) {
	name, content, ok := strings.Cut(spec, " = ")
	if !ok {
		return spec, spec + "\n"
	}
	switch content {
	case "@secret":
		return name, Marker + " " + name + "\n"
	case "@key":
		return name, Key
	case "@cert":
		return name, Cert
	case "@openssh":
		return name, OpenSSHKey
	case "@putty":
		return name, PuTTYKey
	case "@sajson":
		return name, ServiceAccount
	case "@prose":
		return name, Prose
	case "@cabundle":
		return name, strings.Repeat(Cert, 200) // about 14 KiB, certificates only
	case "@big":
		return name, big()
	case "@suid", "@sgid", "@sgid-nox", "@caps":
		return name, "#!/bin/sh\necho program\n"
	}
	return name, content + "\n"
}

// big returns BigSize bytes: a 64-byte line of xorshift noise in the
// printable range, repeated (the same every call).
var big = sync.OnceValue(func() string {
	line := make([]byte, 64)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range line[:63] {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		line[i] = '!' + byte(x%94)
	}
	line[63] = '\n'
	return strings.Repeat(string(line), BigSize/len(line))
})

// Build creates the case's tree in a fresh workspace directory and
// returns its canonical path.
func Build(t testing.TB, c *Case) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	root := filepath.Join(base, "ws")
	require.NoError(t, os.Mkdir(root, 0o755))
	for _, s := range c.Tree {
		switch {
		case strings.Contains(s, " => "):
			l, target, _ := strings.Cut(s, " => ")
			p := filepath.Join(root, l)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.Symlink(target, p))
		case strings.HasSuffix(s, "/"):
			require.NoError(t, os.MkdirAll(filepath.Join(root, s), 0o755))
		case strings.HasSuffix(s, " = @fifo"):
			p := filepath.Join(root, strings.TrimSuffix(s, " = @fifo"))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, syscall.Mkfifo(p, 0o644))
		default:
			name, content := Content(s)
			p := filepath.Join(root, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			_, word, _ := strings.Cut(s, " = ")
			if mode, ok := programs[word]; ok {
				require.NoError(t, os.Chmod(p, mode))
				if word == "@caps" {
					if err := unix.Setxattr(p, "security.capability", capNetRaw(), 0); err != nil {
						t.Skipf("setting file capabilities: %v", err)
					}
				}
			}
		}
	}
	return root
}

// programs are the tree spec's program contents and their modes.
var programs = map[string]os.FileMode{
	"@suid":     0o755 | os.ModeSetuid,
	"@sgid":     0o755 | os.ModeSetgid,
	"@sgid-nox": 0o745 | os.ModeSetgid,
	"@caps":     0o755,
}

// capNetRaw is a VFS_CAP_REVISION_2 security.capability value:
// cap_net_raw permitted and effective (linux/capability.h).
func capNetRaw() []byte {
	b := make([]byte, 20)
	binary.LittleEndian.PutUint32(b[0:], 0x02000000|1)
	binary.LittleEndian.PutUint32(b[4:], 1<<unix.CAP_NET_RAW)
	return b
}

// Options returns the case's policy as the CLI would build it.
func (p Policy) Options(root string) *cliopts.Options {
	o := &cliopts.Options{
		Workspace:          root,
		Deny:               p.Deny,
		DenySecrets:        p.DenySecrets,
		ProtectAgentConfig: p.ProtectAgentConfig,
	}
	for _, r := range p.RO {
		o.RO = append(o.RO, filepath.Join(root, r))
	}
	for _, r := range p.ReadOnly {
		o.ReadOnly = append(o.ReadOnly, strings.ReplaceAll(r, "{ws}", root))
	}
	return o
}

// Flags returns the case's policy as landjail flags.
func (p Policy) Flags(root string) []string {
	o := p.Options(root)
	args := []string{"--workspace", root}
	for _, r := range o.RO {
		args = append(args, "--ro", r)
	}
	for _, d := range o.Deny {
		args = append(args, "--deny", d)
	}
	for _, r := range o.ReadOnly {
		args = append(args, "--read-only", r)
	}
	if o.DenySecrets {
		args = append(args, "--deny-secrets")
	}
	if o.ProtectAgentConfig {
		args = append(args, "--protect-agent-config")
	}
	return args
}

// HostPath is the case's path on the host: Path itself when absolute (a
// system file), else below root.
func HostPath(root string, c *Case) string {
	if filepath.IsAbs(c.Path) {
		return c.Path
	}
	return filepath.Join(root, c.Path)
}

// Expected returns the content a successful read of the case's path
// returns, following symlinks in the tree spec ("" if unknown); for an
// absolute path, the host file's content.
func Expected(c *Case) string {
	if filepath.IsAbs(c.Path) {
		b, _ := os.ReadFile(c.Path)
		return string(b)
	}
	want := c.Path
	for range 8 {
		for _, s := range c.Tree {
			if l, t, ok := strings.Cut(s, " => "); ok && l == want {
				want = filepath.Clean(filepath.Join(filepath.Dir(l), t))
			}
		}
	}
	for _, s := range c.Tree {
		if name, content := Content(s); name == want && !strings.Contains(s, " => ") {
			return content
		}
	}
	return ""
}
