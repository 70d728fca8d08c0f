// Package nsinit is the user-namespace stage: for a caller without
// CAP_SYS_ADMIN, a re-execution of the running binary, cloned into new
// user, mount and PID namespaces (the caller's uid and gid mapped to
// themselves, CAP_SYS_ADMIN and CAP_NET_ADMIN kept across its execve as
// ambient capabilities, valid only in that user namespace). As PID 1
// there it builds the namespace view on a locked thread (nsview), mounts
// a fresh procfs (hidepid=4), adds a Landlock rule for it to the ruleset
// it was handed, confines that thread (capabilities dropped, ambient ones
// cleared, no_new_privs, Landlock, seccomp) and forks the target, which
// runs as the caller's uid with no capability; then it forwards signals
// to the target's process group, reaps every process reparented to it and
// exits with the target's status. When it exits the kernel kills whatever
// is left in the namespace (pid_namespaces(7)).
//
// Why a re-executed stage: a user namespace needs a single-threaded
// caller (unshare(2), setns(2)), which a Go process never is, and the view
// is too much work for code running in a forked copy of a Go process
// without execve. As root, package exec builds the view on a thread of
// its own and needs no stage.
//
// Programs register the stage by calling Main first thing in main (and
// test binaries in TestMain, or in an init function). The re-executed
// process (argv {Argv0}, an environment of EnvMarker and GOMAXPROCS only,
// PID 1) runs the stage from this package's initialisation and never
// reaches main (the packages initialised after this one never are):
// Main there would run it too and never return; in the ordinary process it returns at once,
// opens /proc/self/exe once (the binary re-executed later, even if the
// file on disk is replaced or deleted meanwhile) and marks the stage
// registered (Registered). Package exec uses the stage only when it is
// registered.
//
// Linux only; elsewhere Main does nothing and Registered is false.
package nsinit

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/wire"
)

// EnvMarker is the environment variable that marks the re-executed init
// stage; its value is "SPEC,STATUS[,net][,ids=UID:GID]": the descriptor
// numbers of the spec pipe (read end) and the status pipe (write end),
// "net" when the view has a network namespace of its own (the stage
// starts making it before it reads the spec), and the caller's uid and
// gid, which the stage maps to themselves in its user namespace first
// thing (setgroups denied) when it was cloned without maps (package exec
// clones it with CLONE_VM|CLONE_VFORK: the forking thread is suspended
// until the stage's execve and cannot write them). SPEC equal to STATUS names one AF_UNIX
// stream socket that carries both: first the view, as a frame (a 4-byte
// little-endian length, then Ahead.AppendBinary), which the stage starts
// building at once; then the spec (Spec.AppendBinary), its View omitted, possibly with
// descriptors (Spec.Passed), which the stage reads until the parent shuts
// its side down for writing; then the stage writes the status on it.
const EnvMarker = "LANDJAIL_NSINIT"

// Argv0 is argv[0] of the re-executed init stage (what ps shows as PID 1
// inside the namespace).
const Argv0 = "landjail-init"

