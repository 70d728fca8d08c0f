#include "textflag.h"
#include "go_asm.h"

// Linux amd64 system call numbers and flags used below.
#define SYS_read 0
#define SYS_write 1
#define SYS_close 3
#define SYS_rt_sigaction 13
#define SYS_clone 56
#define SYS_prctl 157
#define SYS_mount 165
#define SYS_exit_group 231
#define SYS_dup3 292
#define SYS_close_range 436
#define MS_RDONLY_NOSUID_NODEV_NOEXEC 15
#define MS_REC_PRIVATE 278528
#define EINTR 4

// func cloneInitVM(a *initArgs, stack uintptr) (pid uintptr, errno uintptr)
//
// clone(a.flags, stack) sharing the caller's memory (CLONE_VM is in
// a.flags): the child runs the code below on its own small stack (it
// pushes nothing; the stack is there for the kernel should a fault ever
// deliver a signal frame) and touches only *a (R12, preserved across the
// clone), so it needs no copy of the address space and costs the parent
// no copy-on-write faults. The child is initChild in assembly: SIGCHLD
// ignored, mount(/, MS_REC|MS_PRIVATE), the fresh procfs
// with a.procData (hidepid=4), the status word
// (8 zero bytes from a.buf) on statusW, keepR as fd 0, every other fd
// closed, then read(0) until EOF, then exit_group(0). On a failing step
// it writes {errno, step} (a.errno, a.step) and exits 1.
TEXT ·cloneInitVM(SB),NOSPLIT,$0-32
	MOVQ a+0(FP), R12
	MOVQ stack+8(FP), SI
	MOVQ initArgs_flags(R12), DI
	XORQ DX, DX
	XORQ R10, R10
	XORQ R8, R8
	MOVQ $SYS_clone, AX
	SYSCALL
	CMPQ AX, $0
	JEQ child
	JLT failed
	MOVQ AX, pid+16(FP)
	MOVQ $0, errno+24(FP)
	RET
failed:
	NEGQ AX
	MOVQ $0, pid+16(FP)
	MOVQ AX, errno+24(FP)
	RET

child:
	// rt_sigaction(SIGCHLD, &a.ign, NULL, 8)
	MOVQ $SYS_rt_sigaction, AX
	MOVQ $17, DI
	LEAQ initArgs_ign(R12), SI
	XORQ DX, DX
	MOVQ $8, R10
	SYSCALL
	MOVQ $1, R13
	CMPQ AX, $0
	JNE step_failed

	// mount(a.none, a.root, NULL, MS_REC|MS_PRIVATE, NULL)
	MOVQ $SYS_mount, AX
	MOVQ initArgs_none(R12), DI
	MOVQ initArgs_root(R12), SI
	XORQ DX, DX
	MOVQ $MS_REC_PRIVATE, R10
	XORQ R8, R8
	SYSCALL
	MOVQ $2, R13
	CMPQ AX, $0
	JNE step_failed

	// mount(a.proc, a.procDir, a.proc, MS_RDONLY|MS_NOSUID|MS_NODEV|MS_NOEXEC, a.procData)
	MOVQ $SYS_mount, AX
	MOVQ initArgs_proc(R12), DI
	MOVQ initArgs_procDir(R12), SI
	MOVQ initArgs_proc(R12), DX
	MOVQ $MS_RDONLY_NOSUID_NODEV_NOEXEC, R10
	MOVQ initArgs_procData(R12), R8
	SYSCALL
	MOVQ $3, R13
	CMPQ AX, $0
	JNE step_failed

	// write(a.statusW, &a.buf, 8): eight zero bytes, success.
	MOVQ $SYS_write, AX
	MOVQ initArgs_statusW(R12), DI
	LEAQ initArgs_buf(R12), SI
	MOVQ $8, DX
	SYSCALL
	CMPQ AX, $8
	JNE exit1

	// dup3(a.keepR, 0, 0)
	MOVQ $SYS_dup3, AX
	MOVQ initArgs_keepR(R12), DI
	XORQ SI, SI
	XORQ DX, DX
	SYSCALL
	CMPQ AX, $0
	JNE exit1

	// close_range(1, ~0U, 0), else close 1..4095 one by one.
	MOVQ $SYS_close_range, AX
	MOVQ $1, DI
	MOVL $0xffffffff, SI
	XORQ DX, DX
	SYSCALL
	CMPQ AX, $0
	JEQ wait
	MOVQ $1, R13
close_one:
	MOVQ $SYS_close, AX
	MOVQ R13, DI
	SYSCALL
	INCQ R13
	CMPQ R13, $4096
	JLT close_one

wait:
	// read(0, &a.buf, 1) until EOF or an error other than EINTR.
	MOVQ $SYS_read, AX
	XORQ DI, DI
	LEAQ initArgs_buf(R12), SI
	MOVQ $1, DX
	SYSCALL
	CMPQ AX, $-EINTR
	JEQ wait
	CMPQ AX, $0
	JGT wait
exit0:
	MOVQ $SYS_exit_group, AX
	XORQ DI, DI
	SYSCALL
	JMP exit0

step_failed:
	// a.errno = -AX, a.step = R13; write(a.statusW, &a.errno, 8)
	NEGQ AX
	MOVL AX, initArgs_errno(R12)
	MOVL R13, initArgs_step(R12)
	MOVQ $SYS_write, AX
	MOVQ initArgs_statusW(R12), DI
	LEAQ initArgs_errno(R12), SI
	MOVQ $8, DX
	SYSCALL
exit1:
	MOVQ $SYS_exit_group, AX
	MOVQ $1, DI
	SYSCALL
	JMP exit1
