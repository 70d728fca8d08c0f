package learn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/refusal"
)

// TestFromRefusals: the shared records of every layer become exact
// grants: the view's EROFS on a new file grants its directory, on an
// existing file that file; a by-design record (a mask) stays by design;
// noise is dropped; seccomp's socket refusals are not learnable; a proxy
// refusal is a host:port. The control: the same mask record without
// ByDesign (and no classifier) would be granted, so the record's own
// ByDesign is what keeps it out.
func TestFromRefusals(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	out, data := filepath.Join(root, "out"), filepath.Join(root, "data")
	require.NoError(t, os.MkdirAll(out, 0o755))
	require.NoError(t, os.MkdirAll(data, 0o755))
	for _, f := range []string{"data/log", "data/.env", "data/probe"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), nil, 0o644))
	}
	mask := refusal.Refusal{Layer: refusal.View, Path: filepath.Join(data, ".env"), Right: refusal.RightRead, Rule: "masked: deny pattern .env", ByDesign: true}
	rs := []refusal.Refusal{
		{Layer: refusal.View, Path: filepath.Join(out, "new.o"), Right: refusal.RightCreate, Rule: "read-only view", Flag: "--rw " + out},
		{Layer: refusal.View, Path: filepath.Join(data, "log"), Right: refusal.RightCreate, Rule: "read-only view"},
		mask,
		{Layer: refusal.Landlock, Path: filepath.Join(data, "probe"), Right: "read_file", Rule: "outside every root", Noise: true},
		{Layer: refusal.Seccomp, Right: refusal.RightSocket, Rule: "seccomp inet-non-tcp: UDP socket"},
		{Layer: refusal.Proxy, Host: "registry.example", Port: 443, Right: refusal.RightConnect, Rule: "proxy: not on the allowlist", Flag: "--allow-domain registry.example"},
		{Layer: refusal.Proxy, Host: "10.0.0.1", Port: 80, Right: refusal.RightConnect, Rule: "resolves to a private address", ByDesign: true},
		{Layer: refusal.Proxy, Host: "nx.example", Port: 443, Right: refusal.RightConnect, Rule: "proxy: name did not resolve", Flag: "--allow-domain nx.example"},
		{Layer: refusal.Landlock, Path: "/proc/PID/*", Right: "read_file", Rule: "3 paths, other processes' /proc entries"},
		{Layer: refusal.Landlock, Path: out, Right: "make_reg,make_dir", Rule: "outside every root"},
	}
	p := Decide(FromRefusals(rs, nil), nil)
	var got []string
	for _, e := range p.Add {
		got = append(got, string(e.Key)+" "+e.Value)
	}
	assert.Equal(t, []string{"rw " + filepath.Join(data, "log"), "rw " + out, "allow_domain public:registry.example:443"}, got)
	assert.Contains(t, p.Comments, `refused by design: "`+filepath.Join(data, ".env")+`" (masked: deny pattern .env)`)
	assert.Contains(t, p.Comments, `refused by design: "10.0.0.1:80" (resolves to a private address)`)
	assert.Contains(t, p.Comments, `not learned: "seccomp socket" (seccomp inet-non-tcp: UDP socket (--learn grants files and --allow-domain hosts only))`)
	for _, c := range p.Comments {
		assert.NotContains(t, c, "probe", "noise is dropped")
	}
	assert.Contains(t, p.Comments, `not learned: "nx.example:443" (proxy: name did not resolve)`)
	assert.Contains(t, p.Comments, `not learned: "/proc/PID/*" (a process's /proc entry: never granted)`)
	assert.Len(t, p.Comments, 5)

	// Control: the mask's record without ByDesign is granted.
	mask.ByDesign = false
	p = Decide(FromRefusals([]refusal.Refusal{mask}, nil), nil)
	require.Len(t, p.Add, 1)
	assert.Equal(t, filepath.Join(data, ".env"), p.Add[0].Value)
}