// Spec is what the parent sends the init stage over the spec pipe, in
// its binary form (AppendBinary; the JSON tags are not the wire). File descriptors 0..NFiles-1 of the init stage are handed to the
// target in place (stdio and the caller's ExtraFiles).
type Spec struct {
	Path string   `json:"path"` // executable, as for execve(2)
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"` // working directory (absolute)

	// Setctty and Ctty: as syscall.SysProcAttr (the target always runs
	// in a new session).
	Setctty bool `json:"setctty,omitempty"`
	Ctty    int  `json:"ctty,omitempty"`

	// NFiles is how many descriptors (from 0) the target inherits.
	NFiles int `json:"nfiles"`
	// Passed: the target's NFiles descriptors and then the Landlock
	// ruleset came with the spec (SCM_RIGHTS on the socket, exactly
	// NFiles+1 of them; the stage's own 0..NFiles-1 are not the
	// target's), instead of being inherited as 0..NFiles-1 and
	// LandlockFD. A stage started before its command was known
	// (exec.PrestartUserStage) gets them so. LandlockFD is then ignored.
	Passed bool `json:"passed,omitempty"`

	// LandlockFD is the inherited Landlock ruleset descriptor (-1: none)
	// and LandlockFlags landlock_restrict_self's flags.
	LandlockFD    int    `json:"landlock_fd"`
	LandlockFlags uint32 `json:"landlock_flags,omitempty"`
	// ExeFD is the inherited descriptor of the binary the stage was
	// executed from (closed once the target runs; -1: none).
	ExeFD int `json:"exe_fd"`
	// KeepFD is the read end of the parent's keep-alive pipe (-1:
	// none): at end of file the parent is gone, and the stage exits,
	// which ends its PID namespace and every process in it.
	KeepFD int `json:"keep_fd"`
	// Seccomp is the BPF program (struct sock_filter, 8 bytes each,
	// native byte order) installed on the init's locked thread before
	// the fork; empty means none.
	Seccomp []byte `json:"seccomp,omitempty"`
	// SeccompListener installs Seccomp with a notification listener
	// (SECCOMP_FILTER_FLAG_NEW_LISTENER), kept open in the stage and
	// reported in Status.Listener for the parent to take with
	// pidfd_getfd and serve (seccomp.Filter.Serve: --explain as a
	// non-root caller). Until it is served the target's notified calls
	// wait.
	SeccompListener bool `json:"seccomp_listener,omitempty"`
	// View is the namespace view the stage builds (nsview.View.Enter) on
	// the thread that forks the target, inside the user namespace it was
	// cloned into (nil on the socket: the view came ahead, see
	// EnvMarker); a fresh procfs is then mounted on /proc there, and
	// LandlockFD (a ruleset of the stage's own, landlock.Ruleset.ForkFD)
	// gets a rule granting it read access.
	View *nsview.View `json:"view"`
	// TmpAccess, when not 0, is granted (LANDLOCK_ACCESS_FS_* rights)
	// on the view's private /tmp in LandlockFD once the view is built
	// (nsview.GrantPrivateTmp): the fresh tmpfs is a mount point that no
	// rule of the ruleset reaches.
	TmpAccess uint64 `json:"tmp_access,omitempty"`
	// Linger (exec.Cmd.DeferNamespaceEnd): once the target has exited
	// and no other process is left in the namespace (the stage has no
	// child: every process of the namespace descends from it), the
	// stage writes an Exit line on the status channel, which it keeps
	// open after the Status line for this, and then waits for end of
	// file on KeepFD (the parent's exit) before it exits: the
	// namespaces' teardown (the mount namespace's RCU grace period, the
	// stage's memory, its /proc entries) then follows the parent's exit
	// instead of preceding its Wait. With a process left the stage
	// closes the status channel and exits as without Linger (the kernel
	// kills the rest of the namespace), and the parent reaps it.
	Linger bool `json:"linger,omitempty"`
	// Rlimits are set, soft and hard, on the stage itself right before
	// it forks the target, which inherits them: after the fork the stage
	// only waits and reaps, so it never needs a lowered hard limit back,
	// and the target cannot raise them even where the parent, lacking
	// CAP_SYS_RESOURCE, could set only soft ones on itself for the
	// stage's clone (exec.Cmd.Rlimits; red team round 23, R23b-2). A
	// limit above the stage's hard limit is lowered to it, a soft one
	// above the hard one to the hard one. At most MaxRlimits.
	Rlimits []Rlimit `json:"rlimits,omitempty"`
}

// Rlimit is one resource limit of Spec.Rlimits: setrlimit(2)'s
// Resource (unix.RLIMIT_*) and its soft (Cur) and hard (Max) values.
type Rlimit struct {
	Resource int
	Cur, Max uint64
}

// MaxRlimits bounds Spec.Rlimits on the wire (RLIM_NLIMITS is 16).
const MaxRlimits = 16

