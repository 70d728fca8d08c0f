package kerneltest

import (
	"os"
	osexec "os/exec"
)

// runChild runs the current test binary with args and env and returns its
// combined output; err is non-nil when it did not exit 0.
func runChild(args, env []string) ([]byte, error) {
	cmd := osexec.Command(os.Args[0], args...)
	cmd.Env = env
	return cmd.CombinedOutput()
}
