package sandbox_test

import (
	"testing"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) {
	exec.Init()
	kerneltest.SerializeAudit() // --explain's tests use the machine's audit state: see its doc
	kerneltest.Main(m)
}
