package seccomp

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/bpfprog"
)

// Explaining refusals (Options.Explain). The program Build compiles then
// differs from the usual one in two ways, and only when asked:
//
//   - every entry that returns SECCOMP_RET_ERRNO returns
//     SECCOMP_RET_USER_NOTIF instead: the supervisor finds the rule (the
//     same first-match walk over the same entries, in Go), records it with
//     the call's arguments and answers the rule's errno. It never lets the
//     call run (no SECCOMP_USER_NOTIF_FLAG_CONTINUE), so nothing the child
//     changes in between can matter: the answer is the one the filter
//     would have given.
//   - the syscalls that open or create a path (openat, mkdirat; open,
//     creat and mkdir where they exist) are observed: the supervisor
//     copies the path, looks at it in the child's view (from
//     /proc/TID/root, RESOLVE_IN_ROOT, O_PATH), and records what refuses
//     such a call before any LSM is asked: a read-only mount for a write or
//     a creation (EROFS, sb_permission and mnt_want_write), a file with no
//     permission bits for a process without capabilities (EACCES, the
//     namespace layer's masks); with a broker (InstallBroker) and
//     Options.ExplainReads, a read
//     Landlock refuses (the broker's own read-only open of the same name
//     fails with EACCES, this process's succeeds). Then it answers
//     SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel runs the call with
//     every layer in force, as without the observation. The observation
//     only ever adds a record; it decides nothing, so the race the
//     seccomp_unotify(2) manual warns about (the child changes the path
//     after it was read) can only make a record wrong, never let a call
//     through.
//
// execve is not observed: the Go runtime's fork (CLONE_VFORK) holds the
// spawning thread of this process, not preemptible, until the child's
// execve returns; a garbage collection starting then would wait for that
// thread while the child waits for the supervisor, a goroutine of the
// same process. The same holds for any thread of this process that makes
// a refused or observed call with a raw syscall (x/sys/unix.Socket): a
// filter installed in the supervisor's own process (tests) must make
// those calls with unix.Syscall.
//
// The cost is one round trip to the supervisor per observed call (see
// BenchmarkExplainOpen); without Options.Explain the program is the usual
// one, byte for byte.

// decision is one compiled entry with its number, for the supervisor's walk.
type decision struct {
	rule  string
	nr    uint32
	conds []bpfprog.Cond
	ret   bpfprog.Action
}

// observed syscalls: where their directory descriptor (-1: none, the
// working directory), path and open flags (-1: none) are, and the access.
type observedCall struct {
	name               string
	dirfd, path, flags int
	access             string // "" for an open: decided by its flags
}

var observedCalls = []observedCall{
	{name: "openat", dirfd: 0, path: 1, flags: 2},
	{name: "mkdirat", dirfd: 0, path: 1, flags: -1, access: "create"},
	// amd64's older forms (absent from syscallNumbers elsewhere).
	{name: "open", dirfd: -1, path: 0, flags: 1},
	{name: "creat", dirfd: -1, path: 0, flags: -1, access: "write"},
	{name: "mkdir", dirfd: -1, path: 0, flags: -1, access: "create"},
}

// observeRule is the rule, reported last, that hands the observed
// syscalls to the supervisor (Options.Explain).
func observeRule() rule {
	r := rule{Rule: Rule{Name: "explain-observe", Syscall: "openat, mkdirat (and open, creat, mkdir)",
		Action: actNotify + ", then SECCOMP_USER_NOTIF_FLAG_CONTINUE",
		Reason: "--explain: the supervisor records what the view refuses (a read-only mount, a mode-0000 mask) and lets the kernel decide the call; it decides nothing"}}
	for _, c := range observedCalls {
		if _, ok := syscallNumbers()[c.name]; ok {
			r.entries = append(r.entries, entry{syscall: c.name, ret: bpfprog.UserNotif})
		}
	}
	return r
}

// explained returns rs with every errno entry handed to the supervisor,
// the observe rule last, and the decisions the supervisor walks.
func explained(rs []rule) ([]rule, []decision) {
	var ds []decision
	out := make([]rule, 0, len(rs)+1)
	for _, r := range rs {
		es := make([]entry, len(r.entries))
		for i, e := range r.entries {
			ds = append(ds, decision{rule: r.Name, nr: syscallNumbers()[e.syscall], conds: e.conds, ret: e.ret})
			if uint32(e.ret)&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO {
				e.ret = bpfprog.UserNotif
			}
			es[i] = e
		}
		r.entries = es
		out = append(out, r)
	}
	return append(out, observeRule()), ds
}

// holds evaluates c on args as the compiled program does (bpfprog's asm.cond).
func holds(c bpfprog.Cond, args [6]uint64) bool {
	w := uint32(args[c.Arg])
	if c.High {
		w = uint32(args[c.Arg] >> 32)
	}
	if c.Op == bpfprog.AnyBits {
		return w&c.Vals[0] != 0
	}
	if c.Mask != 0 {
		w &= c.Mask
	}
	found := false
	for _, v := range c.Vals {
		found = found || w == v
	}
	if c.Op == bpfprog.NotIn {
		return !found
	}
	return found
}