// Ahead is the frame that comes first on a stage's socket (EnvMarker):
// the view (nsview.View.AppendBinary) and the mount table the parent read
// (nsview.LastMountTable: the stage's mount namespace is a copy of the
// parent's) with fs.mount-max, which the stage's mount-limit check then
// uses (nsview.KeepMountTable) instead of reading its own; nil when the
// parent read none. Its wire form is AppendBinary's.
type Ahead struct {
	View     []byte // nsview.View.AppendBinary
	Mounts   []string
	MountMax int // fs.mount-max read with Mounts; 0: unknown
}

// Tags open the binary forms (AppendBinary).
const (
	specTag  = 'S'
	aheadTag = 'A'
)

// AppendBinary appends a's binary form (internal/wire) to b: the frame
// sent ahead of the spec.
func (a *Ahead) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, aheadTag)
	b = wire.AppendBytes(b, a.View)
	b = wire.AppendStrings(b, a.Mounts)
	return wire.AppendInt(b, a.MountMax), nil
}

// UnmarshalBinary decodes what AppendBinary appended, exactly, into a
// (View is a subslice of b).
func (a *Ahead) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != aheadTag {
		return wire.ErrMalformed
	}
	r := wire.NewReader(b[1:])
	d := Ahead{View: r.Bytes(), Mounts: r.Strings(), MountMax: r.Int()}
	if err := r.Done(); err != nil {
		return err
	}
	*a = d
	return nil
}

// AppendBinary appends sp's binary form (internal/wire), every field in
// the order of the struct, the View (when not nil) as its own binary
// form, to b: what the parent writes on the spec pipe or socket.
// Encoding/json did this before, for ≈0.2 ms of CPU in the parent and
// ≈0.35 in the stage (its first use on each type: round 9 of issue 25).
func (sp *Spec) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, specTag)
	b = wire.AppendString(b, sp.Path)
	b = wire.AppendStrings(b, sp.Argv)
	b = wire.AppendStrings(b, sp.Env)
	b = wire.AppendString(b, sp.Dir)
	b = wire.AppendBool(b, sp.Setctty)
	b = wire.AppendInt(b, sp.Ctty)
	b = wire.AppendInt(b, sp.NFiles)
	b = wire.AppendBool(b, sp.Passed)
	b = wire.AppendInt(b, sp.LandlockFD)
	b = wire.AppendUint(b, uint64(sp.LandlockFlags))
	b = wire.AppendInt(b, sp.ExeFD)
	b = wire.AppendInt(b, sp.KeepFD)
	b = wire.AppendBytes(b, sp.Seccomp)
	b = wire.AppendBool(b, sp.SeccompListener)
	b = wire.AppendBool(b, sp.View != nil)
	if sp.View != nil {
		v, err := sp.View.AppendBinary(nil)
		if err != nil {
			return nil, err
		}
		b = wire.AppendBytes(b, v)
	}
	b = wire.AppendUint(b, sp.TmpAccess)
	b = wire.AppendBool(b, sp.Linger)
	if len(sp.Rlimits) > MaxRlimits {
		return nil, wire.ErrMalformed
	}
	b = wire.AppendUint(b, uint64(len(sp.Rlimits)))
	for _, l := range sp.Rlimits {
		b = wire.AppendInt(b, l.Resource)
		b = wire.AppendUint(b, l.Cur)
		b = wire.AppendUint(b, l.Max)
	}
	return b, nil
}

