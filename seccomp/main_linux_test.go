package seccomp

import (
	"os"
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) {
	if os.Getenv(envProbe) == "1" {
		os.Exit(probeMain())
	}
	if p := os.Getenv(envDial); p != "" {
		os.Exit(dialMain(p))
	}
	kerneltest.Main(m)
}
