package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestDeniedLinkIntoPrivateHome: a denied name that is a link into a
// directory the ruleset grants outside the policy's roots (here the
// default private HOME, kept between runs) gets the name's verdict at
// its target, in every layer (red team round 26, R26c-3: run 1 made
// .env -> $HOME/stash and .aws -> $HOME/awsd, the user wrote the secrets
// through them, run 2 read them by either name). Controls: the command
// still writes and reads its HOME's other files (under Landlock alone a
// carved HOME is frozen: no new entries, as a carved workspace), and a
// link into the workspace was already denied (R9-3).
func TestDeniedLinkIntoPrivateHome(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws, outside := wsDir(t), wsDir(t)
			env := []string{"PATH=/usr/bin:/bin", "HOME=" + outside, "XDG_CACHE_HOME=" + filepath.Join(outside, "cache")}
			run := func(script string) string {
				args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
				_, out := runBinEnv(t, bin, env, append(args, "--", "/bin/sh", "-c", script)...)
				return out
			}
			out := run(`echo placeholder > "$HOME/stash" && ln -s "$HOME/stash" .env && mkdir "$HOME/awsd" && ln -s "$HOME/awsd" .aws && echo other > "$HOME/other" && echo PLANTED`)
			require.Contains(t, out, "PLANTED")
			// The user fills them in, through the links.
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("API_KEY=SECRET_ENV\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".aws", "credentials"), []byte("aws_secret=SECRET_AWS\n"), 0o644))

			out = run(`cat .env "$HOME/stash" .aws/credentials "$HOME/awsd/credentials"; echo fine >> "$HOME/other" && cat "$HOME/other"`)
			assert.NotContains(t, out, "SECRET", "a denied link's target in the private HOME read")
			assert.Contains(t, out, "fine", "control: the private HOME's other files")
		})
	}
}

// TestDeniedHardLinkPlanted: the other names, in the roots, of a denied
// file with several hard links are denied too, in every layer and in
// resolve (red team round 26, R26c-1: run 1 made .env, not yet there
// to deny, and .cache/x, a hard link of it; the user filled .env in
// place; run 2 read the secret as .cache/x). Control: the workspace's
// other files, and a file with one link.
func TestDeniedHardLinkPlanted(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws := wsDir(t)
			run := func(script string) string {
				args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
				_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "/bin/sh", "-c", script)...)
				return out
			}
			out := run(`echo placeholder > .env && mkdir .cache && ln .env .cache/x && echo fine > notes && echo PLANTED`)
			require.Contains(t, out, "PLANTED")
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("API_KEY=SECRET_ENV\n"), 0o644)) // in place
			out = run(`cat .env .cache/x; cat notes`)
			assert.NotContains(t, out, "SECRET", "the denied file read by its other name")
			assert.Contains(t, out, "fine", "control")
			code, out := runBinCtx(t, 30*time.Second, bin, "resolve", "--workspace", ws, "--deny-secrets", ".cache/x")
			assert.Equal(t, 1, code, out)
			assert.Contains(t, out, "denied")
		})
	}
}

// TestDeniedLinkThroughProc: a denied name that is a link through /proc
// (.env -> /proc/self/cwd/notes.txt) leads somewhere else for each
// process: landjail refuses to run rather than judge it in its own
// context (red team round 26, R26c-8: started outside the workspace, it
// carved nothing and the command read .env as notes.txt, where the
// user's write through .env had gone). Control: the link removed, the
// same run starts.
func TestDeniedLinkThroughProc(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	ws := wsDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("API_KEY=SECRET_PROC\n"), 0o644))
	require.NoError(t, os.Symlink("/proc/self/cwd/notes.txt", filepath.Join(ws, ".env")))
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
		code, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "/bin/sh", "-c", "cat .env; echo RAN")...)
		assert.NotEqual(t, 0, code, "%v: %s", mode, out)
		assert.NotContains(t, out, "SECRET", mode)
		assert.NotContains(t, out, "RAN", mode)
		assert.Contains(t, out, "/proc/self", mode)
	}
	code, out := runBinCtx(t, 30*time.Second, bin, "resolve", "--workspace", ws, "--deny-secrets", "notes.txt")
	assert.NotEqual(t, 0, code, out)
	require.NoError(t, os.Remove(filepath.Join(ws, ".env")))
	code, out = runBinCtx(t, 60*time.Second, bin, "run", "--timeout", "1m", "--workspace", ws, "--deny-secrets", "--", "/bin/sh", "-c", "echo RAN")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "RAN", "control")
}

// TestDeniedDirHardLinkPlanted: TestDeniedHardLinkPlanted for a file
// below a denied directory (red team round 26, R26e-2: .aws/credentials
// and its planted hard link .cache/y; the second walk looked at carved
// files only, not at the files of a carved directory). Control: the
// workspace's other files.
func TestDeniedDirHardLinkPlanted(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws := wsDir(t)
			run := func(script string) string {
				args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
				_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "/bin/sh", "-c", script)...)
				return out
			}
			out := run(`mkdir -p .aws .cache && echo placeholder > .aws/credentials && ln .aws/credentials .cache/y && echo fine > notes && echo PLANTED`)
			require.Contains(t, out, "PLANTED")
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".aws", "credentials"), []byte("aws_secret=SECRET_DIR\n"), 0o644)) // in place
			out = run(`cat .aws/credentials .cache/y; cat notes`)
			assert.NotContains(t, out, "SECRET", "a file of a denied directory read by its other name")
			assert.Contains(t, out, "fine", "control")
		})
	}
}