// UnmarshalBinary decodes what AppendBinary appended, exactly (anything
// else, trailing bytes included, fails with wire.ErrMalformed), into sp.
func (sp *Spec) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != specTag {
		return wire.ErrMalformed
	}
	r := wire.NewReader(b[1:])
	d := Spec{
		Path: r.String(), Argv: r.Strings(), Env: r.Strings(), Dir: r.String(),
		Setctty: r.Bool(), Ctty: r.Int(), NFiles: r.Int(), Passed: r.Bool(),
		LandlockFD: r.Int(), LandlockFlags: r.Uint32(), ExeFD: r.Int(), KeepFD: r.Int(),
		Seccomp: r.Bytes(), SeccompListener: r.Bool(),
	}
	if r.Bool() {
		var v nsview.View
		if err := v.UnmarshalBinary(r.Bytes()); err != nil {
			return err
		}
		d.View = &v
	}
	d.TmpAccess, d.Linger = r.Uint(), r.Bool()
	n := r.Uint()
	if n > MaxRlimits {
		return wire.ErrMalformed
	}
	for range n {
		d.Rlimits = append(d.Rlimits, Rlimit{Resource: r.Int(), Cur: r.Uint(), Max: r.Uint()})
	}
	if err := r.Done(); err != nil {
		return err
	}
	*sp = d
	return nil
}

// Exit is the second line a lingering stage (Spec.Linger) writes on the
// status channel: the target's exit code, 128+n when a signal n killed
// it, as the stage's own exit status would have been.
type Exit struct {
	Code int `json:"code"`
}

// Status is what the init stage writes back on the status pipe, as one
// line of JSON, before closing it (with Spec.Linger and the target
// running, an Exit line follows later): Errno 0 once the target is
// running (its execve succeeded), else the errno of the step that failed
// and a message.
type Status struct {
	Errno int    `json:"errno,omitempty"`
	Op    string `json:"op,omitempty"`
	Msg   string `json:"msg,omitempty"`
	// Listener is the stage's descriptor of the seccomp listener
	// (Spec.SeccompListener), 0 when none.
	Listener int `json:"listener,omitempty"`
}

// statusLine is the Status line of a stage whose target runs, listener
// its seccomp listener (0: none), as json.NewEncoder(w).Encode writes it
// (`{}` or `{"listener":N}`, then a newline), without encoding/json: its
// first use on a type builds reflection caches, which the stage paid
// ahead of the spec (warmJSON, ≈0.2 ms of its CPU a run, before round 9
// of issue 25). A failed stage's line still comes from encoding/json.
func statusLine(listener int) []byte {
	if listener == 0 {
		return []byte("{}\n")
	}
	return append(strconv.AppendInt([]byte(`{"listener":`), int64(listener), 10), "}\n"...)
}

// exitLine is the Exit line for code, as json.NewEncoder(w).Encode writes
// it, without encoding/json.
func exitLine(code int) []byte {
	return append(strconv.AppendInt([]byte(`{"code":`), int64(code), 10), "}\n"...)
}

// ParseStatus decodes a Status line (its newline optional): the form
// statusLine writes without encoding/json, anything else through it
// (encoding/json's first use on the type cost the parent ≈30 µs).
func ParseStatus(line []byte) (Status, error) {
	var st Status
	if n, ok := intLine(line, `{"listener":`); ok && n > 0 {
		st.Listener = n
		return st, nil
	}
	if string(bytes.TrimSuffix(line, []byte("\n"))) == "{}" {
		return st, nil
	}
	err := json.Unmarshal(line, &st)
	return st, err
}

// ParseExit decodes an Exit line (its newline optional) as ParseStatus
// does a Status line.
func ParseExit(line []byte) (Exit, error) {
	if n, ok := intLine(line, `{"code":`); ok {
		return Exit{Code: n}, nil
	}
	var x Exit
	err := json.Unmarshal(line, &x)
	return x, err
}

// intLine returns N when line is exactly prefix, N in decimal digits
// (no sign, no leading zero, at most 9 digits), "}" and an optional
// newline.
func intLine(line []byte, prefix string) (int, bool) {
	rest, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\n")), []byte(prefix))
	if !ok {
		return 0, false
	}
	digits, ok := bytes.CutSuffix(rest, []byte("}"))
	if !ok || len(digits) == 0 || len(digits) > 9 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(digits))
	return n, err == nil
}
