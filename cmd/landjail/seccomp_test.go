package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunSeccomp: run adds the seccomp layer by default and its flags
// open exactly what they name.
func TestRunSeccomp(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	probe := buildCLI(t, "./testdata/sockprobe", "CGO_ENABLED=0")
	ws := wsDir(t)
	bin := filepath.Join(ws, "sockprobe")
	data, err := os.ReadFile(probe)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, data, 0o755))

	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "unix operation not permitted\nudp operation not permitted\ntcp ok\n"},
		{[]string{"--allow-unix-sockets"}, "unix ok\nudp operation not permitted\ntcp ok\n"},
		{[]string{"--allow-dns"}, "unix operation not permitted\nudp ok\ntcp ok\n"},
		{[]string{"--net", "host"}, "unix operation not permitted\nudp ok\ntcp ok\n"},
		{[]string{"--no-seccomp"}, "unix ok\nudp ok\ntcp ok\n"},
	} {
		args := append([]string{"run", "--workspace", ws, "--timeout", "1m"}, tc.flags...)
		code, stdout, stderr := runCLI(t, append(args, "--", bin)...)
		assert.Equal(t, 0, code, "%v: %s", tc.flags, stderr)
		assert.Equal(t, tc.want, stdout, "%v", tc.flags)
	}
}
