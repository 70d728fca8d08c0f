// Package learn turns the accesses a confined run was refused into exact
// grants and merges them into a TOML --config file (landjail run --learn).
//
// Its one job: from a list of [Refusal]s (what was refused: a path and a
// [Right], or a proxy host and port) and the grants a config file already
// holds, decide the smallest grants that would have allowed them, and write
// them into the file without touching what is there. The rules, each
// enforced by [Decide]:
//
//   - a read or an execute grants the exact file (ro, rox); listing a
//     directory is not learned (a grant of a directory covers everything
//     below it);
//   - a refused write to an existing file grants that file (rw); a refused
//     create (or remove, rename) grants the directory it was refused in,
//     never a parent of it, never "/";
//   - a proxy refusal of a host that is not listed (or not on that port)
//     grants "host:port" (allow_domain);
//   - a refusal with a ByDesign rule (a deny pattern, a private key,
//     --read-only, --protect-agent-config, a frozen directory, a name that
//     resolves to a private address) is never granted: it becomes a comment
//     "# refused by design: PATH (RULE)";
//   - no write or create grant (rw) where a later run could plant code
//     that runs outside the sandbox, whatever the policy: inside a .git
//     directory, the user's HOME or above it, what
//     --protect-agent-config protects relative to HOME or to a
//     repository's top (a directory holding .git), any directory of a
//     repository or above one (execbearing.go). The command is untrusted and chooses
//     its refusals; each becomes a "# refused by design" comment, and a
//     read or execute of the same path is still learned;
//   - nothing under /proc/PID (or /proc/self), no write under /proc or /sys,
//     no path that does not exist at learn time or is reached through a
//     symbolic link, no path that is not valid UTF-8: each becomes a comment
//     "# not learned: PATH (WHY)".
//
// Merging ([Merge]) keeps every byte of the existing file, inserts new
// entries into its arrays (or appends new arrays), never duplicates an
// entry, and adds a path already granted with fewer rights to the list with
// more (the same path in two lists gets the larger grant: jail.New and
// Landlock take the union), saying so in the entry's comment. Output is
// deterministic and a second merge of the same refusals changes nothing.
// Paths and hosts are written as TOML basic strings, escaped; comments
// quote them ASCII-only, so no refused name can end a comment or a string.
//
// The package decides nothing about the policy itself: a [Classifier]
// says which refusals are by design ([PolicyClassifier] asks the run's
// jail.Workspace). Adapters: [FromRefusals] for the shared record of every
// layer (internal/refusal: what landjail run uses), [FromDenials] for
// Landlock's audit records alone, [FromProxy] for one proxy refusal.
package learn

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/landjail/landjail/internal/netproxy/allowlist"
	"github.com/landjail/landjail/internal/privdirs"
	"github.com/landjail/landjail/jail"
)

// Right is the access that was refused.
type Right uint8

const (
	// Read: reading a file (Landlock fs.read_file) or listing a
	// directory (fs.read_dir, Dir set).
	Read Right = iota + 1
	// Exec: executing a file (fs.execute).
	Exec
	// Write: writing or truncating an existing file (fs.write_file,
	// fs.truncate).
	Write
	// Create: creating, removing or renaming an entry in a directory
	// (fs.make_*, fs.remove_*, fs.refer); Path is that directory, or an
	// entry of it.
	Create
)

var rightNames = [...]string{"", "read", "execute", "write", "create"}

// String is the right in one word ("read", "execute", "write", "create").
func (r Right) String() string {
	if int(r) < len(rightNames) && r != 0 {
		return rightNames[r]
	}
	return "Right(" + strconv.Itoa(int(r)) + ")"
}

// Refusal is one access a run was refused, as the layer that refused it
// saw it. Exactly one of Path (a file-system refusal) and Host (a proxy
// refusal) is set.
type Refusal struct {
	// Path is absolute, as the kernel resolved it (no symbolic link).
	Path  string
	Right Right
	// Dir: Path is a directory that was listed (Read only).
	Dir bool
	// Host and Port: a request the --allow-domain proxy refused.
	Host string
	Port uint16
	// ByDesign, when not empty, names the protection that refused it
	// ("deny pattern", "--protect-agent-config", ...): never granted.
	ByDesign string
	// NotLearnable, when not empty, says why no grant can allow it
	// (a TCP port, a signal, a mount change).
	NotLearnable string
}

// Key is a config key a grant goes to.
type Key string

// The keys --learn writes, in the order it writes them.
const (
	KeyRO          Key = "ro"
	KeyROX         Key = "rox"
	KeyRW          Key = "rw"
	KeyAllowDomain Key = "allow_domain"
)