// TestDirLinkIntoPrivateHome: a workspace directory link whose own name
// no pattern denies, into a directory the command may write outside the
// roots (the private HOME kept between runs), is walked by its name:
// what a pattern denies below it is denied where it is, in every layer
// (red team round 26's verification, R26e-4: run 1 made $HOME/cfg and
// config -> $HOME/cfg, the user wrote config/.env through it, run 2 read
// it by either name). The same link into the private TMPDIR's .shm (the
// view's /dev/shm, a second name no carve covers) refuses the policy.
// Controls: the target's other files stay readable and writable.
func TestDirLinkIntoPrivateHome(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws, outside := wsDir(t), wsDir(t)
			env := []string{"PATH=/usr/bin:/bin", "HOME=" + outside, "XDG_CACHE_HOME=" + filepath.Join(outside, "cache")}
			run := func(script string) string {
				args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
				_, out := runBinEnv(t, bin, env, append(args, "--", "/bin/sh", "-c", script)...)
				return out
			}
			out := run(`mkdir -p "$HOME/cfg/sub" && ln -s "$HOME/cfg" config && ln -s "$HOME/cfg/sub" deep && echo PLANTED`)
			require.Contains(t, out, "PLANTED")
			// The user writes into the project, through the links.
			require.NoError(t, os.WriteFile(filepath.Join(ws, "config", ".env"), []byte("API_KEY=SECRET_DIRLINK\n"), 0o644))
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "deep", ".aws"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "deep", ".aws", "credentials"), []byte("aws_secret=SECRET_DEEP\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "config", "app.toml"), []byte("fine\n"), 0o644))

			out = run(`cat config/.env "$HOME/cfg/.env" deep/.aws/credentials "$HOME/cfg/sub/.aws/credentials"; cat config/app.toml && echo more >> "$HOME/cfg/app.toml" && echo WROTE`)
			assert.NotContains(t, out, "SECRET", "a denied name below a link into the private HOME read")
			assert.Contains(t, out, "fine", "control: the target's other files")
			assert.Contains(t, out, "WROTE", "control: the target's other files stay writable")
		})
	}
}

// TestHardLinkInPrivateHome: the other names of a carved file are
// looked for in the directories the command may write outside the roots
// (the private HOME) when the roots do not hold them all, in every layer
// (red team round 26's verification, R26e-7: run 1 made $HOME/stash,
// its hard link $HOME/s2 and .env -> $HOME/stash; the user filled .env;
// run 2 read $HOME/s2; and the same with the workspace's own .env and a
// hard link of it in the private HOME). Controls: the private HOME's
// other files.
func TestHardLinkInPrivateHome(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}, {"--no-pid-namespace"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws, outside := wsDir(t), wsDir(t)
			env := []string{"PATH=/usr/bin:/bin", "HOME=" + outside, "XDG_CACHE_HOME=" + filepath.Join(outside, "cache")}
			run := func(script string) string {
				args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--deny-secrets"}, mode...)
				_, out := runBinEnv(t, bin, env, append(args, "--", "/bin/sh", "-c", script)...)
				return out
			}
			out := run(`echo placeholder > "$HOME/stash" && ln "$HOME/stash" "$HOME/s2" && ln -s "$HOME/stash" .env && ` +
				`echo placeholder > .env.local && mkdir -p "$HOME/d" && echo other > "$HOME/other" && echo PLANTED; ` +
				// Across the view's mounts: EXDEV in the namespace layer.
				`ln .env.local "$HOME/d/s3"`)
			require.Contains(t, out, "PLANTED")
			// The user fills them in place.
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("API_KEY=SECRET_HL\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(ws, ".env.local"), []byte("API_KEY=SECRET_LOCAL\n"), 0o644))

			out = run(`cat .env "$HOME/stash" "$HOME/s2" .env.local "$HOME/d/s3"; echo fine >> "$HOME/other" && cat "$HOME/other"`)
			assert.NotContains(t, out, "SECRET", "a carved file read by its other name in the private HOME")
			assert.Contains(t, out, "fine", "control: the private HOME's other files")
		})
	}
}

// TestReadOnlyDirHardLink: a file below a --read-only directory with a
// second hard link elsewhere in the workspace is read-only by that name
// too, in every layer (red team round 26's verification, R26e-2's
// read-only half: --read-only conf/ with conf/deploy.sh linked as
// tools/x; `>> tools/x` rewrote conf/deploy.sh). Controls: conf/ itself
// is read-only, tools/ other files are writable.
func TestReadOnlyDirHardLink(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	t.Parallel()
	bin := landjailBin(t)
	for _, mode := range [][]string{nil, {"--no-namespaces"}} {
		t.Run(strings.Join(append([]string{"default"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws := wsDir(t)
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "conf"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(ws, "tools"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "conf", "deploy.sh"), []byte("echo deploy\n"), 0o644))
			require.NoError(t, os.Link(filepath.Join(ws, "conf", "deploy.sh"), filepath.Join(ws, "tools", "x")))
			require.NoError(t, os.WriteFile(filepath.Join(ws, "tools", "y"), []byte("y\n"), 0o644))
			args := append([]string{"run", "--timeout", "1m", "--workspace", ws, "--read-only", "conf/"}, mode...)
			_, out := runBinCtx(t, 60*time.Second, bin, append(args, "--", "/bin/sh", "-c", `echo EVIL >> tools/x; echo EVIL >> conf/deploy.sh; echo ok >> tools/y && echo WROTE`)...)
			got, err := os.ReadFile(filepath.Join(ws, "conf", "deploy.sh"))
			require.NoError(t, err)
			assert.NotContains(t, string(got), "EVIL", "a read-only file written through its other name")
			assert.Contains(t, out, "WROTE", "control: tools/'s other files")
		})
	}
}
