package early_test

import (
	"os"
	osexec "os/exec"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envInitOrder makes the test binary exit at once (TestMain): it is
// re-executed with GODEBUG=inittrace=1 to list its initialization order.
const envInitOrder = "LANDJAIL_STAGESTART_EARLY_INITORDER"

func TestMain(m *testing.M) {
	if os.Getenv(envInitOrder) != "" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestInitBeforeOS: this package's initializer, which clones the stage,
// runs before package os is initialized (and so before os/exec and the
// rest of a program that imports them), right after syscall's: its
// imports need nothing more (GODEBUG=inittrace=1 of this test binary,
// whose packages are ordered by the same rule as landjail's). Control:
// os is initialized in the same binary. Shown able to fail: with an
// import of os in this package its initializer came after os (red).
func TestInitBeforeOS(t *testing.T) {
	c := osexec.Command(os.Args[0])
	c.Env = append(os.Environ(), envInitOrder+"=1", "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var order []string
	for _, m := range regexp.MustCompile(`(?m)^init (\S+) @`).FindAllStringSubmatch(string(out), -1) {
		order = append(order, m[1])
	}
	self := slices.Index(order, "github.com/landjail/landjail/internal/stagestart/early")
	osInit := slices.Index(order, "os")
	require.GreaterOrEqual(t, self, 0, "%s", out)
	require.GreaterOrEqual(t, osInit, 0, "control: os is initialized (%s)", out)
	assert.Less(t, self, osInit, "%q", order)
	assert.Less(t, slices.Index(order, "syscall"), self, "%q", order)
}
