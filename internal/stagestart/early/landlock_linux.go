package early

import "syscall"

// sysLandlockCreateRuleset is landlock_create_ruleset(2)'s number, the
// same on every architecture (Linux 5.13); written out, as package
// syscall has none and golang.org/x/sys/unix initializes late.
const sysLandlockCreateRuleset = 444

// landlockAvailable reports whether the kernel offers Landlock (its ABI
// version query, LANDLOCK_CREATE_RULESET_VERSION): without it there is
// no view, and no stage to start.
func landlockAvailable() bool {
	abi, _, e := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, 1)
	return e == 0 && int(abi) > 0
}
