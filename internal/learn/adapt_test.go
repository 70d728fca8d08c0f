package learn

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/jail"
)

const testKey = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"

// TestPolicyClassifier classifies Landlock denials against a real policy
// built by cliopts (the run's): each protection is by design, an access
// outside every root or above a root's mode is learnable. The probe is
// what finds a private key outside every root (a --ro file would bypass
// the jail policy): the control without it calls that file learnable.
func TestPolicyClassifier(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	for _, d := range []string{"ws/.git/hooks", "ws/docs", "ws/src", "ro", "out", "outside"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := map[string]string{
		"ws/.env": "A=1\n", "ws/.git/config": "", "ws/docs/a.md": "", "ro/tool": "",
		"outside/input": "data\n", "outside/notes.txt": testKey, "outside/.env": "B=2\n",
	}
	for f, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte(data), 0o644))
	}
	o := &cliopts.Options{Workspace: ws, DenySecrets: true, ProtectAgentConfig: true,
		ReadOnly: []string{"docs/"}, RO: []string{filepath.Join(root, "ro")}}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()
	probe := func(dir string) (*jail.Workspace, error) { return o.Policy(jail.WithAllowed(dir, jail.ReadOnly)) }
	c := PolicyClassifier{WS: pw, Probe: probe}

	p := func(s string) string { return filepath.Join(root, s) }
	ds := []denials.Denial{
		{Blockers: []string{"fs.read_file"}, Path: p("ws/.env")},
		{Blockers: []string{"fs.write_file", "fs.truncate"}, Path: p("ws/.git/config")},
		{Blockers: []string{"fs.make_reg"}, Path: p("ws/.git/hooks")},
		{Blockers: []string{"fs.make_reg"}, Path: p("ws/docs")},
		{Blockers: []string{"fs.make_reg"}, Path: p("ws/src")}, // allowed by the policy: a frozen directory
		{Blockers: []string{"fs.write_file"}, Path: p("ro/tool")},
		{Blockers: []string{"fs.execute"}, Path: p("ro/tool")},
		{Blockers: []string{"fs.read_file"}, Path: p("outside/input")},
		{Blockers: []string{"fs.read_file"}, Path: p("outside/notes.txt")},
		{Blockers: []string{"fs.read_file"}, Path: p("outside/.env")},
		{Blockers: []string{"fs.make_dir"}, Path: p("out")},
		{Blockers: []string{"net.connect_tcp"}, Port: 9},
		{Blockers: []string{"fs.read_file"}, Path: "pipe:[1234]"},
		// As the view's records name a create: the new entry, not yet
		// there; classified (and probed) as its directory.
		{Blockers: []string{"fs.make_reg"}, Path: p("out/new.o")},
		{Blockers: []string{"fs.make_reg"}, Path: p("ws/.git/hooks/pre-commit")},
		// Red team round 11, R11a-10: above the workspace (mkdir
		// ../.git, as Landlock names it and as the view does).
		{Blockers: []string{"fs.make_dir"}, Path: root},
		{Blockers: []string{"fs.make_reg"}, Path: p(".envrc")},
		{Blockers: []string{"fs.write_file"}, Path: p("outside/notes.md")}, // control: beside it, not above
		// R12-6: an existing file of agent configuration above the
		// workspace (mise walks up from the working directory).
		{Blockers: []string{"fs.write_file"}, Path: p("mise.toml")},
		{Blockers: []string{"fs.write_file"}, Path: p(".vscode/tasks.json")},
	}
	type res struct{ byDesign, notLearnable bool }
	want := []res{
		{true, false}, {true, false}, {true, false}, {true, false}, {true, false}, {true, false},
		{false, false}, {false, false}, {false, false},
		{true, false}, {true, false},
		{false, false},
		{false, true}, {false, true},
		{false, false}, {true, false},
		{true, false}, {true, false}, {false, false},
		{true, false}, {true, false},
	}
	refs := FromDenials(ds, c)
	require.Len(t, refs, len(want))
	for i, r := range refs {
		assert.Equal(t, want[i], res{r.ByDesign != "", r.NotLearnable != ""}, "%d: %+v", i, r)
	}
	// ws/.git/config: two blockers, two refusals, both by design.
	assert.Equal(t, Write, refs[1].Right)
	assert.Equal(t, Write, refs[2].Right)
	assert.Equal(t, Create, refs[11].Right)

	// Control: without the probe the private key outside every root
	// looks learnable (its name is no secret's: only its content, which
	// the probe examines, is); .env outside every root is refused by its
	// name alone (NameNarrowing, red team round 32, R32c-2).
	bare := FromDenials(ds[8:10], PolicyClassifier{WS: pw})
	require.Len(t, bare, 2)
	assert.Empty(t, bare[0].ByDesign, "without the probe: %+v", bare[0])
	assert.NotEmpty(t, bare[1].ByDesign, "by its name: %+v", bare[1])

	// And the plan grants only the learnable ones, exactly.
	plan := Decide(refs, nil)
	var got []string
	for _, e := range plan.Add {
		got = append(got, string(e.Key)+" "+e.Value)
	}
	assert.ElementsMatch(t, []string{"ro " + p("outside/input"), "rw " + p("out"), "rw " + p("ro/tool")}, got)
}

