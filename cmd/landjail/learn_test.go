package main

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunLearnConverges: the learn loop on a build-like script that reads
// a file under /var (outside the policy), writes into an output directory
// outside the workspace and tries to read a .env that --deny-secrets
// denies. Repeating `landjail run --learn F --config F -- script`
// succeeds within three runs; F grants exactly the input file (ro) and
// the output directory (rw), lists the .env as refused by design, and
// loads through cliopts' config loader; one more run changes no byte of
// F. The control: the same script without the learned config fails, and
// writes nothing. Two layers: --no-namespaces, where Landlock refuses
// (and audits) the write, F asserted byte for byte; the default, where
// the namespace view refuses it (EROFS, recorded by the seccomp filter's
// supervisor), F asserted through the loader (other layers may add
// comments). Needs root and Landlock ABI 7 (audit).
func TestRunLearnConverges(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	for _, layer := range []struct {
		name  string
		flags []string
		exact bool
	}{
		{"landlock-only", []string{"--no-namespaces"}, true},
		{"default", nil, false},
	} {
		t.Run(layer.name, func(t *testing.T) {
			_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			if errno, ok := kerneltest.Blocked(kerneltest.FeatureOpenat2); ok && layer.flags == nil && !nsBlocked {
				t.Skipf("openat2 blocked with %v by LANDJAIL_EMULATE: the seccomp supervisor records the view's refusals through openat2 (RESOLVE_IN_ROOT in the command's root), so the EROFS is not learned", errno)
			}
			ws := wsDir(t)
			mk := func(prefix string) string {
				d, err := os.MkdirTemp("/var/tmp", prefix)
				require.NoError(t, err)
				t.Cleanup(func() { os.RemoveAll(d) })
				return d
			}
			data, outDir := mk("landjail-learn-in-"), mk("landjail-learn-out-")
			input := filepath.Join(data, "input")
			require.NoError(t, os.WriteFile(input, []byte("hello\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=x\n"), 0o600))
			script := fmt.Sprintf("set -e\ncat .env 2>/dev/null || true\ntr a-z A-Z < %s > %s/result.txt\necho built\n",
				strconv.Quote(input), strconv.Quote(outDir))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "build.sh"), []byte(script), 0o755))
			cfg := filepath.Join(wsDir(t), "learned.toml") // outside the workspace
			base := append(append([]string{"run", "--workspace", ws}, layer.flags...), "--deny-secrets")
			argv := []string{"--", "/bin/sh", "build.sh"}

			// Control: the script fails without the learned grants.
			code, out := runBin(t, bin, nil, append(base, argv...)...)
			require.NotEqual(t, 0, code, out)
			_, err := os.Stat(filepath.Join(outDir, "result.txt"))
			require.ErrorIs(t, err, os.ErrNotExist)

			runs := 0
			for runs < 3 && code != 0 {
				runs++
				args := append(append([]string{}, base...), "--learn", cfg)
				if _, err := os.Stat(cfg); err == nil {
					args = append(args, "--config", cfg)
				}
				code, out = runBin(t, bin, nil, append(args, argv...)...)
				t.Logf("run %d: exit %d\n%s", runs, code, out)
			}
			require.Equal(t, 0, code, "the learn loop did not converge in 3 runs: %s", out)
			assert.Contains(t, out, "built")
			b, err := os.ReadFile(filepath.Join(outDir, "result.txt"))
			require.NoError(t, err)
			assert.Equal(t, "HELLO\n", string(b))

			got, err := os.ReadFile(cfg)
			require.NoError(t, err)
			byDesign := "# refused by design: \"" + ws + "/.env\" (deny pattern (--deny, --deny-secrets) or private key)\n"
			if layer.exact {
				want := "# landjail policy: grants learned by `landjail run --learn` (load it with --config)\n\n" +
					"ro = [\n  \"" + input + "\", # learned: read refused\n]\n" +
					"\n# landjail run --learn did not grant these:\n" + byDesign +
					"\nrw = [\n  \"" + outDir + "\", # learned: create refused\n]\n"
				assert.Equal(t, want, string(got))
			} else {
				assert.Contains(t, string(got), byDesign)
			}
			o, err := cliopts.ReadConfig(cfg)
			require.NoError(t, err)
			assert.Equal(t, []string{input}, o.RO, "%s", got)
			assert.Equal(t, []string{outDir}, o.RW, "%s", got)
			assert.Empty(t, o.ROX)
			assert.Empty(t, o.AllowDomain)

			// A fixed point: once it succeeds, another learning run adds
			// nothing.
			code, out = runBin(t, bin, nil, append(append(base, "--learn", cfg, "--config", cfg), argv...)...)
			require.Equal(t, 0, code, out)
			again, err := os.ReadFile(cfg)
			require.NoError(t, err)
			assert.Equal(t, string(got), string(again))
		})
	}
}

