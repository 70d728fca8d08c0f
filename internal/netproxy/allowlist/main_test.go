package allowlist

import (
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

// The proxy uses no kernel feature that LANDJAIL_EMULATE changes; TestMain
// installs the emulation anyway so every mode runs these tests unchanged.
func TestMain(m *testing.M) { kerneltest.Main(m) }