// TestPolicyClassifierHomeAlias (red team round 12, R12-1): a refused
// read of dotfiles/aws/credentials, the real path of ~/.aws/credentials
// (~/.aws -> dotfiles/aws), is a deny pattern by design under
// --deny-secrets, not a grant to learn. Control: without --deny-secrets
// it is learnable.
func TestPolicyClassifierHomeAlias(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	require.NoError(t, os.MkdirAll(filepath.Join(home, "dotfiles/aws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(home, "dotfiles/aws/credentials"), []byte("k"), 0o600))
	require.NoError(t, os.Symlink("dotfiles/aws", filepath.Join(home, ".aws")))
	ws := t.TempDir()
	for _, secrets := range []bool{false, true} {
		o := &cliopts.Options{Workspace: ws, DenySecrets: secrets}
		c, pw := classifierFor(t, o)
		byDesign, _ := c.Classify(filepath.Join(home, "dotfiles/aws/credentials"), Read)
		if secrets {
			assert.Contains(t, byDesign, "another name")
		} else {
			assert.Empty(t, byDesign, "control: learnable without --deny-secrets")
		}
		pw.Close()
	}
}

// TestPolicyClassifierNearbyAlias (red team round 13, R13-1): a link
// outside HOME next to the file's directory (shared/.env ->
// env/production) names it too: a refused read of env/production is a
// deny pattern by design under --deny-secrets. Control: a file no link
// names is learnable.
func TestPolicyClassifierNearbyAlias(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	shared := filepath.Join(base, "shared")
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "env"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "env/production"), []byte("k"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "env/readme"), []byte("r"), 0o644))
	require.NoError(t, os.Symlink("env/production", filepath.Join(shared, ".env")))
	o := &cliopts.Options{Workspace: t.TempDir(), DenySecrets: true}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()
	c := PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) {
		return o.Policy(jail.WithAllowed(dir, jail.ReadOnly))
	}}
	byDesign, _ := c.Classify(filepath.Join(shared, "env/production"), Read)
	assert.Contains(t, byDesign, "another name")
	byDesign, _ = c.Classify(filepath.Join(shared, "env/readme"), Read)
	assert.Empty(t, byDesign, "control")
}

