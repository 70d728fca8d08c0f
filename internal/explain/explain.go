// Package explain says, for each refusal a layer of the sandbox made, why
// in the policy's words and which flag would allow it (--explain, the MCP
// bash tool): Landlock's audit records (internal/denials), the seccomp
// supervisor's records (seccomp.Options.Explain: the filter's rules, the
// namespace view, Landlock's reads seen through the broker) and the
// proxy's. It asks the Workspace the question each layer answered; it
// reads nothing from the kernel itself.
package explain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/denials"
	"github.com/landjail/landjail/internal/privdirs"
	"github.com/landjail/landjail/internal/refusal"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/seccomp"
)

// Print prints the --explain lines: one per refusal, the layer
// (but Landlock's, printed as it always was), right, what, count, program,
// rule and remedy; noise counted apart unless all.
func Print(w io.Writer, xs []refusal.Refusal, all bool, unavailable string, others bool) {
	if unavailable != "" {
		if others {
			fmt.Fprintf(w, "landjail: --explain: Landlock's own denials are unavailable (%s); the view's, seccomp's and the reads the broker saw refused are listed\n", unavailable)
		} else {
			fmt.Fprintf(w, "landjail: --explain: denial explanations are unavailable: %s\n", unavailable)
		}
	}
	var shown []refusal.Refusal
	noise, noiseCount := 0, 0
	for _, x := range xs {
		if x.Noise && !all {
			noise++
			noiseCount += x.Count
			continue
		}
		shown = append(shown, x)
	}
	switch {
	case len(shown) == 0 && noise == 0:
		fmt.Fprintln(w, "landjail: --explain: nothing was refused")
	case len(shown) > 0:
		fmt.Fprintf(w, "landjail: --explain: %d distinct refusal(s):\n", len(shown))
	}
	for _, x := range shown {
		fmt.Fprintln(w, "  "+Line(x))
	}
	if noise > 0 && !all {
		fmt.Fprintf(w, "landjail: --explain: %d more (%d×) are probes the Go runtime, glibc or the loader make and handle when refused; --explain-all lists them\n", noise, noiseCount)
	}
}

// grant sets x's Flag to the path grant "FLAG PATH" (then suffix), unless
// path lies in landjail's own private directories (privdirs.Holds: every
// workspace's private HOME and TMPDIR, its cache): those are refused by
// design, since a grant lets one run plant what the others execute under
// their own policies (red team round 26, R26c-5; --learn never learns
// them). The hint suggested "--rw" of another workspace's private HOME
// (R26e-8).
func grant(x *refusal.Refusal, flag, path, suffix string) {
	if privdirs.Holds(path) {
		x.Flag, x.ByDesign = "", true
		x.Rule += "; in landjail's own private directories (every workspace's private HOME and TMPDIR): not grantable"
		return
	}
	x.Flag = flag + " " + path + suffix
}

// Line is one refusal in one line, as --explain prints it (without its
// indent): the layer (but Landlock's, printed as it always was), the
// right, what, count, program, rule and remedy; names the command chose
// are quoted where they hold control characters (termsafe.Quote).
func Line(x refusal.Refusal) string {
	var b strings.Builder
	if x.Layer != refusal.Landlock {
		fmt.Fprintf(&b, "[%s] ", x.Layer)
	}
	b.WriteString(x.Right)
	if t := x.Target(); t != "" {
		fmt.Fprintf(&b, " %s", termsafe.Quote(t))
	}
	fmt.Fprintf(&b, " (%d×", x.Count)
	if x.Comm != "" {
		fmt.Fprintf(&b, ", by %s", termsafe.Quote(x.Comm))
	}
	fmt.Fprintf(&b, "): %s", termsafe.Quote(x.Rule))
	switch {
	case x.Flag != "":
		fmt.Fprintf(&b, "; to allow: %s", termsafe.Quote(x.Flag))
	case x.ByDesign:
		b.WriteString("; not allowed by design")
	}
	if x.Noise {
		b.WriteString(" [probe, handled when refused]")
	}
	return b.String()
}

