// Package nsinit is the init stage of a confined child's PID namespace: a
// re-execution of the running binary that becomes PID 1 of a new PID (and
// mount) namespace, mounts a fresh procfs there, confines its own locked
// thread (capabilities, no_new_privs, Landlock, seccomp) and forks the
// target, then forwards signals to the target's process group, reaps every
// process reparented to it and exits with the target's status. When it
// exits the kernel kills whatever is left in the namespace
// (pid_namespaces(7)), so a background process cannot outlive the run.
//
// Why a re-executed stage: a procfs shows the PID namespace of the process
// that mounts it, so the mount has to be made from inside the new
// namespace, and a Go process cannot run Go code in a forked child without
// execve. Bubblewrap has the same stage (its --as-pid-1 discussion: a
// program run directly as PID 1 ignores SIGTERM and SIGINT without
// handlers and leaves zombies).
//
// Programs register the stage by calling Main first thing in main (and
// test binaries in TestMain, or in an init function): in the re-executed
// process it never returns; in the ordinary process it returns at once,
// opens /proc/self/exe once (the binary re-executed later, even if the
// file on disk is replaced or deleted meanwhile) and marks the stage
// registered (Registered). Package exec uses the stage only when it is
// registered.
//
// Linux only; elsewhere Main does nothing and Registered is false.
package nsinit

// EnvMarker is the environment variable that marks the re-executed init
// stage; its value is "SPEC,STATUS": the descriptor numbers of the spec
// pipe (read end) and the status pipe (write end).
const EnvMarker = "LANDJAIL_NSINIT"

// Argv0 is argv[0] of the re-executed init stage (what ps shows as PID 1
// inside the namespace).
const Argv0 = "landjail-init"

// Spec is what the parent sends the init stage over the spec pipe, as
// JSON. File descriptors 0..NFiles-1 of the init stage are handed to the
// target in place (stdio and the caller's ExtraFiles).
type Spec struct {
	Path string   `json:"path"` // executable, as for execve(2)
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"` // working directory (absolute)

	// Credential, when HasCred, is the target's uid, gid and groups.
	HasCred     bool     `json:"has_cred,omitempty"`
	UID         uint32   `json:"uid,omitempty"`
	GID         uint32   `json:"gid,omitempty"`
	Groups      []uint32 `json:"groups,omitempty"`
	NoSetGroups bool     `json:"no_set_groups,omitempty"`

	// Setctty and Ctty: as syscall.SysProcAttr (the target always runs
	// in a new session).
	Setctty bool `json:"setctty,omitempty"`
	Ctty    int  `json:"ctty,omitempty"`

	// NFiles is how many descriptors (from 0) the target inherits.
	NFiles int `json:"nfiles"`

	// KeepCaps keeps the capabilities (see exec.Cmd.KeepCaps).
	KeepCaps bool `json:"keep_caps,omitempty"`
	// LandlockFD is the inherited Landlock ruleset descriptor (-1: none)
	// and LandlockFlags landlock_restrict_self's flags.
	LandlockFD    int    `json:"landlock_fd"`
	LandlockFlags uint32 `json:"landlock_flags,omitempty"`
	// ExeFD is the inherited descriptor of the binary the stage was
	// executed from (closed once the target runs; -1: none).
	ExeFD int `json:"exe_fd"`
	// Seccomp is the BPF program (struct sock_filter, 8 bytes each,
	// native byte order) installed on the init's locked thread before
	// the fork; empty means none.
	Seccomp []byte `json:"seccomp,omitempty"`
}

// Status is what the init stage writes back on the status pipe before
// closing it: Errno 0 once the target is running (its execve succeeded),
// else the errno of the step that failed and a message.
type Status struct {
	Errno int    `json:"errno,omitempty"`
	Op    string `json:"op,omitempty"`
	Msg   string `json:"msg,omitempty"`
}