// TestRunLearnAllowDomain: the learn loop with the --allow-domain proxy
// never learns a local target. FILE starts with an allow_domain list the
// command does not need; curl fetches from a local server by IP literal,
// which the proxy refuses (not listed). Before, the run learned
// "127.0.0.1:PORT" and the loop's second run reached the host's loopback
// server (red team round 27, R27a-1); now FILE says it is refused by
// design, keeps only the entry it had, and the second run is refused
// too. Control: the first run fails and the server sees nothing. Which
// names are learned (a public one) is internal/learn's
// TestFromProxyLocalTargets.
func TestRunLearnAllowDomain(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	requireProgram(t, "curl")
	useNetproxy(t)
	if wantProxyMode(t, false) == cliopts.NetworkUnreachable {
		t.Skip("the proxy is unreachable here (no Landlock TCP rules): nothing to learn from")
	}
	srv := newHitServer(t, false)
	ws := wsDir(t)
	cfg := filepath.Join(t.TempDir(), "learned.toml")
	start := "allow_domain = [\"localhost:1\"]\n"
	require.NoError(t, os.WriteFile(cfg, []byte(start), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "fetch.sh"), []byte("curl -sSf -m 10 http://127.0.0.1:$HP/learn\n"), 0o644))
	args := []string{"run", "--workspace", ws, "--timeout", "2m", "--env", "HP=" + srv.port(),
		"--learn", cfg, "--config", cfg, "--", "sh", "fetch.sh"}

	for range 2 {
		code, stdout, stderr := runCLI(t, args...)
		require.NotEqual(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
		assert.Zero(t, srv.count("/learn"), "the loop reached the host's loopback server")
	}
	got, err := os.ReadFile(cfg)
	require.NoError(t, err)
	entry := "127.0.0.1:" + srv.port()
	assert.Contains(t, string(got), "# refused by design: \""+entry+"\"")
	o, err := cliopts.ReadConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{"localhost:1"}, o.AllowDomain)
}

// TestRunLearnExecute: a command outside the policy is refused at execve
// (exit 126, the run's start fails); --learn still writes FILE, with the
// exact program as rox, says so on stderr, and the second run executes
// it. The first run is the control (126 without the grant).
func TestRunLearnExecute(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	dir, err := os.MkdirTemp("/var/tmp", "landjail-learn-tool-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	tool := filepath.Join(dir, "tool")
	require.NoError(t, os.WriteFile(tool, []byte("#!/bin/sh\necho tool-ok\n"), 0o755))
	ws := wsDir(t)
	cfg := filepath.Join(wsDir(t), "learned.toml")
	code, out := runBin(t, bin, nil, "run", "--workspace", ws, "--learn", cfg, "--", tool)
	require.Equal(t, 126, code, out)
	// Each learned grant is on stderr, for review (red team R6-3).
	assert.Contains(t, out, "landjail: --learn: + rox "+tool+" (learned: execute refused")
	assert.Contains(t, out, "review these grants before the next --config run")
	got, err := os.ReadFile(cfg)
	require.NoError(t, err, out)
	o, err := cliopts.ReadConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{tool}, o.ROX, "%s", got)
	assert.Empty(t, o.RO)
	assert.Empty(t, o.RW)
	code, out = runBin(t, bin, nil, "run", "--workspace", ws, "--learn", cfg, "--config", cfg, "--", tool)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "tool-ok")
}