// TestPolicyClassifierDeepHomeAlias (red team round 15, R15a-5): a file
// link inside a real directory of HOME (~/.docker/config.json ->
// ../dotfiles/docker/config.json, ~/.ssh/keys/deploy ->
// ../../dotfiles/ssh/deploy: stow --no-folding, dotbot) names its target
// as the carve walk reads HOME (landlock.HomeLinks): a refused read is a
// deny pattern by design under --deny-secrets, not a grant. Controls: a
// file no link names, and the same without --deny-secrets. Red before:
// both were learned as ro grants of the dotfiles paths.
func TestPolicyClassifierDeepHomeAlias(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	for f, c := range map[string]string{"dotfiles/docker/config.json": "d", "dotfiles/docker/readme": "r", "dotfiles/ssh/deploy": "k"} {
		require.NoError(t, os.MkdirAll(filepath.Join(home, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(home, f), []byte(c), 0o600))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".docker"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".ssh/keys"), 0o700))
	require.NoError(t, os.Symlink("../dotfiles/docker/config.json", filepath.Join(home, ".docker/config.json")))
	require.NoError(t, os.Symlink("../../dotfiles/ssh/deploy", filepath.Join(home, ".ssh/keys/deploy")))
	ws := t.TempDir()
	for _, secrets := range []bool{false, true} {
		o := &cliopts.Options{Workspace: ws, DenySecrets: secrets}
		c, pw := classifierFor(t, o)
		for _, f := range []string{"dotfiles/docker/config.json", "dotfiles/ssh/deploy"} {
			byDesign, _ := c.Classify(filepath.Join(home, f), Read)
			if secrets {
				assert.Contains(t, byDesign, "another name", f)
			} else {
				assert.Empty(t, byDesign, "control: learnable without --deny-secrets: %s", f)
			}
		}
		byDesign, _ := c.Classify(filepath.Join(home, "dotfiles/docker/readme"), Read)
		assert.Empty(t, byDesign, "control: no link names it")
		pw.Close()
	}
}

// TestPolicyClassifierWorkspaceLinkOut (red team round 15, R15a-25): a
// link in the workspace by a denied name to a file outside it (ws/.env
// -> ../shared/production) makes a refused read of the target a deny
// pattern by design, not a grant. Controls: a file no link names, and
// the same without --deny-secrets. Red before: learned as a ro grant.
func TestPolicyClassifierWorkspaceLinkOut(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, shared := filepath.Join(base, "ws"), filepath.Join(base, "shared")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(shared, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "production"), []byte("k"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "readme"), []byte("r"), 0o644))
	require.NoError(t, os.Symlink("../shared/production", filepath.Join(ws, ".env")))
	for _, secrets := range []bool{false, true} {
		o := &cliopts.Options{Workspace: ws, DenySecrets: secrets}
		c, pw := classifierFor(t, o)
		byDesign, _ := c.Classify(filepath.Join(shared, "production"), Read)
		if secrets {
			assert.Contains(t, byDesign, "deny pattern")
		} else {
			assert.Empty(t, byDesign, "control: learnable without --deny-secrets")
		}
		byDesign, _ = c.Classify(filepath.Join(shared, "readme"), Read)
		assert.Empty(t, byDesign, "control: no link names it")
		pw.Close()
	}
}

// TestPolicyClassifierDeniedDirLinkOut (red team round 16, R16-4): a
// denied directory name in the workspace that is a link out of it
// (ws/.aws -> ../shared/aws) makes a refused read below its target a deny
// pattern by design. Controls: a file beside the target, and the same
// without --deny-secrets. Red before: learned as ro
// shared/aws/credentials.
func TestPolicyClassifierDeniedDirLinkOut(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, shared := filepath.Join(base, "ws"), filepath.Join(base, "shared")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "aws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "aws/credentials"), []byte("k"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "readme"), []byte("r"), 0o644))
	require.NoError(t, os.Symlink("../shared/aws", filepath.Join(ws, ".aws")))
	for _, secrets := range []bool{false, true} {
		o := &cliopts.Options{Workspace: ws, DenySecrets: secrets}
		c, pw := classifierFor(t, o)
		byDesign, _ := c.Classify(filepath.Join(shared, "aws/credentials"), Read)
		if secrets {
			assert.Contains(t, byDesign, "deny pattern")
		} else {
			assert.Empty(t, byDesign, "control: learnable without --deny-secrets")
		}
		byDesign, _ = c.Classify(filepath.Join(shared, "readme"), Read)
		assert.Empty(t, byDesign, "control: no link names it")
		pw.Close()
	}
}