// decide is the first decision for nr whose conditions hold: its rule and
// action, or ("", Allow) when none does.
func (f *Filter) decide(nr uint32, args [6]uint64) (string, bpfprog.Action) {
	for _, d := range f.decisions {
		if d.nr != nr {
			continue
		}
		ok := true
		for _, c := range d.conds {
			ok = ok && holds(c, args)
		}
		if ok {
			return d.rule, d.ret
		}
	}
	return "", bpfprog.Allow
}

// explainAnswer answers req under Options.Explain when it is a refused or
// an observed call, and reports whether it did; listen and
// inotify_add_watch are left to their handlers.
func (f *Filter) explainAnswer(req *seccompNotif, resp *seccompNotifResp, b Broker) bool {
	nr := uint32(req.nr)
	name, act := f.decide(nr, req.args)
	switch {
	case act == bpfprog.UserNotif:
		return false
	case uint32(act)&unix.SECCOMP_RET_ACTION_FULL == unix.SECCOMP_RET_ERRNO:
		errno := unix.Errno(uint32(act) & unix.SECCOMP_RET_DATA)
		e := Event{Syscall: syscallName(nr), Rule: name, Errno: errno, Comm: comm(int(req.pid))}
		if nr == unix.SYS_SOCKET || nr == unix.SYS_SOCKETPAIR {
			copy(e.Args[:], req.args[:3])
		}
		f.events.add(e)
		resp.error = -int32(errno)
		return true
	}
	// Observed (the program notifies nothing else): record, then let
	// the kernel decide.
	if !f.explainReads {
		b = nil
	}
	if e, ok := observe(req, b); ok {
		f.events.add(e)
	}
	resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	return true
}

// syscallName is the rules' name for nr.
func syscallName(nr uint32) string {
	for n, v := range syscallNumbers() {
		if v == nr {
			return n
		}
	}
	return "syscall " + strconv.Itoa(int(nr))
}

// comm is thread tid's comm, "" when it cannot be read.
func comm(tid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}

// observe looks at an observed call's path in the child's view and
// returns the Event when the view refuses it.
func observe(req *seccompNotif, b Broker) (Event, bool) {
	nr := uint32(req.nr)
	var c *observedCall
	for i := range observedCalls {
		if n, ok := syscallNumbers()[observedCalls[i].name]; ok && n == nr {
			c = &observedCalls[i]
			break
		}
	}
	if c == nil {
		return Event{}, false
	}
	tid := int(req.pid)
	name, errno := readString(tid, uintptr(req.args[c.path]))
	if errno != 0 || name == "" {
		return Event{}, false
	}
	access := c.access
	if access == "" {
		fl := int(int32(req.args[c.flags]))
		switch {
		case fl&unix.O_PATH != 0:
			return Event{}, false // no permission is checked
		case fl&unix.O_CREAT != 0:
			access = "create"
		case fl&unix.O_ACCMODE != unix.O_RDONLY || fl&unix.O_TRUNC != 0:
			access = "write"
		default:
			access = "read"
		}
	}
	abs := name
	if !path.IsAbs(name) {
		base := "/proc/" + strconv.Itoa(tid) + "/cwd"
		if c.dirfd >= 0 && int32(req.args[c.dirfd]) != unix.AT_FDCWD {
			base = "/proc/" + strconv.Itoa(tid) + "/fd/" + strconv.Itoa(int(int32(req.args[c.dirfd])))
		}
		dir, err := os.Readlink(base)
		if err != nil || !path.IsAbs(dir) {
			return Event{}, false
		}
		abs = dir + "/" + name // not Clean: ".." is resolved where the kernel resolves it
	}
	// The name the kernel resolves, in the child's root: symbolic links
	// followed and ".." taken after them, as path resolution does
	// (filepath-securejoin's SecureJoin under /proc/TID/root). Cleaning
	// first judged "w/../d2" with w -> sub/inner as ./d2, not sub/d2: a
	// refusal was missed or invented, and --learn granted a directory
	// where nothing was refused (red team round 31, R31b-6).
	abs, ok := resolveInChildRoot(tid, abs)
	if !ok {
		return Event{}, false
	}
	root, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Event{}, false
	}
	defer unix.Close(root)
	fd, err := openInRoot(root, abs, unix.O_PATH|unix.O_CLOEXEC)
	exists := err == nil
	if err != nil {
		if err != unix.ENOENT || (access != "create" && access != "write") {
			return Event{}, false
		}
		// A new name: its directory decides (mnt_want_write).
		if fd, err = openInRoot(root, path.Dir(abs), unix.O_PATH|unix.O_CLOEXEC); err != nil {
			return Event{}, false
		}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	var sfs unix.Statfs_t
	if unix.Fstat(fd, &st) != nil || unix.Fstatfs(fd, &sfs) != nil {
		return Event{}, false
	}
	e := Event{Syscall: c.name, Path: abs, Access: access, Comm: comm(tid)}
	typ := st.Mode & unix.S_IFMT
	switch {
	case access == "read":
		if typ == unix.S_IFREG && st.Mode&0o7777 == 0 {
			e.Why, e.Errno = ViewNoPerm, unix.EACCES
			break
		}
		// Landlock's answer, without its audit records: the broker
		// opens the file as the child would (same ruleset, the child's
		// root), read-only and non-blocking, regular files and
		// directories only (no device or FIFO is opened twice).
		if b == nil || (typ != unix.S_IFREG && typ != unix.S_IFDIR) {
			return Event{}, false
		}
		const rd = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
		bfd, err := b.OpenAt(root, abs, rd, true)
		if err == nil {
			unix.Close(bfd)
			return Event{}, false
		}
		if errnoOrEACCES(err) != unix.EACCES {
			return Event{}, false
		}
		// The control: this thread, unconfined, same identity. Refused
		// too, the file's own permissions refuse it, not Landlock. It
		// reopens the regular file or directory fd pinned, never the
		// path again: resolved anew, a link the child swapped meanwhile
		// would make this unconfined thread open what the child may not
		// (a FIFO, /dev/watchdog: red team round 15, R15b-4).
		ufd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), rd, 0)
		if err != nil {
			return Event{}, false
		}
		unix.Close(ufd)
		e.Why, e.Errno = LandlockRead, unix.EACCES
	default: // write, create
		if sfs.Flags&unix.ST_RDONLY == 0 {
			return Event{}, false
		}
		// Devices, FIFOs and sockets are written on a read-only mount
		// (sb_permission checks regular files, directories and links).
		if exists && typ != unix.S_IFREG && typ != unix.S_IFDIR && typ != unix.S_IFLNK {
			return Event{}, false
		}
		if !exists {
			access = "create"
		}
		e.Access, e.Why, e.Errno = access, ViewReadOnly, unix.EROFS
	}
	return e, true
}

