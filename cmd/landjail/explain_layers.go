package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/seccomp"
)

// explainEvent turns what the seccomp supervisor recorded (--explain) into
// a refusal: a rule of the filter (Layer Seccomp), the view refusing an
// open or creation (Layer View), or a read Landlock refused as the broker
// saw it (Layer Landlock), asked of ws as explain asks it.
func explainEvent(ws *jail.Workspace, e seccomp.Event) refusal.Refusal {
	if e.Rule != "" {
		return explainSeccomp(e)
	}
	if e.Why == seccomp.LandlockRead {
		// Asked as for an audit record of the same read.
		x := explain(ws, denials.Denial{Blockers: []string{"fs.read_file"}, Path: e.Path, Count: e.Count, Comm: e.Comm})
		x.Rule += " (Landlock; seen without audit records: a read-only open by the broker, confined as the command, was refused)"
		return x
	}
	x := refusal.Refusal{Layer: refusal.View, Path: e.Path, Right: e.Access, Count: e.Count, Comm: e.Comm,
		Noise: noisePath(e.Path)}
	access := jail.Read
	switch e.Access {
	case refusal.RightWrite, refusal.RightCreate:
		access = jail.Write
	}
	_, err := ws.Check(e.Path, access)
	// The directory a flag names for a new entry; the file otherwise.
	dir := e.Path
	if e.Access == refusal.RightCreate {
		dir = filepath.Dir(e.Path)
	}
	switch e.Why {
	case seccomp.ViewNoPerm:
		if errors.Is(err, jail.ErrDenied) || errors.Is(err, jail.ErrOutsideWorkspace) && deniedAnywhere(ws, e.Path) {
			x.Rule = "masked: matches a deny pattern (--deny, --deny-secrets) or holds a private key; the view shows an empty mode-0000 file (EACCES)"
			x.Flag = "drop the pattern that matches it"
			return x
		}
		x.Rule = "the file's own permissions are 0000 and the command has no capabilities (EACCES)"
		x.ByDesign = true
		return x
	}
	// seccomp.ViewReadOnly: EROFS.
	switch {
	case errors.Is(err, jail.ErrDenied):
		x.Rule = "read-only view: a masked path (deny pattern or private key), EROFS"
		x.Flag = "drop the pattern that matches it"
	case errors.Is(err, jail.ErrReadOnly):
		x.Rule = "read-only view: a --read-only path, protected agent configuration, or a --ro/--rox root (EROFS)"
		x.Flag = "--rw " + dir
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Rule = "read-only view: outside every writable root (EROFS)"
		x.Flag = "--rw " + dir
	case err == nil:
		x.Rule = "read-only view: the mount is read-only though the policy allows writing (a system path or a file system mounted read-only on the host)"
	default:
		x.Rule = "read-only view (" + err.Error() + ")"
	}
	return x
}

// deniedAnywhere reports whether a deny pattern of ws would match p were
// it in the workspace: masks also cover files outside every root (HOME's
// secrets), which Check answers as outside.
func deniedAnywhere(ws *jail.Workspace, p string) bool {
	_, err := ws.Check(filepath.Join(ws.Root(), filepath.Base(p)), jail.Read)
	return errors.Is(err, jail.ErrDenied)
}

// explainSeccomp names the filter's rule and the flag that lifts it, or
// says none does.
func explainSeccomp(e seccomp.Event) refusal.Refusal {
	x := refusal.Refusal{Layer: refusal.Seccomp, Right: refusal.RightSyscall, Count: e.Count, Comm: e.Comm}
	rule := "seccomp " + e.Rule + ": " + e.Syscall + " (" + unix.ErrnoName(e.Errno) + ")"
	switch e.Syscall {
	case "socket", "socketpair":
		x.Right = refusal.RightSocket
		rule = fmt.Sprintf("seccomp %s: %s(%s, %s, %d) (%s)", e.Rule, e.Syscall, family(e.Args[0]),
			sockType(e.Args[1]), e.Args[2], unix.ErrnoName(e.Errno))
	}
	x.Rule = rule
	typ := e.Args[1] & 0xf
	switch {
	case e.Rule == "inet-non-tcp" && typ == unix.SOCK_DGRAM:
		x.Rule += ": UDP is refused with the network restricted; a name lookup (DNS) needs it, and the proxy of --allow-domain resolves names for the command instead (--allow-dns would allow all UDP)"
		x.Flag = "--allow-domain HOST"
	case e.Rule == "inet-non-tcp" && typ == unix.SOCK_STREAM:
		x.Rule += ": MPTCP or SCTP, which Landlock's TCP rules do not see; use plain TCP"
		x.ByDesign = true
	case e.Rule == "unix-socket", e.Rule == "socketpair-dgram":
		x.Rule += ": Landlock below ABI 9 cannot restrict pathname UNIX sockets"
		x.Flag = "--allow-unix-sockets"
	case e.Rule == "listen":
		x.Flag = "--bind-tcp PORT"
	case e.Rule == "clone3", e.Rule == "openat2":
		x.Rule += ": libc and the Go runtime fall back to " + map[string]string{"clone3": "clone(2)", "openat2": "openat(2)"}[e.Rule]
		x.ByDesign, x.Noise = true, true
	case isDangerous(e.Rule):
		x.Flag = "--allow-dangerous-syscalls"
	default:
		// Set-ID modes, terminal injection, io_uring, other socket
		// families and netlink protocols, System V IPC, another
		// process's limits: nothing lifts them.
		x.ByDesign = true
	}
	return x
}

