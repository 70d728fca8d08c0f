package denials

// BlockerInfo describes one blocker name of an AUDIT_LANDLOCK_ACCESS record.
type BlockerInfo struct {
	// Right is the Landlock access right or scope
	// (include/uapi/linux/landlock.h), e.g. "LANDLOCK_ACCESS_FS_READ_FILE";
	// empty for "fs.change_topology", which no right grants.
	Right string
	// ABI is the Landlock ABI that introduced the right; 0 when it is newer
	// than the ABI 7 this table was checked against (Linux 6.18).
	ABI int
	// Sentence completes "The child was denied ..." in plain words.
	Sentence string
}

// blockers follows security/landlock/audit.c (fs_access_strings,
// net_access_strings, the scope and topology blockers), Linux 6.15+.
var blockers = map[string]BlockerInfo{
	"fs.execute":                 {"LANDLOCK_ACCESS_FS_EXECUTE", 1, "executing a file"},
	"fs.write_file":              {"LANDLOCK_ACCESS_FS_WRITE_FILE", 1, "opening a file for writing"},
	"fs.read_file":               {"LANDLOCK_ACCESS_FS_READ_FILE", 1, "opening a file for reading"},
	"fs.read_dir":                {"LANDLOCK_ACCESS_FS_READ_DIR", 1, "listing a directory"},
	"fs.remove_dir":              {"LANDLOCK_ACCESS_FS_REMOVE_DIR", 1, "removing a directory"},
	"fs.remove_file":             {"LANDLOCK_ACCESS_FS_REMOVE_FILE", 1, "removing or renaming away a file"},
	"fs.make_char":               {"LANDLOCK_ACCESS_FS_MAKE_CHAR", 1, "creating a character device"},
	"fs.make_dir":                {"LANDLOCK_ACCESS_FS_MAKE_DIR", 1, "creating a directory"},
	"fs.make_reg":                {"LANDLOCK_ACCESS_FS_MAKE_REG", 1, "creating a regular file"},
	"fs.make_sock":               {"LANDLOCK_ACCESS_FS_MAKE_SOCK", 1, "creating a unix socket file"},
	"fs.make_fifo":               {"LANDLOCK_ACCESS_FS_MAKE_FIFO", 1, "creating a named pipe"},
	"fs.make_block":              {"LANDLOCK_ACCESS_FS_MAKE_BLOCK", 1, "creating a block device"},
	"fs.make_sym":                {"LANDLOCK_ACCESS_FS_MAKE_SYM", 1, "creating a symbolic link"},
	"fs.refer":                   {"LANDLOCK_ACCESS_FS_REFER", 2, "linking or renaming a file across directories"},
	"fs.truncate":                {"LANDLOCK_ACCESS_FS_TRUNCATE", 3, "truncating a file"},
	"fs.ioctl_dev":               {"LANDLOCK_ACCESS_FS_IOCTL_DEV", 5, "an ioctl on a device file"},
	"fs.resolve_unix":            {"LANDLOCK_ACCESS_FS_RESOLVE_UNIX", 0, "connecting to a unix socket by path"},
	"fs.change_topology":         {"", 1, "changing the mount topology (mount, umount, pivot_root)"},
	"net.bind_tcp":               {"LANDLOCK_ACCESS_NET_BIND_TCP", 4, "binding a TCP port"},
	"net.connect_tcp":            {"LANDLOCK_ACCESS_NET_CONNECT_TCP", 4, "connecting to a TCP port"},
	"scope.abstract_unix_socket": {"LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET", 6, "connecting to an abstract unix socket outside the sandbox"},
	"scope.signal":               {"LANDLOCK_SCOPE_SIGNAL", 6, "sending a signal to a process outside the sandbox"},
}

// Blocker returns what a blocker name from a record's "blockers=" field
// means; ok is false for a name this package does not know (a newer
// kernel), in which case callers should print the name as is.
func Blocker(name string) (info BlockerInfo, ok bool) {
	info, ok = blockers[name]
	return info, ok
}