// Landlock says why the policy denies d (one of Landlock's audit records) and which flag would allow it. It
// asks the Workspace the same question Landlock answered (the Workspace
// is the policy Landlock's rules were compiled from): outside every root,
// a deny pattern or private key, a read-only path or root; when the
// Workspace would allow it, Landlock refused because carve-outs froze the
// directory (entries next to a carved path cannot be created, removed or
// renamed), or because of the system preset.
func Landlock(ws *jail.Workspace, d denials.Denial) refusal.Refusal {
	x := refusal.Refusal{Layer: refusal.Landlock, Path: d.Path, Port: d.Port, Count: d.Count, Comm: d.Comm}
	x.Noise = noisePath(d.Path)
	names := make([]string, len(d.Blockers))
	for i, b := range d.Blockers {
		names[i] = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(b, "fs."), "net."), "scope.")
	}
	x.Right = strings.Join(names, ",")
	if len(d.Blockers) == 0 {
		x.Rule = "Landlock denied it (no right named)"
		return x
	}
	b := d.Blockers[0]
	switch {
	case b == "net.connect_tcp":
		x.Rule = "TCP connect to a port not allowed"
		x.Flag = fmt.Sprintf("--connect-tcp %d", d.Port)
		return x
	case b == "net.bind_tcp":
		x.Rule = "TCP bind to a port not allowed"
		x.Flag = fmt.Sprintf("--bind-tcp %d", d.Port)
		return x
	case strings.HasPrefix(b, "scope."):
		x.Rule = "outside the sandbox (Landlock scope): another process or an abstract UNIX socket of the host"
		x.Flag = "--no-scope"
		return x
	case b == "fs.ioctl_dev":
		x.Rule = "an ioctl on a device file (LANDLOCK_ACCESS_FS_IOCTL_DEV, ABI 5): no root grants device ioctls but a --rw one"
		grant(&x, "--rw", d.Path, " (only if the command really needs it)")
		return x
	case b == "fs.change_topology":
		x.Rule = "mounts cannot be changed in a sandbox"
		x.ByDesign = true
		return x
	case d.Path == "" || !filepath.IsAbs(d.Path):
		x.Rule = "Landlock denied it (the path is not absolute in the record: a detached or other mount)"
		return x
	}
	access := jail.Write
	switch b {
	case "fs.read_file", "fs.read_dir":
		access = jail.Read
	case "fs.execute":
		access = jail.Execute
	}
	_, err := ws.Check(d.Path, access)
	// What a flag should name: the file itself for an access to a file
	// (--ro/--rox/--rw take single files), the directory for creating,
	// removing or renaming entries in it.
	dir := d.Path
	switch b {
	case "fs.read_file", "fs.read_dir", "fs.execute", "fs.write_file", "fs.truncate":
	default:
		if fi, err := os.Stat(d.Path); err != nil || !fi.IsDir() {
			dir = filepath.Dir(d.Path)
		}
	}
	switch {
	case errors.Is(err, jail.ErrDenied):
		x.Rule = "matches a deny pattern (--deny, --deny-secrets) or holds a private key"
		x.Flag = "drop the pattern that matches it"
	case errors.Is(err, jail.ErrSetIDProgram):
		x.Rule = setIDRule
		x.Flag = setIDFlag
	case errors.Is(err, jail.ErrReadOnly):
		x.Rule = "read-only: a --read-only path, protected agent configuration, or a --ro/--rox root"
		grant(&x, "--rw", dir, " (or drop --read-only/--protect-agent-config)")
	case errors.Is(err, jail.ErrNotExecutable):
		x.Rule = "in a read-only root without execute"
		grant(&x, "--rox", ToolchainRoot(dir), "")
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Rule = "outside every allowed root"
		switch access {
		case jail.Read:
			grant(&x, "--ro", dir, "")
		case jail.Execute:
			grant(&x, "--rox", ToolchainRoot(dir), "")
		default:
			grant(&x, "--rw", dir, "")
		}
	case err == nil && access == jail.Write:
		x.Rule = "a directory frozen by carve-outs: next to a denied or read-only path, entries cannot be created, removed or renamed"
		x.Flag = "the namespace layer (on by default where available) masks instead of freezing; or --no-carve"
	case err == nil:
		x.Rule = "allowed by the policy but not by Landlock's rules (the system preset, or a carve-out)"
	default:
		x.Rule = "outside the policy (" + err.Error() + ")"
	}
	return x
}

