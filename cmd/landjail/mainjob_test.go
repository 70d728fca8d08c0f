package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// goEnv returns "go env NAME".
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := osexec.Command("go", "env", name).Output()
	require.NoError(t, err)
	v := strings.TrimSpace(string(out))
	require.NotEmpty(t, v, "go env %s", name)
	return v
}

// TestMainJob is the project's main job on real input: a real third-party
// Go module (BurntSushi/toml from the module cache) copied to a workspace
// is built and vetted, then committed with git, all inside one landjail
// sandbox (Go toolchain read-execute, module cache read-only, GOCACHE in the
// workspace); the same sandbox refuses to read a private key in $HOME/.ssh.
func TestMainJob(t *testing.T) {
	t.Parallel() // compile-bound; its own workspace, HOME and GOCACHE
	kerneltest.RequireLandlockABI(t, 1)
	if testing.Short() {
		t.Skip("builds a module and the standard library from a cold GOCACHE (tens of seconds); skipped with -short")
	}
	_, err := osexec.LookPath("git")
	require.NoError(t, err, "git is needed for the main job")
	bin := landjailBin(t)
	goroot, modcache := goEnv(t, "GOROOT"), goEnv(t, "GOMODCACHE")
	src := filepath.Join(modcache, "github.com/!burnt!sushi/toml@v1.6.0")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("module github.com/BurntSushi/toml@v1.6.0 not in the module cache (go mod download github.com/BurntSushi/toml@v1.6.0): %v", err)
	}

	base := wsDir(t)
	ws := filepath.Join(base, "ws")
	require.NoError(t, os.CopyFS(ws, os.DirFS(src)))
	require.FileExists(t, filepath.Join(ws, "go.mod"))
	f, err := os.OpenFile(filepath.Join(ws, ".gitignore"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString("\n/.cache/\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())

	// A private key in a HOME outside the workspace; readable unconfined
	// (positive control), so a refusal below is the sandbox's doing.
	home := filepath.Join(base, "home")
	key := filepath.Join(home, ".ssh", "id_ed25519")
	require.NoError(t, os.MkdirAll(filepath.Dir(key), 0o700))
	require.NoError(t, os.WriteFile(key, []byte("-----BEGIN OPENSSH PRIVATE KEY----- fake\n"), 0o600))
	_, err = os.ReadFile(key)
	require.NoError(t, err)

	sandbox := []string{"run", "--workspace", ws,
		"--rox", goroot, "--ro", modcache,
		"--env", "GOCACHE=" + filepath.Join(ws, ".cache"), "--env", "GOFLAGS=-mod=mod",
		"--env", "GOTOOLCHAIN=local", "--env", "GOPROXY=off", "--env", "GOTELEMETRY=off",
		"--env", "PATH=" + filepath.Join(goroot, "bin") + ":/usr/bin:/bin"}
	run := func(env []string, argv ...string) (int, string) {
		t.Helper()
		args := append(append(append([]string{}, sandbox...), env...), "--")
		return runBin(t, bin, nil, append(args, argv...)...)
	}

	code, out := run(nil, "go", "build", "./...")
	require.Equal(t, 0, code, "go build: %s", out)
	code, out = run(nil, "go", "vet", "./...")
	require.Equal(t, 0, code, "go vet: %s", out)
	code, out = run(nil, "sh", "-c", "git init -q && git add -A && git -c user.email=a@b -c user.name=n commit -qm x && git log --format=%s")
	require.Equal(t, 0, code, "git: %s", out)
	assert.Equal(t, "x\n", out)
	assert.DirExists(t, filepath.Join(ws, ".git"))
	assert.DirExists(t, filepath.Join(ws, ".cache"), "GOCACHE inside the workspace")

	// The same sandbox, with HOME pointing at the fake one.
	code, out = run([]string{"--env", "HOME=" + home}, "sh", "-c", `cat "$HOME/.ssh/id_ed25519"`)
	assert.NotEqual(t, 0, code)
	assert.Regexp(t, refusedOrHidden, out)
	assert.NotContains(t, out, "PRIVATE KEY")
}
