package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
