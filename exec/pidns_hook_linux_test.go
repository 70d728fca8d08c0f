package exec_test

import "github.com/landjail/landjail/internal/nsinit"

// The init stage is registered before TestMain (kerneltest.Main) runs, so
// a re-executed test binary becomes the PID-namespace init at once, and
// every test of this package with a namespace view runs its child under
// it (the default a program calling nsinit.Main gets).
func init() { nsinit.Main() }