// Keys lists the keys --learn writes, in order.
var Keys = []Key{KeyRO, KeyROX, KeyRW, KeyAllowDomain}

// level orders the path keys by what they grant (rw ⊃ rox ⊃ ro).
func level(k Key) int {
	switch k {
	case KeyRO:
		return 1
	case KeyROX:
		return 2
	case KeyRW:
		return 3
	}
	return 0
}

// Grants are the entries a config file holds under the keys --learn
// writes: paths absolute (relative ones joined to the file's directory),
// allow_domain entries as written.
type Grants map[Key][]string

// Entry is one grant to add: Value goes into the array Key, with Note as
// its comment.
type Entry struct {
	Key   Key
	Value string
	Note  string
}

// Plan is what Decide chose: the entries to add, sorted by key order then
// value, and the comment lines (without "# "), sorted.
type Plan struct {
	Add      []Entry
	Comments []string
}

// Decide chooses the exact grants for refs given the grants the config
// already holds. It reads the file system (lstat, realpath) to check that
// each path still exists as it was refused and, for an rw grant, the
// user's HOME ($HOME) and the repositories above the path (a jail.New
// with jail.WithProtectedAgentConfig each, once per Decide), PATH,
// LD_LIBRARY_PATH and /etc/ld.so.conf to refuse execution-bearing paths
// (execbearing.go); it never writes.
// Deterministic in its input, HOME, PATH, LD_LIBRARY_PATH and the file
// system.
func Decide(refs []Refusal, have Grants) Plan {
	type want struct {
		key Key
		why map[string]bool
	}
	wants := map[string]*want{} // "p\x00PATH" or "d\x00ENTRY" -> the strongest grant asked for
	comments := map[string]bool{}
	need := func(key Key, value, why string) {
		id := "p\x00" + value // one path, one grant: the strongest asked for
		if key == KeyAllowDomain {
			id = "d\x00" + value
		}
		w := wants[id]
		if w == nil {
			w = &want{key: key, why: map[string]bool{}}
			wants[id] = w
		}
		if level(key) > level(w.key) {
			w.key = key
		}
		w.why[why] = true
	}
	// A path any record calls by design is never granted, even when
	// another record (another layer, another right) of it is learnable.
	blocked := map[string]bool{}
	for _, r := range refs {
		if r.ByDesign == "" || r.Host != "" || r.Path == "" {
			continue
		}
		blocked[r.Path] = true
		if r.Right == Create {
			if fi, err := os.Lstat(r.Path); err != nil || !fi.IsDir() {
				blocked[filepath.Dir(r.Path)] = true
			}
		}
	}
	ex := newExecRules()
	defer ex.close()
	for _, r := range refs {
		if r.Host != "" || r.Path == "" {
			entry, line := decideProxy(r, have)
			if line != "" {
				comments[line] = true
			} else if entry != "" {
				need(KeyAllowDomain, entry, "proxy refused "+strings.TrimPrefix(entry, "public:"))
			}
			continue
		}
		key, target, line := decidePath(r)
		if line != "" {
			comments[line] = true
			continue
		}
		if blocked[target] {
			continue // its by-design line says why
		}
		if key == KeyRW {
			if why := ex.why(target, r.Right == Create); why != "" {
				comments[commentLine(byDesignPrefix, r.Path, why)] = true
				continue
			}
		}
		need(key, target, r.Right.String()+" refused")
	}
	var p Plan
	idx := indexGrants(have)
	for id, w := range wants {
		e, ok := entryFor(w.key, id[2:], w.why, idx)
		if ok {
			p.Add = append(p.Add, e)
		}
	}
	sort.Slice(p.Add, func(i, j int) bool {
		a, b := p.Add[i], p.Add[j]
		if ka, kb := keyIndex(a.Key), keyIndex(b.Key); ka != kb {
			return ka < kb
		}
		return a.Value < b.Value
	})
	for c := range comments {
		p.Comments = append(p.Comments, c)
	}
	sort.Strings(p.Comments)
	return p
}

func keyIndex(k Key) int {
	for i, x := range Keys {
		if x == k {
			return i
		}
	}
	return len(Keys)
}

// granted indexes the path grants of a config: for each path, as written
// and with its symbolic links resolved, the keys that grant it. Built once
// per Decide (a realpath per entry, not per entry and refusal).
type granted map[string][]Key

