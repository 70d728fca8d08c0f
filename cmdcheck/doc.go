// Package cmdcheck checks, statically and in userspace, every path a
// command names in its arguments, redirections and working directory
// against a policy before the command runs. It is landjail's confinement
// when Landlock is unavailable (Linux < 5.13, or the syscalls blocked by a
// seccomp profile): a best-effort filter, weaker than Landlock (a program
// can compute paths the check never sees), that refuses what it cannot
// verify. See [Check] for what it checks and what it does not protect
// against.
//
// Shell scripts (sh -c, bash -c, ...) are parsed with mvdan.cc/sh/v3; that
// dependency is why the check lives in its own package: programs that only
// open files (package openat) do not link the shell parser.
//
// The files follow the check's concerns: check.go the API and the walk from
// argv, errors.go the errors, words.go a word's static value (brace
// expansion, quote removal), paths.go which parts of a word are paths and
// how they are checked, table.go what known commands do (shells, wrappers,
// builtins, env -S), script.go the walk over a parsed script.
package cmdcheck
