package landlock

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/internal/nsinit"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// kernelABI is the one probe (internal/kernel), errata included.
func kernelABI() int { return kernel.LandlockABI() }

func startProbe(privateNetwork bool) {
	if kernelABI() > 0 {
		if unix.Geteuid() != 0 && nsinit.Registered() {
			go nsview.ProbeUserNS() // what Compile asks when not root
			return
		}
		if privateNetwork {
			nsview.PrepareNetwork() // the longer of the two: first
		}
		go nsview.Probe()
	}
}

// statPath opens path O_PATH (following symlinks, as the rule will) and
// reports whether it is a directory.
func statPath(path string) (bool, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return false, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

func compile(ws *jail.Workspace, opt Options) (*Ruleset, error) {
	abi := kernelABI()
	if opt.MaxABI > 0 {
		abi = min(abi, opt.MaxABI)
	}
	req, err := newRequest(ws, opt)
	if err != nil {
		return nil, err
	}
	userNS := false
	if opt.Namespaces && abi > 0 {
		req.viewErr = nsview.Probe()
		if req.viewErr != nil && errors.Is(req.viewErr, nsview.ErrNotPrivileged) && nsinit.Registered() {
			// Not root: the user-namespace stage can build the view.
			if err := nsview.ProbeUserNS(); err == nil {
				req.viewErr, userNS = nil, true
			} else {
				req.viewErr = err
			}
		}
		if req.viewErr == nil {
			// 0 and unchecked when unreadable: Enter checks again.
			req.mountBudget, err = nsview.MountBudget()
			req.checkMounts, err = err == nil, nil
		}
		if req.viewErr == nil && opt.System && opt.TmpDir != "" {
			req.shmDir, err = makeShmDir(opt.TmpDir)
			if err != nil {
				return nil, err
			}
		}
	}
	var pfds pathFDs
	defer pfds.close()
	// A chain directory's siblings are listed as the command would: one
	// it cannot list grants none (its entries are not the command's to
	// know: red team round 31, R31d-2, a carve in another user's 0700
	// directory listed its files as rules and in the report). The
	// credentials are looked at only when a chain is listed (carve-outs,
	// Landlock-only), not in every compile.
	keys := sync.OnceValues(func() (*keyScan, error) { return newKeyScan(opt.Credential) })
	list := func(dir string) ([]dirEntry, error) {
		k, err := keys()
		if err != nil {
			return nil, err
		}
		if !k.listable(dir) {
			return nil, nil
		}
		return listDir(dir)
	}
	c, err := plan(req, abi, pfds.stat, list)
	if err != nil {
		return nil, err
	}
	rs := &Ruleset{fd: -1, report: c.report, tmpDir: opt.TmpDir, fit: c.fit, cred: opt.Credential}
	rs.credWalk = len(ws.DenyPatterns()) > 0 || len(ws.ReadOnlyPatterns()) > 0 || len(ws.PrivateKeyPatterns()) > 0 || ws.PrivateKeyHeaders()
	rs.report.UserNamespace = userNS && rs.report.Layer == LayerNamespaces
	if rs.report.UserNamespace && len(rs.report.ProxyTCP) > 0 {
		// The proxy's socket can be made inside the command's network
		// namespace only by a root caller (exec.Cmd.InNamespace): the
		// stage's command keeps the host network, and Landlock's
		// connect rule holds it to the proxy's port (advisory).
		rs.report.PrivateNetwork = false
	}
	if !rs.report.PrivateNetwork || rs.report.UserNamespace {
		// Only inside a private network namespace the caller serves
		// are the transparent ports harmless (Options.TransparentTCP).
		rs.report.TransparentTCP = nil
	}
	if opt.LogDenials && c.report.ABI >= 7 {
		rs.restrictFlags = ll.FlagRestrictSelfLogNewExecOn
	}
	if c.report.Layer == LayerNamespaces {
		v, err := buildView(&rs.report)
		if err != nil {
			return nil, err
		}
		rs.view = &v
	}
	if abi == 0 {
		return rs, nil
	}
	// The kernel always creates the ruleset fd close-on-exec.
	fd, err := ll.LandlockCreateRuleset(&c.attr, 0)
	if err != nil {
		return nil, fmt.Errorf("landlock_create_ruleset(fs=%v): %w", c.report.HandledFS, err)
	}
	rs.fd = fd
	// With a view, rule descriptors are kept for ForkFD (a per-spawn
	// ruleset that also grants the spawn's fresh procfs).
	keep := rs.view != nil
	if keep {
		rs.kept = &keptRules{attr: c.attr}
	}
	// The rule descriptors not kept are closed together after the loop:
	// close_range(2) closes a run of them in one system call (they were
	// opened in a row), not one close(2) each (35 for the system preset).
	var done []int
	fail := func(err error) (*Ruleset, error) {
		closeKept(done)
		rs.close()
		return nil, err
	}
	for _, r := range c.rules {
		var rfd int
		if isDir, ok := c.kinds[r.Path]; ok {
			rfd, err = addCarvedRule(fd, r, isDir)
		} else if insideWritable(c.rules, r) {
			rfd, err = addNoFollowRule(fd, r)
		} else if pfd := pfds.take(r.Path); pfd >= 0 {
			rfd, err = addRuleFD(fd, pfd, r)
		} else {
			rfd, err = addPathRule(fd, r)
		}
		if err != nil {
			return fail(err)
		}
		if rfd < 0 {
			continue
		}
		if keep {
			rs.kept.paths = append(rs.kept.paths, keptRule{rfd, uint64(r.Access)})
		} else if done = append(done, rfd); len(done) == maxPathFDs {
			// A batch at a time: a planted tree's carve-outs are
			// thousands of rules, past RLIMIT_NOFILE (red team round
			// 22, R22b-1: 300 .env files 80 directories deep, 24,000
			// rules, and every later run failed with EMFILE).
			closeKept(done)
			done = done[:0]
		}
	}
	closeKept(done)
	var ports []ll.NetPortAttr
	connect := append(append(slices.Clone(c.report.ConnectTCP), c.report.ProxyTCP...), rs.report.TransparentTCP...)
	for _, p := range connect {
		ports = append(ports, ll.NetPortAttr{AllowedAccess: ll.AccessNetConnectTCP, Port: uint64(p)})
	}
	for _, p := range c.report.BindTCP {
		ports = append(ports, ll.NetPortAttr{AllowedAccess: ll.AccessNetBindTCP, Port: uint64(p)})
	}
	if err := addPortRules(fd, ports); err != nil {
		return fail(err)
	}
	if keep {
		rs.kept.ports = ports
	}
	return rs, nil
}

// addPortRules adds each port rule to the ruleset rulesetFD.
func addPortRules(rulesetFD int, ports []ll.NetPortAttr) error {
	for i := range ports {
		if err := ll.LandlockAddNetPortRule(rulesetFD, &ports[i], 0); err != nil {
			name := "connect_tcp"
			if ports[i].AllowedAccess == ll.AccessNetBindTCP {
				name = "bind_tcp"
			}
			return fmt.Errorf("landlock_add_rule(%s %d): %w", name, ports[i].Port, err)
		}
	}
	return nil
}

// buildView turns the report's account of the view into an nsview.View.
// Writable roots from rules are canonicalised (Extra rules may name a
// symlink; the view opens no symlink), and the report shows them so.
func buildView(rep *Report) (nsview.View, error) {
	for _, list := range [][]string{rep.Writable, rep.reattach} {
		for i, w := range list {
			c, err := filepath.EvalSymlinks(w)
			if err != nil {
				return nsview.View{}, &fs.PathError{Op: "namespace view: writable root", Path: w, Err: err}
			}
			list[i] = c
		}
	}
	for i, w := range rep.ReadOnlyMounts {
		if c, err := filepath.EvalSymlinks(w); err == nil {
			rep.ReadOnlyMounts[i] = c
		}
	}
	v := nsview.New().Writable(rep.viewWritable()...).ReadOnly(rep.ReadOnlyMounts...).Mask(rep.Masks...)
	if rep.PrivateTmp {
		v = v.PrivateTmp()
	}
	if rep.WritableTmp {
		v = v.WritableTmp()
	}
	if rep.SharedMemory != "" {
		v = v.SharedMemory(rep.SharedMemory)
	}
	if rep.PrivateNetwork {
		v = v.NoNetwork()
	}
	return v, nil
}

// makeShmDir creates (or reuses) tmp/.shm, mode 1777, the directory the
// view binds on /dev/shm. Everything is done through a descriptor of tmp
// and never follows a symlink: the directory may belong to the command's
// user, who could have swapped it. An entry that is not a directory (a
// symlink or file a previous command planted there) is removed and the
// directory made again, so a command cannot stop every later run of the
// workspace from starting. It is removed with tmp.
func makeShmDir(tmp string) (string, error) {
	canon, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		return "", &fs.PathError{Op: "namespace view: TmpDir", Path: tmp, Err: err}
	}
	d := filepath.Join(canon, ".shm")
	dirfd, err := unix.Open(canon, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: canon, Err: err}
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, ".shm", &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dirfd, ".shm", 0); err != nil {
			return "", &fs.PathError{Op: "unlink", Path: d, Err: err}
		}
	}
	if err := unix.Mkdirat(dirfd, ".shm", 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return "", &fs.PathError{Op: "mkdir", Path: d, Err: err}
	}
	fd, err := unix.Openat(dirfd, ".shm", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &fs.PathError{Op: "open", Path: d, Err: err}
	}
	defer unix.Close(fd)
	// Already 01777 (made by another run, perhaps root's --user run for
	// this uid): left as it is, since only its owner may chmod it (red
	// team round 31, R31c-19: the user's own later run failed with
	// EPERM, every time).
	var fst unix.Stat_t
	if unix.Fstat(fd, &fst) == nil && fst.Mode&0o7777 == 0o1777 {
		return d, nil
	}
	if err := unix.Fchmod(fd, 0o1777); err != nil {
		return "", &fs.PathError{Op: "fchmod", Path: d, Err: err}
	}
	return d, nil
}

