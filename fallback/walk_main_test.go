package fallback

import (
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestMain is shared by every test of the package (the walk's and the
// command checks'): it applies the LANDJAIL_EMULATE kernel emulation.
func TestMain(m *testing.M) { kerneltest.Main(m) }