func indexGrants(have Grants) granted {
	g := granted{}
	for _, k := range []Key{KeyRO, KeyROX, KeyRW} {
		for _, h := range have[k] {
			g[h] = append(g[h], k)
			if c, err := filepath.EvalSymlinks(h); err == nil && c != h {
				g[c] = append(g[c], k)
			}
		}
	}
	return g
}

// entryFor is the entry for value under key, or false when the config
// already grants it (the same path under key or a stronger key; an
// allow_domain entry is checked by decideProxy).
func entryFor(key Key, value string, why map[string]bool, have granted) (Entry, bool) {
	reasons := make([]string, 0, len(why))
	for w := range why {
		reasons = append(reasons, w)
	}
	sort.Strings(reasons)
	note := "learned: " + strings.Join(reasons, ", ")
	if key == KeyAllowDomain {
		return Entry{key, value, note}, true
	}
	var lower []string
	for _, k := range []Key{KeyRO, KeyROX, KeyRW} { // in order, once each
		if !slices.Contains(have[value], k) {
			continue
		}
		if level(k) >= level(key) {
			return Entry{}, false
		}
		lower = append(lower, string(k))
	}
	if len(lower) > 0 {
		note += "; upgrades " + strings.Join(lower, ", ") + " of the same path (both listed: the larger grant applies)"
	}
	return Entry{key, value, note}, true
}

// Comment texts, fixed so that merges recognise lines they wrote before.
const (
	byDesignPrefix   = "refused by design: "
	notLearnedPrefix = "not learned: "
)

// commentLine is "PREFIX QUOTED (WHY)", with the path or host quoted
// ASCII-only: no byte of it can end the comment.
func commentLine(prefix, what, why string) string {
	return prefix + strconv.QuoteToASCII(what) + " (" + asciiComment(why) + ")"
}

// asciiComment keeps printable ASCII of s and replaces the rest with '?'.
func asciiComment(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// decidePath returns the key and path to grant for a file-system refusal,
// or the comment line saying why it is not granted.
func decidePath(r Refusal) (Key, string, string) {
	p := r.Path
	no := func(why string) (Key, string, string) { return "", "", commentLine(notLearnedPrefix, p, why) }
	switch {
	case r.ByDesign != "":
		return "", "", commentLine(byDesignPrefix, p, r.ByDesign)
	case r.NotLearnable != "":
		return no(r.NotLearnable)
	case !utf8.ValidString(p):
		return no("not valid UTF-8: a TOML file cannot hold it")
	case !filepath.IsAbs(p) || filepath.Clean(p) != p:
		return no("not an absolute clean path")
	case procProcess(p):
		return no("a process's /proc entry: never granted")
	case privdirs.Holds(p):
		// Every workspace's private HOME and TMPDIR are there: a grant
		// let one run plant what the others execute under their own
		// policies (red team round 26, R26c-5).
		return "", "", commentLine(byDesignPrefix, p, "landjail's own private directories (every workspace's private HOME and TMPDIR): never learned")
	case privdirs.Above(p):
		// And a directory above them holds them all (R27a-2: rw of
		// $TMPDIR read other workspaces' private TMPDIRs).
		return "", "", commentLine(byDesignPrefix, p, "a directory that holds landjail's own private directories (every workspace's private HOME or TMPDIR): never learned; grant a directory below it")
	case jail.IsSystemSecret(p):
		// A root command reads them with no capability once granted:
		// every account's password hash (red team round 31, R31b-1).
		return "", "", commentLine(byDesignPrefix, p, "the system's credentials (password hashes, sudo rules, host keys, keytabs): never learned; add it by hand if that is meant")
	case (r.Right == Write || r.Right == Create) && (within(p, "/proc") || within(p, "/sys")):
		return no("a write to a kernel interface (/proc, /sys): never granted")
	case systemPrivateFile(p):
		// A system file the owner keeps from others (0600, 0640 under
		// /etc or /var/lib) is a secret more often than not, and a root
		// command reads it with no capability once granted: the list
		// can never be complete (red team round 32, R32c-10: WireGuard's
		// and MySQL's keys, systemd's credentials, learned ro).
		return "", "", commentLine(byDesignPrefix, p, "a system file others may not read (its mode keeps it from them): never learned; add it by hand if that is meant")
	}
	switch r.Right {
	case Read, Exec, Write:
		fi, err := os.Lstat(p)
		if err != nil {
			return no(existWhy(err))
		}
		if fi.Mode()&fs.ModeDevice != 0 && !harmlessDevices[p] {
			// A terminal's reads are what is typed there, /dev/kmsg's
			// the kernel's log, a disk's every file (red team round 20,
			// R20b-1: ro /dev/pts/0 learned, and the next run read
			// another terminal's keystrokes).
			return "", "", commentLine(byDesignPrefix, p, "a device shared with the host (a terminal's input, the kernel's log, a disk): never learned; add it by hand if that is meant")
		}
		if fi.IsDir() || r.Dir {
			if r.Right == Read {
				return no("listing a directory: a grant of it would cover everything below it; add it by hand if that is meant")
			}
			return no(r.Right.String() + " of a directory")
		}
		if !canonical(p) {
			return no("reached through a symbolic link now")
		}
		key := map[Right]Key{Read: KeyRO, Exec: KeyROX, Write: KeyRW}[r.Right]
		return key, p, ""
	case Create:
		dir := p
		fi, err := os.Lstat(p)
		if err != nil || !fi.IsDir() {
			dir = filepath.Dir(p)
			if fi, err = os.Lstat(dir); err != nil {
				return no(existWhy(err))
			}
			if !fi.IsDir() {
				return no("not in a directory")
			}
		}
		if dir == "/" {
			return no("creating in / : a grant of / would cover everything")
		}
		if !canonical(dir) {
			return no("reached through a symbolic link now")
		}
		if privdirs.Holds(dir) || privdirs.Above(dir) {
			// The grant is the directory (R27a-2: rw of $TMPDIR).
			return "", "", commentLine(byDesignPrefix, dir, "a directory that holds landjail's own private directories (every workspace's private HOME or TMPDIR): never learned; grant a directory below it")
		}
		return KeyRW, dir, ""
	}
	return no("unknown right " + r.Right.String())
}

// harmlessDevices are the devices a grant may name: their reads and
// writes reach nothing of the host's (the controlling terminal is the
// command's own, already its standard input).
var harmlessDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true, "/dev/tty": true,
}

