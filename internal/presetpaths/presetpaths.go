// Package presetpaths is the list of paths of landjail's system preset
// (landlock.SystemRules gives each its rights), in a package of its own
// so that internal/selfproc, which must initialize before most of
// landjail's packages, can open them ahead of the ruleset's compile
// (landlock imports both). Missing paths are skipped by the compile: the
// lists are fixed rather than read from the file system.
package presetpaths

// ReadExec are read and executed: the programs and libraries. /lib,
// /lib32, /lib64 and /libx32 hold the dynamic loader; on merged-/usr
// systems they are symlinks into /usr. A fixed list (missing ones are
// skipped) rather than a glob of "/": reading the root directory cost
// every run a directory open and the runtime's poller set-up.
var ReadExec = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// Read are read: the few /etc files programs need, the random devices.
var Read = []string{
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group",
	"/etc/localtime", "/etc/timezone",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates",
	"/etc/alternatives", "/etc/gitconfig", "/etc/mime.types",
	"/etc/os-release", "/etc/lsb-release", "/etc/debian_version", "/etc/locale.alias", "/etc/pip.conf",
	"/dev/urandom", "/dev/random",
}

// ReadNet are read when the command may use the network: the resolver's
// and the services' configuration.
var ReadNet = []string{"/etc/resolv.conf", "/etc/hosts", "/etc/host.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols"}

// ReadWriteFile are read and written as files.
var ReadWriteFile = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// All is every path of the lists above, in their order.
func All() []string {
	var all []string
	for _, l := range [][]string{ReadExec, Read, ReadNet, ReadWriteFile} {
		all = append(all, l...)
	}
	return all
}