// resolveInChildRoot returns raw, absolute in the view of thread tid,
// with its directory resolved there: every symbolic link on the way
// followed and ".." applied to what the links led to, as the kernel's
// path walk does; a missing tail is kept as named. The last component
// is kept as named (the open, RESOLVE_IN_ROOT, follows it where it is a
// link, and the record names the link), unless it is "." or "..". Only
// records depend on it (the kernel decides the call), so the race of a
// link changed between this walk and the child's is a wrong record at
// worst.
func resolveInChildRoot(tid int, raw string) (string, bool) {
	root := "/proc/" + strconv.Itoa(tid) + "/root"
	raw = strings.TrimRight(raw, "/")
	dir, last := raw, ""
	if i := strings.LastIndexByte(raw, '/'); i >= 0 && raw[i+1:] != "." && raw[i+1:] != ".." {
		dir, last = raw[:i], raw[i+1:]
	}
	joined, err := securejoin.SecureJoin(root, dir)
	if err != nil {
		return "", false
	}
	rel := strings.TrimPrefix(joined, root)
	if rel != "" && rel[0] != '/' {
		return "", false
	}
	if last == "" {
		if rel == "" {
			rel = "/"
		}
		return rel, true
	}
	return rel + "/" + last, true
}

// openInRoot opens abs (absolute in the child's view) below root, the
// child's /proc/TID/root: openat2 with RESOLVE_IN_ROOT, or where openat2
// is unavailable (ENOSYS, EPERM: a container's seccomp profile) openat
// of the path made relative to root, whose absolute symbolic links then
// resolve from this process's root. Only records depend on it, never a
// decision, so that fallback can at worst make a record wrong.
func openInRoot(root int, abs string, flags int) (int, error) {
	fd, err := unix.Openat2(root, abs, &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err == unix.ENOSYS || err == unix.EPERM {
		rel := strings.TrimLeft(abs, "/")
		if rel == "" {
			rel = "."
		}
		return unix.Openat(root, rel, flags, 0)
	}
	return fd, err
}

// ExplainProgram is the program of a filter built with Options.Explain
// (refusals and observed calls notified), for a stage in another process
// that installs it with a listener and hands the listener back (package
// exec's user-namespace stage; see Serve). Nil for a filter without
// Explain.
func (f *Filter) ExplainProgram() []unix.SockFilter {
	if !f.Explained() {
		return nil
	}
	return append([]unix.SockFilter(nil), f.prog...)
}

// Serve starts the supervisor of f on listener, a notification listener
// (owned from now on) of ExplainProgram installed elsewhere: it records
// and answers as Install's supervisor does, without a broker
// (inotify_add_watch gets EPERM, no read is checked through a broker).
// It ends with the last task using that filter.
func (f *Filter) Serve(listener int) error {
	if !f.Explained() {
		unix.Close(listener)
		return fmt.Errorf("seccomp: Serve on a filter without Options.Explain")
	}
	return startSupervisor(listener, f, nil)
}