// TestRunLearnNeverLiftsProtections: a run refused only by protections
// (--protect-agent-config: a git hook; --read-only: a file; --deny-secrets:
// a .env) learns no grant at all, and lists each as refused by design, in
// both layers (Landlock carve-outs, and the namespace view's read-only
// mounts and masks). The control: without the protections the same
// script writes the hook and the file, and reads the .env.
func TestRunLearnNeverLiftsProtections(t *testing.T) {
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
			ws := wsDir(t)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "docs"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "docs/a.md"), []byte("a\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("TOKEN=x\n"), 0o600))
			script := "echo hook > .git/hooks/pre-commit; echo b > docs/a.md; cat .env; true\n"
			require.NoError(t, os.WriteFile(filepath.Join(ws, "s.sh"), []byte(script), 0o644))
			argv := []string{"--", "/bin/sh", "s.sh"}

			// Control: unprotected, every access succeeds.
			code, out := runBin(t, bin, nil, append(append(append([]string{"run", "--workspace", ws}, layer.flags...), "--timeout", "1m"), argv...)...)
			require.Equal(t, 0, code, out)
			assert.Contains(t, out, "TOKEN=x")
			b, err := os.ReadFile(filepath.Join(ws, ".git/hooks/pre-commit"))
			require.NoError(t, err)
			assert.Equal(t, "hook\n", string(b))
			require.NoError(t, os.Remove(filepath.Join(ws, ".git/hooks/pre-commit")))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "docs/a.md"), []byte("a\n"), 0o644))

			cfg := filepath.Join(wsDir(t), "learned.toml")
			args := append(append([]string{"run", "--workspace", ws}, layer.flags...),
				"--protect-agent-config", "--read-only", "docs/", "--deny-secrets", "--learn", cfg)
			code, out = runBin(t, bin, nil, append(args, argv...)...)
			require.Equal(t, 0, code, out)
			assert.NotContains(t, out, "TOKEN=x")
			got, err := os.ReadFile(cfg)
			require.NoError(t, err, out)
			o, err := cliopts.ReadConfig(cfg)
			require.NoError(t, err)
			assert.Empty(t, o.RO, "%s", got)
			assert.Empty(t, o.ROX, "%s", got)
			assert.Empty(t, o.RW, "%s", got)
			for _, p := range []string{".env", ".git/hooks", "docs"} {
				assert.Contains(t, string(got), "# refused by design: \""+filepath.Join(ws, p), "%s\n%s", got, out)
			}
			b, err = os.ReadFile(filepath.Join(ws, "docs/a.md"))
			require.NoError(t, err)
			assert.Equal(t, "a\n", string(b))
		})
	}
}

// TestRunLearnNonRoot: as uid 65534 (no audit records) --learn says that
// Landlock's own refusals are unavailable and learns what the other
// layers saw: with --no-namespaces a refused read of a file under /var
// (seen by the broker) becomes its exact ro grant, and the next run
// reads it; the .env the same run was refused (a deny pattern) is by
// design. The first run is the control (the read fails).
func TestRunLearnNonRoot(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("drops to uid 65534: needs root")
	}
	if errno, ok := kerneltest.Blocked(kerneltest.FeatureOpenat2); ok {
		t.Skipf("openat2 blocked with %v by LANDJAIL_EMULATE: the seccomp supervisor that records refusals without audit resolves paths through openat2 (TestRunExplainNonRoot fails there too)", errno)
	}
	shared := func(parent string, mode os.FileMode) string {
		d, err := os.MkdirTemp(parent, "landjail-learn-nonroot-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(d) })
		require.NoError(t, os.Chmod(d, mode))
		d, err = filepath.EvalSymlinks(d)
		require.NoError(t, err)
		return d
	}
	ws, dir, data := shared("", 0o777), shared("", 0o777), shared("/var/tmp", 0o755)
	input := filepath.Join(data, "input")
	require.NoError(t, os.WriteFile(input, []byte("in-data\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("s3cret"), 0o644))
	bin := filepath.Join(dir, "landjail")
	b, err := os.ReadFile(landjailBin(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, b, 0o755))
	cfg := filepath.Join(dir, "learned.toml")
	run := func(extra ...string) string {
		args := append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "run", "--no-namespaces",
			"--workspace", ws, "--deny", ".env", "--learn", cfg}, extra...)
		cmd := osexec.Command("setpriv", append(args, "--", "sh", "-c", "cat .env; cat "+input+"; exit 0")...)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
		cmd.Dir = ws
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	out := run()
	assert.NotContains(t, out, "in-data", "control: read before it was learned")
	assert.Contains(t, out, "--learn: Landlock's own refusals are unavailable")
	got, err := os.ReadFile(cfg)
	require.NoError(t, err, out)
	o, err := cliopts.ReadConfig(cfg)
	require.NoError(t, err)
	assert.Equal(t, []string{input}, o.RO, "%s", got)
	assert.Empty(t, o.RW)
	assert.Contains(t, string(got), "# refused by design: \""+filepath.Join(ws, ".env")+"\"")

	out = run("--config", cfg)
	assert.Contains(t, out, "in-data")
	assert.NotContains(t, out, "s3cret")
}
