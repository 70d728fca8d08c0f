package exec_test

import "github.com/landjail/landjail/exec"

// The init stage is registered before TestMain (kerneltest.Main) runs, so
// a re-executed test binary becomes the PID-namespace init at once, and
// every test of this package with a namespace view runs its child under
// it (the default a program calling exec.Init gets). Through the exported
// entry point, so that is what the tests exercise.
func init() { exec.Init() }