func existWhy(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "does not exist at learn time"
	}
	return "cannot be examined: " + err.Error()
}

// canonical reports whether p is its own real path (no symbolic link on
// the way, as the kernel resolved it when it refused).
func canonical(p string) bool {
	c, err := filepath.EvalSymlinks(p)
	return err == nil && c == p
}

// within reports whether p is root or below it, on whole components.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

// procProcess reports whether p is /proc/N, /proc/self, /proc/thread-self
// or below one of them.
func procProcess(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	if first == "self" || first == "thread-self" || first == "PID" { // "PID": --explain's group of them
		return true
	}
	if first == "" {
		return false
	}
	for _, c := range first {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// decideProxy returns the allow_domain entry for a proxy refusal (""
// when have already allows it), or the comment line saying why not.
func decideProxy(r Refusal, have Grants) (entry, line string) {
	target := r.Host
	if r.Port != 0 {
		target = net.JoinHostPort(r.Host, strconv.Itoa(int(r.Port)))
	}
	switch {
	case r.ByDesign != "":
		return "", commentLine(byDesignPrefix, target, r.ByDesign)
	case r.NotLearnable != "":
		return "", commentLine(notLearnedPrefix, target, r.NotLearnable)
	case r.Host == "" || r.Port == 0:
		return "", commentLine(notLearnedPrefix, target, "no host and port in the request")
	}
	if _, err := allowlist.ParseAllow([]string{target}); err != nil {
		return "", commentLine(notLearnedPrefix, target, "not a valid --allow-domain entry")
	}
	t, err := allowlist.ParseTarget(target, 0)
	if err != nil {
		return "", commentLine(notLearnedPrefix, target, "not a valid host:port")
	}
	if rules, err := allowlist.ParseAllow(have[KeyAllowDomain]); err == nil {
		if ok, _ := allowlist.Match(rules, t); ok {
			return "", ""
		}
	}
	if t.Name != "" {
		// Listed so that it keeps the rebinding defence (localTarget:
		// landjail does not ask DNS where a name the command chose
		// leads, R30b-4).
		return "public:" + target, ""
	}
	return target, ""
}

// ErrNotMergeable is returned (wrapped, with the reason) by Merge and
// ReadGrants for a file --learn will not rewrite: not TOML, a table, a
// key of the wrong type, a statement its scanner does not follow.
var ErrNotMergeable = errors.New("cannot merge learned grants into this file")

func notMergeable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrNotMergeable}, args...)...)
}

// systemPrivateFile reports whether p is a regular file (or a directory)
// under /etc, /var/lib or /boot whose mode gives others no read
// permission.
func systemPrivateFile(p string) bool {
	if !within(p, "/etc") && !within(p, "/var/lib") && !within(p, "/boot") {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && (fi.Mode().IsRegular() || fi.IsDir()) && fi.Mode().Perm()&0o004 == 0
}
