#include "textflag.h"
#include "go_asm.h"

// Linux amd64 system call numbers used below.
#define SYS_clone 56
#define SYS_exit 60
#define SYS_mount 165
#define SYS_fsopen 430
#define MS_REC_PRIVATE 278528
#define FSOPEN_CLOEXEC 1

// func cloneUserNSProbe(p *userNSProbe) (pid uintptr, errno uintptr)
//
// clone(p.flags, p.stack): with CLONE_VM|CLONE_VFORK in p.flags the
// child shares the caller's memory, runs the code below on the small
// stack p.stack (it pushes nothing; the stack is there for the kernel)
// and the caller is suspended until the child exits, so the child may
// write its answer into *p (R12, preserved across the clone). The child
// is in the new user, mount and PID namespaces the user-namespace stage
// would make, and tries what the stage does first there:
// mount(NULL, p.root, NULL, MS_REC|MS_PRIVATE, NULL), step 1, and
// fsopen(p.tmpfs, FSOPEN_CLOEXEC), step 2 (its descriptor dies with the
// child). It stores p.step = 0 on success, else the failing step and
// p.errno, then exit(0).
TEXT ·cloneUserNSProbe(SB),NOSPLIT,$0-24
	MOVQ p+0(FP), R12
	MOVQ userNSProbe_flags(R12), DI
	MOVQ userNSProbe_stack(R12), SI
	XORQ DX, DX
	XORQ R10, R10
	XORQ R8, R8
	MOVQ $SYS_clone, AX
	SYSCALL
	CMPQ AX, $0
	JEQ child
	JLT failed
	MOVQ AX, pid+8(FP)
	MOVQ $0, errno+16(FP)
	RET
failed:
	NEGQ AX
	MOVQ $0, pid+8(FP)
	MOVQ AX, errno+16(FP)
	RET

child:
	MOVQ $SYS_mount, AX
	XORQ DI, DI
	MOVQ userNSProbe_root(R12), SI
	XORQ DX, DX
	MOVQ $MS_REC_PRIVATE, R10
	XORQ R8, R8
	SYSCALL
	MOVL $1, userNSProbe_step(R12)
	CMPQ AX, $0
	JNE childfailed

	MOVQ $SYS_fsopen, AX
	MOVQ userNSProbe_tmpfs(R12), DI
	MOVQ $FSOPEN_CLOEXEC, SI
	SYSCALL
	MOVL $2, userNSProbe_step(R12)
	CMPQ AX, $0
	JLT childfailed

	MOVL $0, userNSProbe_step(R12)
	JMP exit
childfailed:
	NEGQ AX
	MOVL AX, userNSProbe_errno(R12)
exit:
	MOVQ $SYS_exit, AX
	XORQ DI, DI
	SYSCALL
	JMP exit