// isDangerous reports whether rule is lifted by --allow-dangerous-syscalls.
func isDangerous(rule string) bool {
	switch rule {
	case "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "kexec_load",
		"kexec_file_load", "init_module", "finit_module", "delete_module", "open_by_handle_at",
		"fanotify_init", "fanotify_mark", "unshare-newuser", "clone-newuser":
		return true
	}
	return false
}

func family(a uint64) string {
	switch a {
	case unix.AF_UNIX:
		return "AF_UNIX"
	case unix.AF_INET:
		return "AF_INET"
	case unix.AF_INET6:
		return "AF_INET6"
	case unix.AF_NETLINK:
		return "AF_NETLINK"
	case unix.AF_PACKET:
		return "AF_PACKET"
	case unix.AF_VSOCK:
		return "AF_VSOCK"
	}
	return fmt.Sprintf("family %d", a)
}

func sockType(t uint64) string {
	switch t & 0xf {
	case unix.SOCK_STREAM:
		return "SOCK_STREAM"
	case unix.SOCK_DGRAM:
		return "SOCK_DGRAM"
	case unix.SOCK_RAW:
		return "SOCK_RAW"
	case unix.SOCK_SEQPACKET:
		return "SOCK_SEQPACKET"
	}
	return fmt.Sprintf("type %d", t&0xf)
}

// toolchainRoot is what an execute grant should name for an executable at
// p: a toolchain's root rather than one binary, because a shim or a
// bin/ entry runs the rest of the tree. Below the caller's HOME it is the
// first directory under HOME (~/.pyenv for ~/.pyenv/shims/python3,
// ~/.cargo for ~/.cargo/bin/cargo); elsewhere, for a file in a bin/,
// sbin/ or shims/ directory, that directory's parent (/opt/go for
// /opt/go/bin/go); otherwise p itself.
func toolchainRoot(p string) string {
	if home, err := os.UserHomeDir(); err == nil && home != "/" {
		if rest, ok := strings.CutPrefix(p, filepath.Clean(home)+"/"); ok {
			if first, _, deeper := strings.Cut(rest, "/"); deeper {
				return filepath.Join(home, first)
			}
			return p
		}
	}
	switch filepath.Base(filepath.Dir(p)) {
	case "bin", "sbin", "shims":
		if root := filepath.Dir(filepath.Dir(p)); root != "/" && root != "/usr" && root != "/usr/local" {
			return root
		}
	}
	return p
}

// noisePrefixes are paths runtimes and loaders probe and handle when
// refused: the Go runtime reads the cgroup CPU quota
// (/sys/fs/cgroup/.../cpu.max, cpu.cfs_quota_us; runtime/cgroup) and the
// huge page size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size,
// runtime.osinit) at every start; glibc's loader opens /etc/ld.so.preload
// and the glibc-hwcaps subdirectories of each library directory; glibc
// falls back to the C locale without its locale archive.
var noisePrefixes = []string{
	"/sys/fs/cgroup/",
	"/sys/kernel/mm/transparent_hugepage/",
	"/etc/ld.so.preload",
	"/usr/lib/locale/",
	"/proc/sys/kernel/cap_last_cap",
}

// noisePath reports whether p is one of the probes noisePrefixes lists, or
// a loader's hardware-capability subdirectory.
func noisePath(p string) bool {
	for _, n := range noisePrefixes {
		if strings.HasPrefix(p, n) {
			return true
		}
	}
	return strings.Contains(p, "/glibc-hwcaps/") || strings.HasSuffix(p, "/glibc-hwcaps")
}
