package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunLearnPolicyFile: red team R6-2 (learn_config_chain.sh) as a
// test, in both layers. FILE, the --learn and --config file, lies
// outside every root (/var/tmp: the view's /tmp is private). Run 1
// (--learn F --config F): the command writes F; it is refused, and F
// learns no grant, only "# refused by design" for itself (red before the
// fix: rw = [F] in both layers). Run 2 (--config F) with F granting rw
// on itself and on another file G, as run 1 wrote before the fix: the
// command appends to G (the control: the grant is effective) and cannot
// rewrite F to rw = ["/"] (red before the fix under --no-namespaces: F
// was rewritten, and the next run wrote anywhere). Run 3, F granting rw
// on "/" itself: F stays read-only, G is appended to (red before in both
// layers, which fall back to Landlock-only there: F was not even carved,
// "/" was missed as the root holding it). Run 4, F kept in the command's
// --home DIR: F stays read-only, a file in a directory of HOME is written
// (red before in both layers: F rewritten). Needs root and Landlock ABI
// 7 (audit) for run 1's Landlock record.
func TestRunLearnPolicyFile(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	for _, layer := range []struct {
		name  string
		flags []string
	}{{"landlock-only", []string{"--no-namespaces"}}, {"default", nil}} {
		t.Run(layer.name, func(t *testing.T) {
			_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			// Without openat2 the view's refusals are not recorded: run 1
			// learns nothing at all (no comment); the other runs hold.
			_, noOpenat2 := kerneltest.Blocked(kerneltest.FeatureOpenat2)
			recorded := !noOpenat2 || layer.flags != nil || nsBlocked
			ws := wsDir(t)
			dir, err := os.MkdirTemp("/var/tmp", "landjail-learn-policy-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(dir) })
			dir, err = filepath.EvalSymlinks(dir)
			require.NoError(t, err)
			f, g := filepath.Join(dir, "policy.toml"), filepath.Join(dir, "other.txt")
			require.NoError(t, os.WriteFile(f, nil, 0o644))
			require.NoError(t, os.WriteFile(g, []byte("g\n"), 0o644))
			base := append([]string{"run", "--workspace", ws}, layer.flags...)

			code, out := runBin(t, bin, nil, append(base, "--learn", f, "--config", f, "--", "sh", "-c", "echo x > "+f)...)
			require.NotEqual(t, 0, code, out)
			got, err := os.ReadFile(f)
			require.NoError(t, err)
			o, err := cliopts.ReadConfig(f)
			require.NoError(t, err, "%s", got)
			assert.Empty(t, o.RW, "run 1 learned a grant:\n%s\n%s", got, out)
			if recorded {
				assert.Contains(t, string(got), "# refused by design: \""+f+"\" (the --config or --learn file", "%s\n%s", got, out)
			}

			policy := fmt.Sprintf("rw = [%q, %q]\n", f, g)
			require.NoError(t, os.WriteFile(f, []byte(policy), 0o644))
			script := "echo x >> " + g + "; printf 'rw = [\"/\"]\\n' > " + f
			code, out = runBin(t, bin, nil, append(base, "--config", f, "--", "sh", "-c", script)...)
			assert.NotEqual(t, 0, code, out)
			b, err := os.ReadFile(g)
			require.NoError(t, err)
			assert.Equal(t, "g\nx\n", string(b), "control: the rw grant of another file is effective\n%s", out)
			b, err = os.ReadFile(f)
			require.NoError(t, err)
			assert.Equal(t, policy, string(b), "the command rewrote its own policy\n%s", out)

			// Run 3: F grants rw on "/" (the namespace layer is then
			// unavailable: Landlock-only in both subtests). F stays
			// read-only, carved out of "/"; G, a file next to it, is
			// appended to (the control).
			policy = "rw = [\"/\"]\n"
			require.NoError(t, os.WriteFile(f, []byte(policy), 0o644))
			code, out = runBin(t, bin, nil, append(base, "--config", f, "--", "sh", "-c", script)...)
			assert.NotEqual(t, 0, code, out)
			b, err = os.ReadFile(g)
			require.NoError(t, err)
			assert.Equal(t, "g\nx\nx\n", string(b), "control: / is writable\n%s", out)
			b, err = os.ReadFile(f)
			require.NoError(t, err)
			assert.Equal(t, policy, string(b), "rw / : the command rewrote its own policy\n%s", out)

			// Run 4: F kept in the command's --home DIR (read-write for
			// the command). F stays read-only (Landlock-only: the HOME
			// rule is carved, HOME frozen; the view: a read-only mount);
			// the control: a file in a directory of HOME is written.
			home, err := os.MkdirTemp("/var/tmp", "landjail-learn-home-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(home) })
			home, err = filepath.EvalSymlinks(home)
			require.NoError(t, err)
			hf := filepath.Join(home, "policy.toml")
			require.NoError(t, os.MkdirAll(filepath.Join(home, "sub"), 0o755))
			require.NoError(t, os.WriteFile(hf, []byte("ro = []\n"), 0o644))
			script = "echo x > \"$HOME/sub/f\"; printf 'rw = [\"/\"]\\n' > " + hf
			code, out = runBin(t, bin, nil, append(base, "--home", home, "--config", hf, "--", "sh", "-c", script)...)
			assert.NotEqual(t, 0, code, out)
			b, err = os.ReadFile(filepath.Join(home, "sub", "f"))
			require.NoError(t, err, "control: HOME is writable\n%s", out)
			assert.Equal(t, "x\n", string(b))
			b, err = os.ReadFile(hf)
			require.NoError(t, err)
			assert.Equal(t, "ro = []\n", string(b), "--home: the command rewrote its own policy\n%s", out)
		})
	}
}

// TestRunLearnExecBearing: red team R6-3 (learn_grants.sh) end to end,
// in both layers. The command, with landjail's HOME a test directory,
// provokes writes to HOME's .bashrc, to ~/.config/git (a create) and to
// another repository's .git/hooks, and creates in an output directory
// outside every root. FILE learns only the output directory (the
// control: an ordinary build output is still learned); the three others
// are refused by design, and stderr lists the one grant. Red before the
// fix: rw of .bashrc, .config/git and .git/hooks too.
func TestRunLearnExecBearing(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	for _, layer := range []struct {
		name  string
		flags []string
	}{{"landlock-only", []string{"--no-namespaces"}}, {"default", nil}} {
		t.Run(layer.name, func(t *testing.T) {
			_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			if errno, ok := kerneltest.Blocked(kerneltest.FeatureOpenat2); ok && layer.flags == nil && !nsBlocked {
				t.Skipf("openat2 blocked with %v by LANDJAIL_EMULATE: the view's refusals are not recorded", errno)
			}
			top, err := os.MkdirTemp("/var/tmp", "landjail-learn-exec-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(top) })
			top, err = filepath.EvalSymlinks(top)
			require.NoError(t, err)
			home, other, outDir := filepath.Join(top, "home"), filepath.Join(top, "other"), filepath.Join(top, "out")
			for _, d := range []string{"home/.config/git", "other/.git/hooks", "out"} {
				require.NoError(t, os.MkdirAll(filepath.Join(top, d), 0o755))
			}
			require.NoError(t, os.WriteFile(filepath.Join(home, ".bashrc"), []byte("export A=1\n"), 0o644))
			ws := wsDir(t)
			cfg := filepath.Join(wsDir(t), "learned.toml")
			script := fmt.Sprintf("echo x >> %s/.bashrc; echo x > %s/.config/git/config; echo x > %s/.git/hooks/pre-commit; echo o > %s/result; true",
				home, home, other, outDir)
			env := append(os.Environ(), "HOME="+home)
			code, out := runBin(t, bin, env, append(append([]string{"run", "--workspace", ws}, layer.flags...),
				"--learn", cfg, "--", "sh", "-c", script)...)
			require.Equal(t, 0, code, out)
			got, err := os.ReadFile(cfg)
			require.NoError(t, err, out)
			o, err := cliopts.ReadConfig(cfg)
			require.NoError(t, err)
			assert.Equal(t, []string{outDir}, o.RW, "%s\n%s", got, out)
			for _, p := range []string{home + "/.bashrc", home + "/.config/git", other + "/.git/hooks"} {
				assert.Contains(t, string(got), "# refused by design: \""+p, "%s\n%s", got, out)
			}
			assert.Contains(t, out, "landjail: --learn: + rw "+outDir+" (learned: create refused)")
			assert.NotContains(t, out, "landjail: --learn: + rw "+home)
		})
	}
}
