package exec

// cloneInitVM is in pidinit_vm_amd64.s: the init child in assembly,
// cloned with CLONE_VM on its own stack.
//
//go:noescape
func cloneInitVM(a *initArgs, stack uintptr) (pid uintptr, errno uintptr)

// haveCloneVM: this architecture has cloneInitVM.
const haveCloneVM = true
