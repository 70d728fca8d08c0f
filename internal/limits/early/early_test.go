package early

import (
	"fmt"
	"os"
	osexec "os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/limits"
)

// envReport makes the test binary report Started and exit (TestMain): it
// is re-executed with a command line of landjail's.
const envReport = "LANDJAIL_LIMITS_EARLY_REPORT"

func TestMain(m *testing.M) {
	if os.Getenv(envReport) != "" {
		fmt.Print(Started)
		limits.WaitEarly()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestGlance: a run is seen whatever its flags, up to "--"; help and
// --print-rules (any number of dashes, with a value after "=") and other
// subcommands are not; a "--help" after "--" is the command's.
func TestGlance(t *testing.T) {
	for args, want := range map[string]bool{
		"landjail run -- true":                         true,
		"landjail run --no-namespaces --net host -- x": true,
		"landjail run -- true --help":                  true,
		"landjail run --help":                          false,
		"landjail run -h":                              false,
		"landjail run --print-rules -- true":           false,
		"landjail run -print-rules=true -- true":       false,
		"landjail gc":                                  false,
		"landjail":                                     false,
		"landjail-nsinit":                              false,
	} {
		assert.Equal(t, want, Glance(strings.Fields(args)), args)
	}
}

// TestInitStarts: the package initializer starts limits.StartEarly for a
// run's command line and for nothing else; not for a process marked as
// landjail's init stage (LANDJAIL_NSINIT), whatever its argv. Control:
// the same run without the marker starts it. Shown able to fail: without
// the marker check in init, the marked run started it (red).
func TestInitStarts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		marker bool
		want   string
	}{
		{"control: a run", []string{"run", "--", "true"}, false, "true"},
		{"help", []string{"run", "--help"}, false, "false"},
		{"marked as a stage", []string{"run", "--", "true"}, true, "false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := osexec.Command(os.Args[0], tc.args...)
			c.Env = append(os.Environ(), envReport+"=1")
			if tc.marker {
				c.Env = append(c.Env, envNsinit+"=x")
			}
			out, err := c.Output()
			require.NoError(t, err, "%s", out)
			assert.Equal(t, tc.want, string(out))
		})
	}
}