// TestPolicyClassifierDeniedDirLinkAbove (red team round 16, R16-11): a
// denied directory link above the workspace (app/.aws -> ../shared/aws,
// workspace app/ws) makes a refused read below its target a deny pattern
// by design. Control: without --deny-secrets it is learnable. Red
// before: learned as ro shared/aws/credentials.
func TestPolicyClassifierDeniedDirLinkAbove(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	ws, shared := filepath.Join(base, "app/ws"), filepath.Join(base, "shared")
	require.NoError(t, os.MkdirAll(ws, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(shared, "aws"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(shared, "aws/credentials"), []byte("k"), 0o600))
	require.NoError(t, os.Symlink("../shared/aws", filepath.Join(base, "app/.aws")))
	for _, secrets := range []bool{false, true} {
		o := &cliopts.Options{Workspace: ws, DenySecrets: secrets}
		c, pw := classifierFor(t, o)
		byDesign, _ := c.Classify(filepath.Join(shared, "aws/credentials"), Read)
		if secrets {
			assert.Contains(t, byDesign, "deny pattern")
		} else {
			assert.Empty(t, byDesign, "control: learnable without --deny-secrets")
		}
		pw.Close()
	}
}

// classifierFor is the PolicyClassifier run builds for o: the policy, and
// a probe granting one more directory read-only. The caller closes pw.
func classifierFor(t *testing.T, o *cliopts.Options) (PolicyClassifier, *jail.Workspace) {
	t.Helper()
	pw, err := o.Policy()
	require.NoError(t, err)
	return PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) {
		return o.Policy(jail.WithAllowed(dir, jail.ReadOnly))
	}}, pw
}

// TestLearnBelowDeniedDirectory: red team round 32, R32c-2. A refused
// read below a directory the user's own --deny pattern names (secrets/,
// secrets/**, **/secrets/), outside the workspace, was learned: the
// probe was rooted at the file's own directory, where the pattern names
// nothing. It is refused by design. Control: the same read next to it
// is learnable.
func TestLearnBelowDeniedDirectory(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, f := range []string{"ws/a.go", "outside/secrets/db/password", "outside/public/readme"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o644))
	}
	for _, pat := range []string{"secrets/", "**/secrets/"} { // secrets/** is anchored (a "/" in the middle): each root's own
		o := &cliopts.Options{Workspace: filepath.Join(root, "ws"), Deny: []string{pat}}
		pw, err := o.Policy()
		require.NoError(t, err)
		c := PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) { return o.Policy(jail.WithAllowed(dir, jail.ReadOnly)) }}
		byDesign, _ := c.Classify(filepath.Join(root, "outside/secrets/db/password"), Read)
		assert.NotEmpty(t, byDesign, "%s: below the directory it names", pat)
		byDesign, notLearnable := c.Classify(filepath.Join(root, "outside/public/readme"), Read)
		assert.Empty(t, byDesign+notLearnable, "%s, control: next to it", pat)
		pw.Close()
	}
}

// TestLearnNeverSetIDWritable: red team round 32, R32a-4. A refused
// write of a set-ID program (read-only under --protect-agent-config)
// was learned as rw of it, and the next --config run rewrote it through
// a mapping, its bit kept. It is refused by design. Control: the same
// refused write of a plain program beside it is learnable.
func TestLearnNeverSetIDWritable(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	for _, f := range []string{"ws/a.go", "tools/helper", "tools/plain"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, f), []byte("x"), 0o755))
	}
	require.NoError(t, os.Chmod(filepath.Join(root, "tools/helper"), 0o755|os.ModeSetuid))
	o := &cliopts.Options{Workspace: filepath.Join(root, "ws")}
	pw, err := o.Policy()
	require.NoError(t, err)
	defer pw.Close()
	c := PolicyClassifier{WS: pw, Probe: func(dir string) (*jail.Workspace, error) { return o.Policy(jail.WithAllowed(dir, jail.ReadOnly)) }}
	byDesign, _ := c.Classify(filepath.Join(root, "tools/helper"), Write)
	assert.Contains(t, byDesign, "set-user-ID")
	byDesign, notLearnable := c.Classify(filepath.Join(root, "tools/plain"), Write)
	assert.Empty(t, byDesign+notLearnable, "control: a plain program")
}
