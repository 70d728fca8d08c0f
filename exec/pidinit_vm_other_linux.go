//go:build linux && !amd64

package exec

// haveCloneVM: no assembly init on this architecture; newPIDInit forks
// (cloneInit, copy-on-write) instead.
const haveCloneVM = false

// cloneInitVM is never called where haveCloneVM is false.
func cloneInitVM(*initArgs, uintptr) (uintptr, uintptr) { panic("exec: cloneInitVM without assembly") }
