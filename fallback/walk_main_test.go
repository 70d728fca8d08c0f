package fallback

import (
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestMain applies the LANDJAIL_EMULATE kernel emulation to the walk's
// tests.
func TestMain(m *testing.M) { kerneltest.Main(m) }
