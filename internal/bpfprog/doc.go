// Package bpfprog is landjail's one builder of seccomp-BPF programs: the
// confined child's filter (package seccomp), the pooled spawner thread's
// guard (package exec) and the kernel-emulation filter of the test harness
// (internal/kerneltest) are all a Program compiled here.
//
// A Program is a decision list: an architecture check, then Rules tried in
// order, the first whose syscall number matches and whose conditions on
// the arguments all hold deciding the Action, else Program.Default. It
// compiles to classic BPF, which finds the syscall number's rules by a
// binary search and tries them in order. The program is assembled with
// golang.org/x/net/bpf and every jump offset is computed: a conditional jump can skip at most 255
// instructions, so a longer one goes through an unconditional BPF_JA
// (32-bit offset) placed right after it; a program longer than
// BPF_MAXINSNS (4096) is an error. VM runs a compiled program in
// x/net/bpf's interpreter on a synthetic struct seccomp_data, so the
// decisions are tested without a kernel.
//
// Sources: seccomp(2), include/uapi/linux/seccomp.h,
// Documentation/userspace-api/seccomp_filter.rst, and
// Documentation/networking/filter.rst for classic BPF.
//
// Linux only, amd64 and arm64 (little-endian: an argument's low word
// comes first); this file only documents the package elsewhere.
package bpfprog