// addPathRule opens r.Path O_PATH|O_CLOEXEC (other goroutines may fork at
// any moment; the fd must not leak into their children), adds it and
// returns the descriptor (the caller closes it).
func addPathRule(rulesetFD int, r Rule) (int, error) {
	fd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: r.Path, Err: err}
	}
	return addRuleFD(rulesetFD, fd, r)
}

// addRuleFD adds the rule for r on fd and returns fd; on error it closes
// fd.
func addRuleFD(rulesetFD, fd int, r Rule) (int, error) {
	attr := ll.PathBeneathAttr{ParentFd: fd, AllowedAccess: uint64(r.Access)}
	if err := ll.LandlockAddPathBeneathRule(rulesetFD, &attr, 0); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "landlock_add_rule", Path: r.Path, Err: fmt.Errorf("%v: %w", r.Access, err)}
	}
	return fd, nil
}

// openNoFollow opens path O_PATH with no symlink followed in any
// component (openat.Root on "/": openat2 RESOLVE_NO_SYMLINKS, or the
// O_NOFOLLOW walk). The paths are canonical, so a symlink means the tree
// changed while compiling: an error wrapping openat.ErrSymlink. A missing
// path is fs.ErrNotExist, unwrapped.
func openNoFollow(path string) (int, error) {
	root, err := fsRoot()
	if err != nil {
		return -1, err
	}
	fd, err := root.OpenFd(strings.TrimPrefix(path, "/"), unix.O_PATH, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return -1, fs.ErrNotExist
	case errors.Is(err, openat.ErrSymlink):
		return -1, &fs.PathError{Op: "landlock_add_rule", Path: path, Err: fmt.Errorf("a component became a symlink while compiling: %w", err)}
	case err != nil:
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}

// insideWritable reports whether path lies strictly beneath the path of
// a rule granting a write right: the command (or an earlier or concurrent
// one of the same workspace) may have replaced any component below that
// root by a symlink since the path was resolved (TMPDIR's .shm swapped
// for a link to / would make its rule grant everything).
//
// Not for the system preset's rules (fixed names, some symlinks by design:
// /bin -> usr/bin) nor below a writable "/" (everything is writable
// there: a swap gains nothing).
func insideWritable(rules []Rule, r Rule) bool {
	if r.Source == "system" {
		return false
	}
	for _, w := range rules {
		if w.Access&writeRights != 0 && w.Path != r.Path && w.Path != "/" && strings.HasPrefix(r.Path, w.Path+"/") {
			return true
		}
	}
	return false
}

// addNoFollowRule adds r, whose canonical path lies inside a writable
// root, opened with no symlink followed in any component (openat.Root on
// "/": openat2 RESOLVE_NO_SYMLINKS, or the O_NOFOLLOW walk). A symlink
// there now means the tree changed since the path was resolved: Compile
// fails rather than put the rule on the link's target.
func addNoFollowRule(rulesetFD int, r Rule) (int, error) {
	fd, err := openNoFollow(r.Path)
	if err != nil {
		if err == fs.ErrNotExist {
			err = &fs.PathError{Op: "open", Path: r.Path, Err: err}
		}
		return -1, err
	}
	return addRuleFD(rulesetFD, fd, r)
}

// addCarvedRule adds a rule the carve planner made from a directory
// listing. The last component is opened O_NOFOLLOW and must still be what
// was listed: an entry swapped for a symlink since (by a process still
// running in the workspace) must not move the rule onto the link's target,
// which could be the carved-out file. An entry that vanished is skipped
// (nothing to grant); one whose type changed fails Compile.
//
// The path is opened with no symlink followed in any component
// (openat.Root on "/": openat2 RESOLVE_NO_SYMLINKS, or the O_NOFOLLOW
// walk): carved paths are canonical, so a symlink anywhere means a
// directory above the entry was swapped meanwhile, and following it
// would put the rule (with the sibling's full rights) on a tree outside.
func addCarvedRule(rulesetFD int, r Rule, isDir bool) (int, error) {
	fd, err := openNoFollow(r.Path)
	if err == fs.ErrNotExist {
		return -1, nil
	}
	if err != nil {
		return -1, err
	}
	keep := false
	defer func() {
		if !keep {
			unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return -1, &fs.PathError{Op: "fstat", Path: r.Path, Err: err}
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if !isDir {
			return -1, &fs.PathError{Op: "landlock_add_rule", Path: r.Path, Err: fmt.Errorf("became a directory while compiling: %w", unix.EISDIR)}
		}
	default:
		if isDir {
			return -1, &fs.PathError{Op: "landlock_add_rule", Path: r.Path, Err: fmt.Errorf("is no longer a directory: %w", unix.ENOTDIR)}
		}
	}
	keep = true // addRuleFD closes it on error
	return addRuleFD(rulesetFD, fd, r)
}

// keptRules is what a Ruleset with a view keeps for ForkFD: the
// ruleset's attributes, each path rule's O_PATH descriptor (open,
// close-on-exec, until Close) with its rights, and the port rules.
type keptRules struct {
	attr  ll.RulesetAttr
	paths []keptRule
	ports []ll.NetPortAttr
}

// keptRule is one path rule of keptRules.
type keptRule struct {
	fd     int
	access uint64
}

// fsRoot is "/" as an openat.Root, opened once: carved rules are opened
// through it so that no component of their path is followed if it is a
// symlink.
var fsRoot = sync.OnceValues(func() (*openat.Root, error) { return openat.OpenRoot("/") })

func (r *Ruleset) restrictSelf() error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.closed {
		return ErrClosed
	}
	if r.fd < 0 {
		return ErrUnavailable
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(r.fd, r.restrictFlags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

func (r *Ruleset) close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	if r.kept != nil {
		fds := make([]int, len(r.kept.paths))
		for i, k := range r.kept.paths {
			fds[i] = k.fd
		}
		closeKept(fds)
		r.kept = nil
	}
	if r.fd < 0 {
		return nil
	}
	fd := r.fd
	r.fd = -1
	if err := unix.Close(fd); err != nil && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("close ruleset: %w", err)
	}
	return nil
}
