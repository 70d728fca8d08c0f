package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/cliopts"
	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/kerneltest"
)

// TestRunLearnSystem: red team R8-4 (learn_system.sh) as a test, in both
// layers, as root. The command creates a file in /etc, /usr/local/bin,
// /usr/local/lib and /var/lib and in an output directory outside every
// root; every create is refused. FILE learns only the output directory
// (the control: an ordinary output location is still learned), the four
// system ones are refused by design, and none of the files exists
// afterwards. Red before the fix: rw of /etc, /usr/local/bin,
// /usr/local/lib and /var/lib too. Needs root (as another user the
// kernel's own permissions refuse these creates, not the sandbox) and
// Landlock ABI 7 (audit) for the Landlock-only layer's records.
func TestRunLearnSystem(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the system directories must be writable but for the sandbox")
	}
	kerneltest.RequireLandlockABI(t, 7)
	if ok, why := denials.Available(); !ok {
		kerneltest.Missing(t, "Landlock audit records: %s", why)
		return
	}
	bin := landjailBin(t)
	name := fmt.Sprintf("zz-landjail-learn-test-%d", os.Getpid())
	planted := []string{"/etc/" + name, "/usr/local/bin/" + name, "/usr/local/lib/" + name + ".so", "/var/lib/" + name}
	for _, p := range planted {
		t.Cleanup(func() { os.Remove(p) }) // only if the sandbox failed
	}
	for _, layer := range []struct {
		name  string
		flags []string
	}{{"landlock-only", []string{"--no-namespaces"}}, {"default", nil}} {
		t.Run(layer.name, func(t *testing.T) {
			_, nsBlocked := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			if errno, ok := kerneltest.Blocked(kerneltest.FeatureOpenat2); ok && layer.flags == nil && !nsBlocked {
				t.Skipf("openat2 blocked with %v by LANDJAIL_EMULATE: the view's refusals are not recorded", errno)
			}
			outDir, err := os.MkdirTemp("/var/tmp", "landjail-learn-sys-")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(outDir) })
			ws := wsDir(t)
			cfg := wsDir(t) + "/learned.toml"
			script := ""
			for _, p := range append(planted, outDir+"/result") {
				script += "echo x > " + p + "; "
			}
			code, out := runBin(t, bin, os.Environ(), append(append([]string{"run", "--workspace", ws}, layer.flags...),
				"--learn", cfg, "--", "sh", "-c", script+"true")...)
			require.Equal(t, 0, code, out)
			for _, p := range planted {
				_, err := os.Lstat(p)
				assert.ErrorIs(t, err, os.ErrNotExist, "%s planted\n%s", p, out)
			}
			got, err := os.ReadFile(cfg)
			require.NoError(t, err, out)
			o, err := cliopts.ReadConfig(cfg)
			require.NoError(t, err)
			assert.Equal(t, []string{outDir}, o.RW, "%s\n%s", got, out)
			for _, p := range planted { // Landlock's audit record names the directory, the view's the file
				line := func(q string) string { return "# refused by design: \"" + q + "\" (could plant code" }
				assert.True(t, strings.Contains(string(got), line(p)) || strings.Contains(string(got), line(filepath.Dir(p))),
					"%s not refused by design\n%s\n%s", p, got, out)
			}
			assert.Equal(t, 1, strings.Count(out, "landjail: --learn: + "), out)
		})
	}
}
