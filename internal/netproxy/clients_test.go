package netproxy

import (
	"encoding/pem"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireTool skips when a client program is missing (the CI image has
// curl and git; the proxy itself does not need them).
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := osexec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed: this test drives a real %s through the proxy", name, name)
	}
	return p
}

// clientEnv is a minimal environment for a client program using the proxy
// at addr only through the variables [Env] returns.
func clientEnv(t *testing.T, addr string) []string {
	return append(Env(addr), "PATH="+os.Getenv("PATH"), "HOME="+t.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
}

func TestCurlThroughProxy(t *testing.T) {
	curl := requireTool(t, "curl")
	plain := newCountingServer(t, false)
	tlsUp := newCountingServer(t, true)
	res := newResolver(map[string][]string{
		"registry.test": {"127.0.0.1"}, "example.com": {"127.0.0.1"}, "evil.test": {"127.0.0.1"},
	})
	p, addr := startProxy(t, Config{Allow: []string{"registry.test:*", "example.com:" + tlsUp.port()}, Resolver: res})

	// curl verifies the upstream's certificate (httptest's, issued to
	// example.com) through the tunnel, so it must have reached the real
	// server, not something the proxy made up.
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsUp.Certificate().Raw}), 0o600))

	run := func(args ...string) (string, error) {
		cmd := osexec.Command(curl, append([]string{"-sS", "--max-time", "10", "-w", " %{http_code}"}, args...)...)
		cmd.Env = clientEnv(t, addr)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := run("http://registry.test:" + plain.port() + "/")
	require.NoError(t, err, out)
	assert.Equal(t, "hello from upstream 200", out)

	out, err = run("--cacert", ca, "https://example.com:"+tlsUp.port()+"/")
	require.NoError(t, err, out)
	assert.Equal(t, "hello from upstream 200", out)

	out, err = run("http://evil.test:" + plain.port() + "/")
	require.NoError(t, err, out)
	assert.True(t, strings.HasSuffix(out, " 403"), out)

	out, err = run("--cacert", ca, "https://evil.test:"+tlsUp.port()+"/")
	assert.Error(t, err, "curl through a refused CONNECT: %s", out)
	assert.Contains(t, out, "403", out)

	assert.EqualValues(t, 1, plain.hits.Load())
	assert.EqualValues(t, 1, tlsUp.hits.Load())
	assert.Len(t, p.Refused(), 2)
}

// gitHTTPServer serves the bare repositories under root with
// git-http-backend (smart HTTP) through net/http/cgi.
func gitHTTPServer(t *testing.T, root string) *httptest.Server {
	out, err := osexec.Command("git", "--exec-path").Output()
	require.NoError(t, err)
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not installed (%v)", err)
	}
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}})
	t.Cleanup(srv.Close)
	return srv
}

func git(t *testing.T, env []string, dir string, args ...string) (string, error) {
	cmd := osexec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGitCloneThroughProxy(t *testing.T) {
	requireTool(t, "git")
	root := t.TempDir()
	work := filepath.Join(root, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	env := clientEnv(t, "127.0.0.1:1") // setup never uses the network
	out, err := git(t, env, work, "init", "-q")
	require.NoError(t, err, out)
	require.NoError(t, os.WriteFile(filepath.Join(work, "README"), []byte("through the proxy\n"), 0o644))
	for _, args := range [][]string{{"add", "README"}, {"commit", "-qm", "one"}, {"clone", "-q", "--bare", work, filepath.Join(root, "repo.git")}} {
		out, err := git(t, env, work, args...)
		require.NoError(t, err, out)
	}

	srv := gitHTTPServer(t, root)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newResolver(map[string][]string{"git.test": {"127.0.0.1"}, "evil.test": {"127.0.0.1"}})
	p, addr := startProxy(t, Config{Allow: []string{"git.test:" + port}, Resolver: res})

	dst := filepath.Join(root, "clone")
	out, err = git(t, clientEnv(t, addr), root, "clone", "-q", "http://git.test:"+port+"/repo.git", dst)
	require.NoError(t, err, out)
	b, err := os.ReadFile(filepath.Join(dst, "README"))
	require.NoError(t, err)
	assert.Equal(t, "through the proxy\n", string(b))

	out, err = git(t, clientEnv(t, addr), root, "clone", "-q", "http://evil.test:"+port+"/repo.git", filepath.Join(root, "evil"))
	assert.Error(t, err, out)
	assert.Contains(t, out, "403")
	assert.NoDirExists(t, filepath.Join(root, "evil", ".git"))
	require.NotEmpty(t, p.Refused())
	assert.Equal(t, "evil.test", p.Refused()[0].Host)
}