// procPIDPath reports whether p names an entry of a numbered process
// directory, /proc/N or below (not /proc/self or /proc/thread-self: those
// are the command's own and stay listed one by one).
func procPIDPath(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	pid, _, _ := strings.Cut(rest, "/")
	if pid == "" {
		return false
	}
	for _, c := range pid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// GroupProc folds the denials of numbered /proc entries (ps, top, shell
// completion and language runtimes walk them: one line per process and
// file drowned the rest) into one line per right, "/proc/PID/*", with the
// number of paths and of denials. They are expected: /proc is outside the
// policy (it would show every process of the host), and no flag grants
// it. Order is kept, the group where its first member was.
func GroupProc(xs []refusal.Refusal) []refusal.Refusal {
	out := make([]refusal.Refusal, 0, len(xs))
	groups := map[string]int{} // right -> index in out
	paths := map[string]int{}
	for _, x := range xs {
		if !procPIDPath(x.Path) {
			out = append(out, x)
			continue
		}
		i, ok := groups[x.Right]
		if !ok {
			i = len(out)
			groups[x.Right] = i
			out = append(out, refusal.Refusal{Layer: x.Layer, Right: x.Right, Path: "/proc/PID/*", Comm: x.Comm, ByDesign: true,
				Rule: "other processes' /proc entries: /proc is outside the policy (it would show the host's processes); expected from ps, top and runtimes that scan /proc"})
		}
		out[i].Count += x.Count
		paths[x.Right]++
		if out[i].Comm != x.Comm {
			out[i].Comm = ""
		}
	}
	for right, i := range groups {
		noun := "paths"
		if paths[right] == 1 {
			noun = "path"
		}
		out[i].Rule = fmt.Sprintf("%d %s, %s", paths[right], noun, out[i].Rule)
	}
	return out
}

// Event turns what the seccomp supervisor recorded (--explain) into
// a refusal: a rule of the filter (Layer Seccomp), the view refusing an
// open or creation (Layer View), or a read Landlock refused as the broker
// saw it (Layer Landlock), asked of ws as explain asks it.
func Event(ws *jail.Workspace, e seccomp.Event) refusal.Refusal {
	if e.Rule != "" {
		return explainSeccomp(e)
	}
	if e.Why == seccomp.LandlockRead {
		// Asked as for an audit record of the same read.
		x := Landlock(ws, denials.Denial{Blockers: []string{"fs.read_file"}, Path: e.Path, Count: e.Count, Comm: e.Comm})
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
	case errors.Is(err, jail.ErrSetIDProgram):
		x.Rule = "read-only view: " + setIDRule + " (EROFS)"
		x.Flag = setIDFlag
	case errors.Is(err, jail.ErrReadOnly):
		x.Rule = "read-only view: a --read-only path, protected agent configuration, or a --ro/--rox root (EROFS)"
		grant(&x, "--rw", dir, "")
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Rule = "read-only view: outside every writable root (EROFS)"
		grant(&x, "--rw", dir, "")
	case err == nil:
		x.Rule = "read-only view: the mount is read-only though the policy allows writing (a system path or a file system mounted read-only on the host)"
	default:
		x.Rule = "read-only view (" + err.Error() + ")"
	}
	return x
}

// setIDRule and setIDFlag explain a refused write to a set-ID program
// (jail.ErrSetIDProgram).
const (
	setIDRule = "a set-user-ID, set-group-ID or file-capability program, read-only under --protect-agent-config (a store through a shared mapping would keep its bits, and it runs as its owner outside the sandbox)"
	setIDFlag = "strip its bits before the run (chmod u-s,g-s; setcap -r), or drop --protect-agent-config"
)

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

// ToolchainRoot is what an execute grant should name for an executable at
// p: a toolchain's root rather than one binary, because a shim or a
// bin/ entry runs the rest of the tree. Below the caller's HOME it is the
// first directory under HOME (~/.pyenv for ~/.pyenv/shims/python3,
// ~/.cargo for ~/.cargo/bin/cargo); elsewhere, for a file in a bin/,
// sbin/ or shims/ directory, that directory's parent (/opt/go for
// /opt/go/bin/go); otherwise p itself.
func ToolchainRoot(p string) string {
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

// resolverFiles are what a name lookup reads (glibc's and Go's resolvers).
var resolverFiles = map[string]bool{
	"/etc/resolv.conf": true, "/etc/hosts": true, "/etc/host.conf": true,
	"/etc/nsswitch.conf": true, "/etc/gai.conf": true,
}

// Relate adjusts refusals that only make sense together, in place, and
// returns xs: when seccomp refused a UDP socket (a name lookup), a refused
// read of the resolver's configuration (/etc/resolv.conf, /etc/hosts, ...)
// is part of the same lookup, and --ro for it would not make the lookup
// work (issue 23: it was the only fix listed): its flag becomes the UDP
// refusal's (--allow-domain HOST).
func Relate(xs []refusal.Refusal) []refusal.Refusal {
	udp := ""
	for _, x := range xs {
		if x.Layer == refusal.Seccomp && x.Right == refusal.RightSocket && strings.Contains(x.Rule, "SOCK_DGRAM") && x.Flag != "" {
			udp = x.Flag
			break
		}
	}
	if udp == "" {
		return xs
	}
	for i, x := range xs {
		if resolverFiles[x.Path] && !strings.HasPrefix(x.Right, "write") {
			xs[i].Rule += "; part of a name lookup, which also needs UDP (refused): reading it alone does not help"
			xs[i].Flag = udp + " (or --allow-dns and " + x.Flag + ")"
		}
	}
	return xs
}

// PathCheck is the refusal of the path-check fallback (no usable
// Landlock: package exec checks the command's program, arguments and
// working directory before it starts) that err, a start error, carries;
// nil when err is no policy refusal. The check does not say which access
// it asked for, so an outside path's flag names the read grant and the
// others in words.
func PathCheck(err error) []refusal.Refusal {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	x := refusal.Refusal{Layer: refusal.PathCheck, Path: pe.Path, Count: 1}
	switch {
	case errors.Is(err, jail.ErrOutsideWorkspace):
		x.Right, x.Rule = refusal.RightRead, "the path-check fallback (no Landlock): an argument or the working directory is outside every allowed root"
		grant(&x, "--ro", pe.Path, " (--rox to run it, --rw to write it)")
	case errors.Is(err, jail.ErrDenied):
		x.Right, x.Rule = refusal.RightRead, "the path-check fallback (no Landlock): an argument matches a deny pattern (--deny, --deny-secrets) or holds a private key"
		x.Flag = "drop the pattern that matches it"
	case errors.Is(err, jail.ErrReadOnly):
		x.Right, x.Rule = refusal.RightWrite, "the path-check fallback (no Landlock): an argument the command may write is read-only"
		grant(&x, "--rw", pe.Path, "")
	case errors.Is(err, jail.ErrNotExecutable):
		x.Right, x.Rule = refusal.RightExecute, "the path-check fallback (no Landlock): the program is in a read-only root without execute"
		grant(&x, "--rox", ToolchainRoot(pe.Path), "")
	default:
		return nil
	}
	return []refusal.Refusal{x}
}
