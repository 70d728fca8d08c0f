package jail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/gitignore"
	"github.com/landjail/landjail/internal/linkscan"
	"github.com/landjail/landjail/openat"
)

// Narrowing says how the policy narrows a canonical path that lies in one
// of its roots, beyond the root's Mode: a set of bits, as returned by
// Workspace.Narrowing. It is what landlock.Compile carves out of the
// Landlock rules, so children and the Workspace decide alike.
type Narrowing uint8

const (
	// NarrowDenied: a deny pattern (WithDeny, SecretPatterns) matches the
	// path or one of its parent directories.
	NarrowDenied Narrowing = 1 << iota
	// NarrowReadOnly: WithReadOnly matches the path or a parent.
	NarrowReadOnly
	// NarrowAgentConfig: WithProtectedAgentConfig protects the path or a
	// parent (read-only).
	NarrowAgentConfig
	// NarrowPrivateKey: a WithDenyPrivateKeys pattern matches the entry
	// itself; it is denied if it is not a directory and HoldsPrivateKey
	// says so for its content.
	NarrowPrivateKey
	// NarrowKeyHeaders: WithDenyPrivateKeyHeaders is in force and no
	// private-key pattern matches the entry; it is denied if it is a
	// regular file and HeadHoldsPrivateKey says so for its content.
	// Reported for every path in a root (the names say nothing): a walk
	// has to open every regular file.
	NarrowKeyHeaders
)

// MaxKeyScan is the largest file, in bytes, that HoldsPrivateKey
// examines (1 MiB: a PEM bundle of every public CA is about 220 KiB;
// a private key is a few KiB). A larger file counts as a private key.
const MaxKeyScan = 1 << 20

// KeyHeadScan is how many bytes, from offset 0, HeadHoldsPrivateKey
// examines (16 KiB). A key file written by a tool (ssh-keygen, openssl,
// PuTTYgen, gpg --export-secret-keys --armor, a cloud console's
// service-account JSON) starts with its header; what may come before it
// is short: openssl's "Bag Attributes" lines, or the certificates of a
// combined certificate-and-key file (HAProxy, nginx), 1-2 KiB each, so
// 16 KiB covers a chain of about eight. Reading 16 KiB instead of 4 KiB
// is still one pread(2) per file and costs the same on the small files
// that make up most trees (the kernel's readahead fetches 128 KiB of a
// cold file either way); see BENCHMARKS.md for the walk's cost.
const KeyHeadScan = 16 << 10

// HoldsPrivateKey reports whether the file open as fd holds a private
// key anywhere in its content (see keyText for the headers recognised).
// It reads with pread(2) from offset 0, so the file offset does not move,
// and never re-opens anything. A directory holds no key (false). It
// fails closed: true when fd is not a regular file or a directory, cannot
// be read (a write-only fd included), or is larger than MaxKeyScan bytes.
// It is the rule for names that match a private-key pattern
// (WithDenyPrivateKeys); HeadHoldsPrivateKey is the one for every other
// file (WithDenyPrivateKeyHeaders).
func HoldsPrivateKey(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return true
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return false
	case unix.S_IFREG:
	default:
		return true
	}
	if st.Size > MaxKeyScan {
		return true
	}
	buf := make([]byte, st.Size+1)
	n, err := preadFull(fd, buf)
	if err != nil {
		return true
	}
	if n > MaxKeyScan {
		return true // grew past the limit since the fstat
	}
	return keyText(buf[:n])
}

// HeadHoldsPrivateKey reports whether the first KeyHeadScan bytes of the
// regular file open as fd hold a private key header (see keyText): the
// whole header line must lie in them. It reads with one pread(2) from
// offset 0 (the file offset does not move) and never re-opens anything.
// Not a regular file (a directory, FIFO, socket or device): false, the
// file is not examined (a FIFO or socket has no content at rest, and
// reading it would consume what it delivers). A regular file that cannot
// be read (a write-only fd included) counts as a key (true, fail
// closed); its size does not matter.
//
// What it does not catch: a key whose header starts after the first
// KeyHeadScan bytes (a key pasted into the middle of a large file), a key
// stored in a binary format (DER, PKCS#12, a Java keystore: their names,
// *.key, *.p12, *.jks, are in SecretPatterns), and a key encoded again
// otherwise than base64 from its first byte (inside a larger base64
// text, a compressed archive).
func HeadHoldsPrivateKey(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return true
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	bp := headBufs.Get().(*[]byte)
	defer headBufs.Put(bp)
	n, err := preadFull(fd, *bp)
	if err != nil {
		return true
	}
	return keyText((*bp)[:n])
}

// headBufs holds KeyHeadScan-byte buffers for HeadHoldsPrivateKey, which
// a walk calls once per file from several goroutines.
var headBufs = sync.Pool{New: func() any { b := make([]byte, KeyHeadScan); return &b }}

// preadFull reads from offset 0 until buf is full or the end of the file,
// retrying EINTR.
func preadFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

var (
	pemBegin   = []byte("-----BEGIN ")
	puttyBegin = []byte("PuTTY-User-Key-File-")
	ssh2Begin  = []byte("---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----")
)

// keyText reports whether b holds a private key header:
//
//   - a PEM line "-----BEGIN <label>-----" whose label ends in "PRIVATE
//     KEY" (RFC 7468 sections 10 and 11: "PRIVATE KEY", "ENCRYPTED
//     PRIVATE KEY"; OpenSSL's legacy "RSA PRIVATE KEY", "EC PRIVATE
//     KEY", ...; OpenSSH's "OPENSSH PRIVATE KEY", PROTOCOL.key), or
//     OpenPGP's armored "PGP PRIVATE KEY BLOCK" (RFC 4880 section 6.2),
//     anywhere, not only at the start of a line: a service-account JSON
//     file holds it inside a string ("private_key": "-----BEGIN ...");
//
//   - PuTTY's "PuTTY-User-Key-File-<version>:" at the start of b (after
//     a UTF-8 byte order mark, if any) or of a line (PuTTY manual, appendix C, "PPK file format": versions 1 to
//     3 so far);
//
//   - the SSH Communications Security (ssh.com) format's "---- BEGIN
//     SSH2 ENCRYPTED PRIVATE KEY ----" line, which ssh-keygen -i reads.
//
//   - such a PEM header encoded in base64 from its first byte, as a
//     Kubernetes Secret's tls.key or a Helm value holds a key file
//     ("LS0tLS1CRUdJTi...": red team round 20, R20b-9).
//
// Prose that names a key ("put your PRIVATE KEY in ~/.ssh") has no header
// and is not a key; a document that quotes a whole header line is.
func keyText(b []byte) bool {
	return pemPrivateKey(b) || puttyKey(b) || bytes.Contains(b, ssh2Begin) || base64PEMKey(b)
}

// pemBegin64 is "-----BEGIN" in base64, from a three-byte boundary, and
// the run of its alphabet decoded to find the label.
var pemBegin64 = []byte("LS0tLS1CRUdJTi")

// base64PEMKey reports whether b holds a PEM private key header encoded
// in base64 from its first byte: each "LS0tLS1CRUdJTi" with the
// base64 run that follows it (up to 256 characters) decoded and read by
// pemPrivateKey.
func base64PEMKey(b []byte) bool {
	for {
		i := bytes.Index(b, pemBegin64)
		if i < 0 {
			return false
		}
		b = b[i:]
		n := 0
		for n < len(b) && n < 256 && isBase64(b[n]) {
			n++
		}
		n -= n % 4
		dec := make([]byte, base64.StdEncoding.DecodedLen(n))
		if m, err := base64.StdEncoding.Decode(dec, b[:n]); err == nil && pemPrivateKey(dec[:m]) {
			return true
		}
		b = b[len(pemBegin64):]
	}
}

func isBase64(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
}

// utf8BOM is the byte order mark a Windows editor may put first.
var utf8BOM = []byte("\xef\xbb\xbf")

// puttyKey reports whether b holds "PuTTY-User-Key-File-<digits>:" at
// its start (after a UTF-8 byte order mark, if any) or at the start of a
// line.
func puttyKey(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], puttyBegin)
		if j < 0 {
			return false
		}
		at := i + j
		i = at + len(puttyBegin)
		if at > 0 && b[at-1] != '\n' && (at != len(utf8BOM) || !bytes.HasPrefix(b, utf8BOM)) {
			continue
		}
		k := i
		for k < len(b) && b[k] >= '0' && b[k] <= '9' {
			k++
		}
		if k > i && k < len(b) && b[k] == ':' {
			return true
		}
	}
}

// pemPrivateKey reports whether b holds a "-----BEGIN ...PRIVATE KEY-----"
// header, or OpenPGP's armored "-----BEGIN PGP PRIVATE KEY BLOCK-----"
// (RFC 4880 section 6.2).
func pemPrivateKey(b []byte) bool {
	for {
		i := bytes.Index(b, pemBegin)
		if i < 0 {
			return false
		}
		b = b[i+len(pemBegin):]
		j := bytes.Index(b, []byte("-----"))
		if j < 0 {
			return false
		}
		label := b[:j]
		if !bytes.ContainsAny(label, "\r\n") &&
			(bytes.HasSuffix(label, []byte("PRIVATE KEY")) || bytes.HasSuffix(label, []byte("PRIVATE KEY BLOCK"))) {
			return true
		}
	}
}

// Narrowing returns how the policy narrows the canonical absolute path
// canon (symlinks resolved, as Resolve returns it, or an entry met by a
// walk that follows no symlink): 0 when canon is in no root, or when
// nothing narrows it. It compares strings only and touches no file. The
// protection of ".git" itself by WithProtectedAgentConfig (it cannot be
// created, removed or renamed) is not reported here: Landlock gets it
// from the frozen workspace root, and reporting the directory would make
// all of .git read-only for children.
func (w *Workspace) Narrowing(canon string) Narrowing { return w.narrowing(canon, false) }

// EntryNarrowing is Narrowing for a walk that starts at a root, follows
// no symlink and never descends into a denied directory: it matches the
// patterns against canon as an entry of its already-matched parent (the
// last-match rule of gitignore(5) at canon's own level), not against
// every parent again, which is what makes a 1,000,000-entry walk cheap.
// NarrowReadOnly is reported when canon itself matches; a read-only
// parent is the walker's to remember (everything below it is read-only).
// Use Narrowing for the entries directly below a root: their parents,
// above the root, were never met. Strings only, no file access.
func (w *Workspace) EntryNarrowing(canon string) Narrowing { return w.narrowing(canon, true) }

// narrowing is Narrowing, or with entryOnly EntryNarrowing: the deny and
// read-only patterns are matched against canon and all its parents, or
// against canon as an entry of its already-matched parent.
func (w *Workspace) narrowing(canon string, entryOnly bool) Narrowing {
	root := w.rootOf(canon)
	if root == nil {
		return 0
	}
	matches := func(d *denyMatcher) bool {
		if entryOnly {
			return d.entryExcluded(canon, root.Path)
		}
		return d.denied(canon, root.Path)
	}
	var n Narrowing
	if matches(w.deny) {
		n |= NarrowDenied
	}
	if matches(w.ro) || slices.ContainsFunc(w.roPaths, func(p string) bool { return within(canon, p) }) {
		n |= NarrowReadOnly
	}
	if matches(w.agentPat) || slices.ContainsFunc(w.agent, func(p string) bool { return within(canon, p) }) {
		n |= NarrowAgentConfig
	}
	switch w.keyScanOf(canon, root) {
	case scanWhole:
		n |= NarrowPrivateKey
	case scanHead:
		n |= NarrowKeyHeaders
	}
	return n
}

// NameNarrowing is Narrowing for the absolute path p by its name alone,
// whether or not a root holds it: the deny, read-only and private-key
// patterns are matched against p relative to "/", so those that match
// at any depth (".aws/", "**/.kube/config", ".env", "id_rsa*") see its
// components; anchored ones ("config/prod.key") do not. For a symbolic
// link outside the policy whose target is inside it (~/.aws ->
// dotfiles/aws with the dotfiles repository as the workspace: red team
// round 13, R13-5): landlock gives the target the verdict of the name
// that leads to it. Strings only, no file access; 0 for a relative p.
func (w *Workspace) NameNarrowing(p string) Narrowing { return w.nameNarrowing(p, false) }

// NameEntryNarrowing is NameNarrowing for a walk by name that never
// descends into a denied directory: p is matched as an entry of its
// already-matched parent (EntryNarrowing's rule), not with every parent
// again, so a name many components deep costs one match, not one per
// component (red team round 21, R21-1). NarrowReadOnly is reported when
// p itself matches. Strings only; 0 for a relative p.
func (w *Workspace) NameEntryNarrowing(p string) Narrowing { return w.nameNarrowing(p, true) }

// nameNarrowing is NameNarrowing, or with entryOnly NameEntryNarrowing.
func (w *Workspace) nameNarrowing(p string, entryOnly bool) Narrowing {
	if !filepath.IsAbs(p) || p == "/" {
		return 0
	}
	p = filepath.Clean(p)
	matches := func(d *denyMatcher) bool {
		if entryOnly {
			return d.entryExcluded(p, "/")
		}
		return d.denied(p, "/")
	}
	var n Narrowing
	if matches(w.deny) {
		n |= NarrowDenied
	}
	if matches(w.ro) {
		n |= NarrowReadOnly
	}
	if w.keys.matchesEntry(p, "/") {
		n |= NarrowPrivateKey
	}
	return n
}

// entryExcluded is excluded for the last component only, tried as a
// directory and as a file.
func (d *denyMatcher) entryExcluded(canon, root string) bool {
	if d.empty() {
		return false
	}
	if d.copies {
		for _, o := range copyOriginals(canon, root) {
			if d.entryExcludedName(o, root) {
				return true
			}
		}
	}
	return d.entryExcludedName(canon, root)
}

// entryExcludedName is entryExcluded for canon alone.
func (d *denyMatcher) entryExcludedName(canon, root string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" {
		if dir, file := d.all.ExcludedBoth(rel); dir || file {
			return true
		}
	}
	if d.outer(canon, root, func(rel string) bool { dir, file := d.all.ExcludedBoth(rel); return dir || file }) {
		return true
	}
	if d.rootInside(root) {
		return true
	}
	if !d.abs.Empty() && canon != "/" {
		if dir, file := d.abs.ExcludedBoth(canon[1:]); dir || file {
			return true
		}
	}
	return d.spansMatch(root, rel, func(parts []string) bool {
		dir, file := d.spans.ExcludedBoth(strings.Join(parts, "/"))
		return dir || file
	})
}

// ReadOnlyPaths returns the canonical absolute paths given to
// WithReadOnly (not the patterns, which ReadOnlyPatterns returns).
func (w *Workspace) ReadOnlyPaths() []string { return slices.Clone(w.roPaths) }

// ReadOnlyPatterns returns the patterns given to WithReadOnly.
func (w *Workspace) ReadOnlyPatterns() []string { return w.ro.patterns() }

// PrivateKeyPatterns returns the patterns given to WithDenyPrivateKeys.
func (w *Workspace) PrivateKeyPatterns() []string { return w.keys.patterns() }

// PrivateKeyHeaders reports whether WithDenyPrivateKeyHeaders is in
// force: every regular file in the roots is examined by its first bytes.
func (w *Workspace) PrivateKeyHeaders() bool { return w.keyHeaders }

// AgentConfigProtected returns the canonical absolute paths that
// WithProtectedAgentConfig protects (nil without it): each of
// AgentConfigPaths in the workspace root whether it exists or not, the
// in-policy target of an entry that is (or lies below) a symlink, ".git"
// when it is a file, and the hooks and config of the repository a
// gitfile points to when that lies in a policy root. Computed by New.
func (w *Workspace) AgentConfigProtected() []string { return slices.Clone(w.agent) }

// ProtectsSetID reports whether the set-ID and file-capability programs
// in ReadWrite roots are read-only (WithProtectedAgentConfig; see there
// and internal/setid): landlock.Compile then examines every regular
// file its walk meets in a writable root.
func (w *Workspace) ProtectsSetID() bool { return w.gitAny }

// readOnlyAt reports whether a write to canon is refused by WithReadOnly
// or WithProtectedAgentConfig.
func (w *Workspace) readOnlyAt(canon string, root *wsRoot) bool {
	if canon == w.gitEntry || w.gitAny && filepath.Base(canon) == ".git" {
		return true
	}
	if slices.ContainsFunc(w.agent, func(p string) bool { return within(canon, p) }) ||
		slices.ContainsFunc(w.roPaths, func(p string) bool { return within(canon, p) }) || w.linkReadOnly(canon) {
		return true
	}
	return w.ro.denied(canon, root.Path) || w.agentNested(canon, root.Path)
}

// agentNested reports whether AgentConfigNestedPatterns match canon or a
// parent. The matcher is asked only when a component of canon below root
// is one of the patterns' last names, or matches one that is a glob (the
// write path's hot spot: BenchmarkCheckWriteAgentConfig). The globs were
// left out once, as if every last name were literal: a nested
// mise.local.toml or x.continuerc.json was not protected (red team round
// 22, R22b-3).
func (w *Workspace) agentNested(canon, root string) bool {
	if w.agentPat.empty() {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	for rel != "" {
		name, rest, _ := strings.Cut(rel, "/")
		if w.agentNames[name] || slices.ContainsFunc(w.agentGlobs, func(g string) bool { ok, _ := path.Match(g, name); return ok }) {
			return w.agentPat.denied(canon, root)
		}
		rel = rest
	}
	return false
}

// narrows reports whether the policy has anything beyond roots and deny
// patterns that a fast path would have to consult.
func (w *Workspace) narrows() bool {
	return !w.ro.empty() || len(w.roPaths) > 0 || len(w.agent) > 0 || w.gitEntry != "" || w.gitAny || !w.agentPat.empty() || !w.keys.empty() || w.keyHeaders || w.linkDeny.Load() != nil
}

// keyScan says how a file is examined for a private key.
type keyScan uint8

const (
	scanNone  keyScan = iota
	scanHead          // WithDenyPrivateKeyHeaders: HeadHoldsPrivateKey
	scanWhole         // a WithDenyPrivateKeys pattern matches: HoldsPrivateKey
)

// keyScanOf returns how the entry canon in root is examined: a
// private-key pattern matching the entry itself wins over the header
// rule (it is stricter: the whole file, and fail closed on size and
// type).
func (w *Workspace) keyScanOf(canon string, root *wsRoot) keyScan {
	switch {
	case w.keys.matchesEntry(canon, root.Path):
		return scanWhole
	case w.keyHeaders:
		return scanHead
	}
	return scanNone
}

// holds examines the file open as fd by the rule s.
func (s keyScan) holds(fd int) bool {
	switch s {
	case scanWhole:
		return HoldsPrivateKey(fd)
	case scanHead:
		return HeadHoldsPrivateKey(fd)
	}
	return false
}

// keyDeniedPath reports whether canon holds a key by the rule keyScanOf
// gives it, examining it by path (O_NOFOLLOW: canon is canonical). A
// missing file holds nothing; a file that cannot be opened counts as a
// key (fail closed).
func (w *Workspace) keyDeniedPath(canon string, root *wsRoot) bool {
	switch w.keyScanOf(canon, root) {
	case scanWhole:
		return PathHoldsPrivateKey(canon)
	case scanHead:
		return PathHeadHoldsPrivateKey(canon)
	}
	return false
}

// PathHoldsPrivateKey is HoldsPrivateKey for the file at the canonical
// path canon, opened read-only with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY (a
// symlink, a FIFO or a terminal is never followed, waited on or made a
// controlling terminal). A missing file holds nothing (false); a file
// that cannot be opened counts as a key (true, fail closed). The answer
// is about the file at that moment: a caller that hands out data decides
// on the descriptor it reads instead (Workspace does).
func PathHoldsPrivateKey(canon string) bool { return PathHoldsPrivateKeyAs(canon, nil) }

// PathHoldsPrivateKeyAs is PathHoldsPrivateKey for a reader whose
// permission checks are not this process's (a confined command, which
// holds no capability and may run as another user): mayRead, given the
// descriptor of the regular file found, open but no byte read yet, says
// whether that reader may read it; when it says no, the file counts as
// a key unread (true), as one this process cannot open does. A planning
// walk as root read the heads of files in another user's 0700
// directory that the command cannot open, and its verdicts named them
// (red team round 30, R30d-6). nil: this process's own checks.
func PathHoldsPrivateKeyAs(canon string, mayRead func(pfd int) bool) bool {
	fd, err := openCanonRegular(canon, false, mayRead)
	if err == unix.ENOENT || err == unix.EISDIR {
		return false
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	return HoldsPrivateKey(fd)
}

// PathHeadHoldsPrivateKey is HeadHoldsPrivateKey for the file at the
// canonical path canon, opened as PathHoldsPrivateKey opens it, plus
// O_NOATIME where the caller may set it (the owner, or CAP_FOWNER: a walk
// that examines every file leaves their access times alone). A missing
// file holds nothing (false); a file that cannot be opened counts as a
// key (true, fail closed). The same caveat as PathHoldsPrivateKey: the
// answer is about the file at that moment.
func PathHeadHoldsPrivateKey(canon string) bool { return PathHeadHoldsPrivateKeyAs(canon, nil) }

// PathHeadHoldsPrivateKeyAs is PathHeadHoldsPrivateKey for a reader
// whose permission checks are not this process's, as
// PathHoldsPrivateKeyAs: a regular file mayRead says that reader cannot
// read counts as a key, unread.
func PathHeadHoldsPrivateKeyAs(canon string, mayRead func(pfd int) bool) bool {
	fd, err := openCanonRegular(canon, true, mayRead)
	if err == unix.ENOENT || err == unix.EISDIR || err == unix.EINVAL {
		return false // a FIFO, device or socket is not examined by its head
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	return HeadHoldsPrivateKey(fd)
}

// slashRoot is "/" as an openat.Root, opened once.
var slashRoot = sync.OnceValues(func() (*openat.Root, error) { return openat.OpenRoot("/") })

// openCanonRegular opens the regular file at canon, a canonical path,
// for reading, with no side effect on anything else: an O_PATH open
// beneath "/" that follows no symbolic link on the way
// (RESOLVE_NO_SYMLINKS, or the O_NOFOLLOW walk), fstat'ed, and reopened
// through /proc/self/fd only when it is a regular file (O_NONBLOCK,
// O_NOCTTY; O_NOATIME with noatime, where the caller may set it). A
// command that swapped a directory of the tree for a link while a
// planning walk ran made it open files and devices outside the policy by
// their path (a FIFO's writers released, /dev/full opened: red team round
// 27, R27e-5); now the open fails (ELOOP, EXDEV) and the caller counts
// the name as a key (fail closed). A regular file mayRead (when not
// nil) refuses is closed unread. Errors: ENOENT when canon is missing,
// EISDIR for a directory (no key of its own, as before), ELOOP for a
// symbolic link (not followed), EINVAL for any other file that is not
// regular, EACCES when mayRead refuses it, the open's.
func openCanonRegular(canon string, noatime bool, mayRead func(pfd int) bool) (int, error) {
	r, err := slashRoot()
	if err != nil {
		return -1, err
	}
	pfd, err := r.OpenFd(strings.TrimPrefix(canon, "/"), unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return -1, unix.ENOENT
		}
		return -1, err
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return -1, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		return -1, unix.EISDIR // holds no key of its own
	case unix.S_IFLNK:
		return -1, unix.ELOOP // not followed: fail closed
	default:
		return -1, unix.EINVAL
	}
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	proc := "/proc/self/fd/" + strconv.Itoa(pfd)
	fd, err := -1, unix.EPERM
	if noatime {
		fd, err = unix.Open(proc, flags|unix.O_NOATIME, 0)
	}
	if err == unix.EPERM { // O_NOATIME needs ownership
		fd, err = unix.Open(proc, flags, 0)
	}
	// The reader's check is on the file opened, before any byte is
	// read (a regular file's open has no side effect; its fgetxattr is
	// cheaper than the O_PATH descriptor's getxattr by /proc path).
	if err == nil && mayRead != nil && !mayRead(fd) {
		unix.Close(fd)
		return -1, unix.EACCES
	}
	return fd, err
}

// keyCheck fails with ErrDenied when the existing file at t holds a key
// by the rule keyScanOf gives it, examined through an fd opened beneath
// t's root (O_NOFOLLOW; a raced symlink fails the open and the operation
// is retried). A missing file is fine; any other open error counts as a
// key (fail closed).
func (w *Workspace) keyCheck(op, name string, t target) error {
	s := w.keyScanOf(t.canon, t.root)
	if s == scanNone {
		return nil
	}
	return w.keyCheckRel(op, name, t.root, t.rel, s)
}

func (w *Workspace) keyCheckRel(op, name string, root *wsRoot, rel string, s keyScan) error {
	if fi, err := root.r.Lstat(rel); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeDir) != 0 {
		return nil // a link holds no key (its target is checked where it lives)
	}
	fd, err := root.r.OpenFd(rel, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil && isRaced(err) {
		return err
	}
	if err != nil || s.holds(fd) {
		if err == nil {
			unix.Close(fd)
		}
		return &fs.PathError{Op: op, Path: name, Err: ErrDenied}
	}
	unix.Close(fd)
	return nil
}

// matchesEntry reports whether the entry canon itself (not a parent)
// matches the patterns, as a file.
func (d *denyMatcher) matchesEntry(canon, root string) bool {
	if d.empty() {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" && d.all.Match(strings.Split(rel, "/"), false) == gitignore.Excluded {
		return true
	}
	if d.outer(canon, root, func(rel string) bool { return d.all.Match(strings.Split(rel, "/"), false) == gitignore.Excluded }) {
		return true
	}
	if !d.abs.Empty() && canon != "/" && d.abs.Match(strings.Split(strings.TrimPrefix(canon, "/"), "/"), false) == gitignore.Excluded {
		return true
	}
	return d.spansMatch(root, rel, func(parts []string) bool { return d.spans.Match(parts, false) == gitignore.Excluded })
}

// agentProtected computes AgentConfigProtected for the workspace root:
// agentPaths, and the targets of the symbolic links inside the protected
// directories (linkTargets). More than maxAgentLinkScan entries in all
// fail with ErrScanLimit.
func (w *Workspace) agentProtected(root string) ([]string, error) {
	budget := maxAgentLinkScan
	paths, err := w.agentPaths(root, &budget)
	if err != nil {
		return nil, err
	}
	return w.linkTargets(paths, &budget)
}

// maxAgentLinkScan bounds the entries agentProtected reads in the
// protected directories, the workspace's and HOME's together (hooks
// directories hold a few dozen; a Claude Code ~/.claude with its
// file-history some thousands). A variable for tests.
var maxAgentLinkScan = 200_000

// scanLimit is the error of a scan that met more than maxAgentLinkScan
// entries, at dir.
func scanLimit(dir string) error {
	return &fs.PathError{Op: "jail.WithProtectAgentConfig", Path: dir, Err: fmt.Errorf("%w (%d)", ErrScanLimit, maxAgentLinkScan)}
}

// linkTargets adds to paths the in-policy targets of the symbolic links
// found below the protected directories among them (no link followed on
// the way, at most *budget entries: more fail with ErrScanLimit): a hook
// that is a link into the repository (.git/hooks/pre-commit ->
// ../../scripts/pre-commit, a .claude/settings.json -> ...) runs the
// target, which must be as protected as the hook (red team round 5, N8).
func (w *Workspace) linkTargets(paths []string, budget *int) ([]string, error) {
	out := slices.Clone(paths)
	for _, p := range paths {
		dir := p
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A protected name that is a link out of the policy: the
			// links in its target lead back in by names below it
			// (.claude -> ../out/claude, out/claude/settings.json ->
			// ../../w/cfg/claude-settings.json: red team round 22,
			// R22a-7). A target in a writable root is in paths itself.
			if t := evalLinks(p); t != "" && !w.writableRootOf(t) {
				if st, serr := os.Stat(t); serr == nil {
					dir, fi = t, st
				}
			}
		}
		if err != nil || !fi.IsDir() {
			continue
		}
		var over error
		_ = filepath.WalkDir(dir, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() || d.Type()&fs.ModeSymlink != 0 { // plain files cannot lead anywhere (R16-3)
				if *budget--; *budget < 0 {
					over = scanLimit(p)
					return filepath.SkipAll
				}
			}
			if d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			t := evalLinks(q) // a dangling hook link too: where its target would be made
			if t == "" || !w.writableRootOf(t) || w.aboveRoot(t) || w.rootOfExact(t) != nil || slices.Contains(out, t) {
				return nil
			}
			out = append(out, t)
			w.addChain(q, func(l string) {
				if !slices.Contains(out, l) {
					out = append(out, l)
				}
			})
			return nil
		})
		if over != nil {
			return nil, over
		}
	}
	return out, nil
}

// relocatedAgentConfig returns the start-up and tool configuration files
// the environment moves out of HOME's places (absolute values only): git's
// GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM, $CARGO_HOME/config.toml,
// $ZDOTDIR's zsh files, npm's NPM_CONFIG_USERCONFIG, $GRADLE_USER_HOME's
// init scripts, PYTHONSTARTUP, INPUTRC, and BASH_ENV and ENV (sourced by
// every non-interactive bash, every sh): protected where they are (red
// team round 15, R15a-22: GIT_CONFIG_GLOBAL=~/dotfiles/gitconfig took
// core.fsmonitor from the command).
func relocatedAgentConfig(root string) []string {
	var out []string
	for _, l := range []struct {
		env   string
		names []string // inside the directory the variable names; none: the file itself
	}{
		{"GIT_CONFIG_GLOBAL", nil}, {"GIT_CONFIG_SYSTEM", nil},
		{"CARGO_HOME", []string{"config.toml", "config"}},
		{"ZDOTDIR", []string{".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout"}},
		{"NPM_CONFIG_USERCONFIG", nil}, {"npm_config_userconfig", nil},
		{"GRADLE_USER_HOME", []string{"init.d", "init.gradle", "init.gradle.kts", "gradle.properties"}},
		{"PYTHONSTARTUP", nil}, {"INPUTRC", nil}, {"BASH_ENV", nil}, {"ENV", nil},
		// The agents' own directories, the user site directory and the
		// editors' data moved by the environment (red team round 16,
		// R16-13).
		{"CLAUDE_CONFIG_DIR", nil}, {"CODEX_HOME", nil},
		{"PYTHONUSERBASE", []string{"lib"}},
		{"XDG_DATA_HOME", []string{"nvim", "bash-completion"}},
	} {
		var forms []string
		for _, v := range envPaths(os.Getenv(l.env), root) {
			forms = append(forms, pathForms(v)...) // as written and resolved (R16-1)
		}
		for _, f := range forms {
			if l.names == nil {
				out = append(out, f)
			}
			for _, n := range l.names {
				out = append(out, filepath.Join(f, n))
			}
		}
	}
	return out
}

// addChain passes to add every link on the way from p to its target
// (linkChain, p itself excepted) that lies in a writable root and is not
// a root or above one: re-pointed, such a link would lead the protected
// name to the command's file (red team round 15, R15a-19:
// .git/hooks/pre-commit -> ../../hooks/pc -> impl/pc.sh with hooks/pc
// re-pointed ran the command's script on the user's commit).
func (w *Workspace) addChain(p string, add func(string)) {
	for _, l := range linkChain(p) {
		if l != p && w.writableRootOf(l) && !w.aboveRoot(l) && w.rootOfExact(l) == nil {
			add(l)
		}
	}
}

// agentPaths is agentProtected without the link targets; the links in
// HOME's protected directories count toward *budget.
func (w *Workspace) agentPaths(root string, budget *int) ([]string, error) {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	inPolicy := func(p string) bool { return w.rootOf(p) != nil }
	for _, rel := range AgentConfigPaths {
		if strings.ContainsAny(rel, "*?[") {
			continue // a pattern ("mise.*.toml"): agentPat matches it
		}
		p := filepath.Join(root, strings.TrimSuffix(rel, "/"))
		add(p)
		if t := evalLinks(p); t != "" && inPolicy(t) {
			add(t)
			w.addChain(p, add)
		}
	}
	// Red team round 11, R11a-7: a workspace inside HOME (~/.config,
	// ~/.ssh: an agent asked to edit the user's dotfiles) holds HOME's
	// start-up files under other names (git/config is the global git
	// configuration): those are protected where they are, and a
	// workspace inside one of them is protected whole.
	if home := canonicalHome(); home != "" {
		paths := relocatedAgentConfig(root)
		// Every $PATH directory inside HOME (~/.cargo/bin, ~/.pyenv/shims,
		// ~/go/bin, ~/.local/bin, ~/bin: toolchains put them before
		// /usr/bin): a program the command drops there runs on the user's
		// next command of that name (red team round 16, R16-9).
		// Only one inside the workspace, never the workspace or one
		// above it (a PATH entry of ~/work must not freeze a workspace
		// ~/work/proj).
		for _, d := range filepath.SplitList(os.Getenv("PATH")) {
			if d == "" || filepath.Clean(d) == "." {
				continue // the current directory: not one place
			}
			// A relative entry (thoughtbot's .git/safe/../../bin) from the
			// workspace and the working directory, as the relocation
			// variables are (red team round 18, R18a-17).
			var forms []string
			if filepath.IsAbs(d) {
				forms = pathForms(filepath.Clean(d))
			} else {
				// As the kernel reads it: ".." after a directory that
				// exists (an untrusted repository has no .git/safe).
				// A missing last component (no bin/ yet) is the name
				// the command could create: its directory as the kernel
				// follows it, then the name (red team round 19, R19-3).
				for _, base := range []string{root, cwd()} {
					if base == "" {
						continue
					}
					if f, err := filepath.EvalSymlinks(base + "/" + d); err == nil { // not Join: it cleans ".." away
						forms = append(forms, f)
					} else if dir, name := filepath.Split(strings.TrimSuffix(d, "/")); name != ".." && name != "." && name != "" {
						if f, err := filepath.EvalSymlinks(base + "/" + dir); err == nil {
							forms = append(forms, filepath.Join(f, name))
						}
					}
				}
			}
			for _, f := range forms {
				if f != home && within(f, home) && f != root && within(f, root) {
					add(f)
				}
			}
			// The links on the entry's way to its directory (Nix's
			// ~/.nix-profile -> ~/.local/state/nix/profiles/profile ->
			// profile-N-link -> /nix/store/...: re-pointed, the user's
			// next command is the command's; red team round 20, R20b-3).
			if filepath.IsAbs(d) {
				w.addChain(filepath.Clean(d), add)
			}
		}
		// Python imports sitecustomize and usercustomize from every
		// PYTHONPATH directory at each start: those names are protected
		// in a PYTHONPATH directory of the workspace (red team round 20,
		// R20b-10). The directory's other modules are the project's code
		// (README: PYTHONPATH, PERL5LIB, RUBYLIB, NODE_PATH).
		for _, d := range filepath.SplitList(os.Getenv("PYTHONPATH")) {
			for _, v := range envPaths(d, root) {
				for _, f := range pathForms(v) {
					if within(f, root) {
						add(filepath.Join(f, "sitecustomize.py"))
						add(filepath.Join(f, "usercustomize.py"))
						// Their sourceless and cached bytecode (red
						// team round 31, R31c-12).
						add(filepath.Join(f, "sitecustomize.pyc"))
						add(filepath.Join(f, "usercustomize.pyc"))
						add(filepath.Join(f, "__pycache__"))
					}
				}
			}
		}
		for _, rel := range slices.Concat(agentConfigHomeOnly, agentConfigHomeDir) {
			paths = append(paths, filepath.Join(home, strings.TrimSuffix(rel, "/")))
			// $XDG_CONFIG_HOME, where it is not ~/.config, is where git,
			// fish, systemd and the others read them (red team round 12,
			// R12-11: XDG_CONFIG_HOME=~/.xdg left ~/.xdg/git/config open).
			if in, ok := strings.CutPrefix(rel, ".config/"); ok {
				if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) && filepath.Clean(x) != filepath.Join(home, ".config") {
					paths = append(paths, filepath.Join(x, strings.TrimSuffix(in, "/")))
				}
			}
			// And $XDG_DATA_HOME for ~/.local/share's (user units, D-Bus
			// services, desktop entries, fish's vendor_conf.d: red team
			// round 18, R18a-8).
			if in, ok := strings.CutPrefix(rel, ".local/share/"); ok {
				if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) && filepath.Clean(x) != filepath.Join(home, ".local/share") {
					paths = append(paths, filepath.Join(x, strings.TrimSuffix(in, "/")))
				}
			}
		}
		for _, p := range paths {
			switch {
			case within(root, p):
				add(root)
			case within(p, root):
				add(p)
			}
			// A start-up file of HOME that is a link into the workspace
			// (~/.bashrc -> dotfiles/bash/.bashrc, ~/.config/git ->
			// ../dotfiles/git: GNU stow, rcm, dotbot) is protected where
			// it lives (red team round 12, R12-3).
			if t := evalLinks(p); t != "" && within(t, root) {
				add(t)
				w.addChain(p, add)
			}
		}
		// So is HOME's own agent and tool configuration (~/.claude,
		// ~/.codex, ~/.npmrc, ~/.cargo/config.toml: what the user's next
		// agent or build reads), and a link inside one of HOME's protected
		// directories that is itself real (~/.ssh/config ->
		// ../dotfiles/ssh/config, stow --no-folding) (red team round 13,
		// R13-6).
		// $XDG_CONFIG_HOME's as ~/.config's, wherever it is (red team
		// round 15, R15a-3: ~/cfg/git/config -> dotfiles/git/config).
		xdg := ""
		if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) && filepath.Clean(x) != filepath.Join(home, ".config") {
			xdg = filepath.Clean(x)
		}
		for _, rel := range slices.Concat(AgentConfigPaths, agentConfigHomeOnly, agentConfigHomeDir) {
			if strings.ContainsAny(rel, "*?[") {
				continue
			}
			ps := []string{filepath.Join(home, strings.TrimSuffix(rel, "/"))}
			if in, ok := strings.CutPrefix(rel, ".config/"); ok && xdg != "" {
				ps = append(ps, filepath.Join(xdg, strings.TrimSuffix(in, "/")))
			}
			for _, p := range ps {
				t := evalLinks(p)
				if t != "" && within(t, root) {
					add(t)
					w.addChain(p, add)
				}
				// Read whatever the grants (--rw ~/.config, --rw ~/.claude:
				// red team round 16, R16-8, a skip of writable roots here
				// left their links' targets writable); bounded, and
				// failing closed.
				if !strings.HasSuffix(rel, "/") {
					continue
				}
				// Through a link too: ~/.claude -> /data/claude, moved
				// out of HOME (red team round 15, R15a-11).
				if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
					continue
				}
				// Three levels down (~/.claude/hooks/pre.sh,
				// ~/.config/nvim/lua/init.lua: red team round 14, R14-2);
				// a directory beyond the budget fails closed (R15a-2).
				err := linkscan.Walk(p, 3, budget, nil, func(q string) {
					if t := evalLinks(q); t != "" && within(t, root) {
						add(t)
						w.addChain(q, add)
					}
				})
				if err != nil {
					return nil, scanLimit(linkscan.StoppedAt(err, p))
				}
			}
		}
	}
	// Red team F9: what the repository's git configuration (and the
	// user's global one) points at in a writable root: an included
	// config file, the hooks directory, a filter driver's script.
	for _, p := range gitConfigReferences(gitConfigFiles(root), repoTop(root), homeDir()) {
		for _, c := range []string{p, evalLinks(p)} {
			if c != "" && w.writableRootOf(c) && !w.aboveRoot(c) && w.rootOfExact(c) == nil {
				add(c)
			}
			w.addRootHooks(c, add)
		}
	}
	// Red team round 6, R6-1: a submodule's or a linked worktree's git
	// directory in the root's repository resolves its relative
	// references (core.hooksPath, driver scripts) against its own
	// worktree, and a linked worktree runs the common configuration
	// there too: for each one whose worktree is in the policy.
	for _, gd := range LinkedGitDirs(filepath.Join(repoTop(root), ".git")) {
		top := GitWorktreeOf(gd)
		if top == "" || !inPolicy(top) {
			continue
		}
		for _, p := range gitConfigReferences(append(GitDirConfigFiles(gd), GitGlobalConfigFiles()...), top, homeDir()) {
			for _, c := range []string{p, evalLinks(p)} {
				if c != "" && w.writableRootOf(c) && !w.aboveRoot(c) && w.rootOfExact(c) == nil {
					add(c)
				}
				w.addRootHooks(c, add)
			}
		}
	}
	git := filepath.Join(root, ".git")
	fi, err := os.Lstat(git)
	if err != nil || fi.IsDir() {
		return out, nil
	}
	add(git)
	// The links on the way to the gitfile's directory as written
	// (gitdir: gitstore/sub.git with gitstore -> stores/v1): re-pointed,
	// git would take the command's directory (red team round 15,
	// R15a-21).
	if b, err := readConfigFile(git); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:"); ok {
			if d = strings.TrimSpace(d); !filepath.IsAbs(d) {
				d = root + "/" + d // not Join: ".." after a link is physical (R16-7)
			}
			w.addChain(d, add)
		}
	}
	// A gitfile ("gitdir: DIR") selects another repository directory;
	// a worktree's "commondir" file selects where hooks and config live.
	for _, dir := range gitDirs(git) {
		if !inPolicy(dir) {
			continue
		}
		for _, n := range []string{"hooks", "config"} {
			p := filepath.Join(dir, n)
			if t, err := filepath.EvalSymlinks(p); err == nil {
				p = t
			}
			if inPolicy(p) {
				add(p)
			}
		}
	}
	return out, nil
}

// LinkedGitDirs returns the git directories kept inside the repository
// directory dotgit (a ".git" directory; nil otherwise): its linked
// worktrees' (worktrees/NAME) and its submodules' (modules/NAME, nested
// modules too, at most 8 levels), each a directory holding a HEAD.
// Absolute, in directory order. Red team round 6, R6-1.
func LinkedGitDirs(dotgit string) []string {
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.IsDir() {
		return nil
	}
	var out []string
	isGitDir := func(d string) bool {
		_, err := os.Lstat(filepath.Join(d, "HEAD"))
		return err == nil
	}
	if ents, err := os.ReadDir(filepath.Join(dotgit, "worktrees")); err == nil {
		for _, e := range ents {
			if d := filepath.Join(dotgit, "worktrees", e.Name()); e.IsDir() && isGitDir(d) {
				out = append(out, d)
			}
		}
	}
	var modules func(dir string, depth int)
	modules = func(dir string, depth int) {
		if depth > 8 {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			d := filepath.Join(dir, e.Name())
			if isGitDir(d) {
				out = append(out, d)
				modules(filepath.Join(d, "modules"), depth+1)
			} else {
				modules(d, depth+1) // a submodule named "a/b"
			}
		}
	}
	modules(filepath.Join(dotgit, "modules"), 0)
	return out
}

// GitDirConfigFiles returns the configuration files git reads for the
// git directory gitdir, besides the global ones: its own config and
// config.worktree, and, for a linked worktree (a "commondir" file), the
// common directory's config. Whether or not they exist.
func GitDirConfigFiles(gitdir string) []string {
	out := []string{filepath.Join(gitdir, "config"), filepath.Join(gitdir, "config.worktree")}
	if c, err := readConfigFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		out = append(out, filepath.Join(common, "config"))
	}
	return out
}

// GitWorktreeOf returns the top of the worktree whose commands git runs
// with the git directory gitdir (absolute, cleaned; "" when it cannot
// tell), as git finds it: core.worktree in its configuration (relative
// to gitdir: a submodule's "../../../sub"); for a linked worktree
// (gitdir/gitdir names WORKTREE/.git) WORKTREE; for DIR/.git, DIR; and
// for a bare repository gitdir itself (its hooks run there,
// githooks(5)). Red team round 6, R6-1: relative references of a
// submodule or linked worktree were taken from the git directory's
// parent. Files are read only when regular, never blocking on a FIFO.
func GitWorktreeOf(gitdir string) string {
	for _, f := range GitDirConfigFiles(gitdir) {
		b, err := readConfigFile(f)
		if err != nil {
			continue
		}
		wt := ""
		for _, e := range parseGitConfig(b, f) {
			if e.key == "core.worktree" {
				wt = e.value // the last one wins
			}
		}
		if wt != "" {
			if !filepath.IsAbs(wt) {
				wt = filepath.Join(gitdir, wt)
			}
			return filepath.Clean(wt)
		}
	}
	if b, err := readConfigFile(filepath.Join(gitdir, "gitdir")); err == nil {
		p := strings.TrimSpace(string(b))
		if !filepath.IsAbs(p) {
			p = filepath.Join(gitdir, p)
		}
		return filepath.Dir(filepath.Clean(p))
	}
	if filepath.Base(gitdir) == ".git" {
		return filepath.Dir(gitdir)
	}
	return filepath.Clean(gitdir)
}

// GitDirs returns the git directories a worktree's ".git" entry
// selects (absolute, symbolic links resolved where they exist): the
// entry itself when it is a directory; for a gitfile ("gitdir: DIR", a
// linked worktree or a submodule) DIR and its commondir, if it has one,
// where git keeps hooks and config. Nil when dotgit is neither (or
// cannot be read). Files are read only when regular, never blocking on
// a FIFO. internal/sweep uses it for the repositories it finds.
func GitDirs(dotgit string) []string {
	fi, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return nil
	case fi.IsDir():
		return []string{dotgit}
	case !fi.Mode().IsRegular():
		return nil
	}
	return gitDirs(dotgit)
}

// gitDirs returns the repository directories a gitfile points to: the
// gitdir, and its commondir if it has one, symlinks resolved where they
// exist.
func gitDirs(gitfile string) []string {
	b, err := readConfigFile(gitfile)
	if err != nil {
		return nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		// Not Join, which cleans "lnk/.." away: git resolves ".." after
		// a link physically (red team round 16, R16-7).
		dir = filepath.Dir(gitfile) + "/" + dir
	}
	if t, err := filepath.EvalSymlinks(dir); err == nil {
		dir = t
	} else if t := evalLinks(dir); t != "" {
		dir = t
	} else {
		dir = filepath.Clean(dir)
	}
	out := []string{dir}
	if c, err := readConfigFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		if t, err := filepath.EvalSymlinks(common); err == nil {
			common = t
		}
		out = append(out, common)
	}
	return out
}

// writableRootOf reports whether p lies in a ReadWrite root of the
// policy (the system root of Unrestricted does not count).
func (w *Workspace) writableRootOf(p string) bool {
	for i := range w.roots {
		if w.roots[i].Mode == ReadWrite && within(p, w.roots[i].Path) {
			return true
		}
	}
	return false
}

// gitHookNames are the hooks git runs from a hooks directory
// (githooks(5), git 2.47), and the entries of a template directory
// (init.templateDir) that git copies into each new repository's .git
// and that carry code or pointers (hooks/, info/, config, objects/ with
// its alternates).
var gitHookNames = []string{
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive",
	"update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc",
	"post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change", "hooks", "info",
	// A template directory's files are copied into each new repository's
	// .git: its config (core.fsmonitor) too (red team round 27, R27d-3).
	"config", "config.worktree", "commondir", "objects",
}

// GitHookNames returns the names protected in a writable root that a
// git reference (core.hooksPath, init.templateDir) names itself: the
// hooks githooks(5) lists and a template directory's entries that carry
// code (a new slice each call). internal/sweep protects them below the
// workspace root when a nested repository's reference names it (red
// team round 27, R27d-4).
func GitHookNames() []string { return slices.Clone(gitHookNames) }

// addRootHooks passes to add the hook names (gitHookNames) in c when c,
// a reference of the git configuration, is a writable root itself
// (core.hooksPath = ., or the workspace's absolute path): the root is
// never made read-only whole (rootOfExact), but git runs the hooks
// there, so they are protected by name, existing or not (red team
// round 26, R26a-9: the command wrote pre-commit at the top and the
// user's next commit ran it).
func (w *Workspace) addRootHooks(c string, add func(string)) {
	if c == "" {
		return
	}
	if r := w.rootOfExact(c); r == nil || r.Mode != ReadWrite {
		return
	}
	for _, n := range gitHookNames {
		add(filepath.Join(c, n))
	}
}

// rootOfExact returns the root whose path is p, nil if none is: a root
// is never made read-only by a reference to it (core.hooksPath = .).
func (w *Workspace) rootOfExact(p string) *wsRoot {
	for i := range w.roots {
		if w.roots[i].Path == p {
			return &w.roots[i]
		}
	}
	return nil
}

// ResolveLinks is evalLinks for internal/sweep: p with the symbolic
// links on its way resolved, dangling ones by their text and a missing
// rest appended ("" when that is p itself or there is a loop).
func ResolveLinks(p string) string { return evalLinks(p) }

// evalLinks returns p with the symbolic links on its way resolved, ""
// when that is p itself or cannot be told (a loop). Where p does not
// exist, the tree is followed as far as it goes, a dangling link by its
// text, and the missing rest appended: the path a later create of p
// would make (red team round 9, R9-1: conf -> build/conf under an
// include.path of conf/git/local.inc, a stowed .config, a dangling hook
// link; a reference protected only where it exists left them open).
func evalLinks(p string) string {
	if t, err := filepath.EvalSymlinks(p); err == nil {
		if t == p {
			return ""
		}
		return t
	}
	out, ok := resolveWalk(p, nil)
	if !ok || out == p {
		return ""
	}
	return out
}

// resolveWalk resolves the absolute path p one component at a time, as
// the kernel would, calling onLink (if not nil) with the path of each
// symbolic link met (its directory resolved). It returns where p leads:
// for a dangling path the first missing component joined with the rest;
// false after 40 links or at a link it cannot read.
func resolveWalk(p string, onLink func(string)) (string, bool) {
	cur := "/"
	// Not cleaned first: ".." after a link is resolved physically, as
	// the kernel does (red team round 16, R16-7).
	rest := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for hops := 0; len(rest) > 0; {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, rest...)...), true
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if hops++; hops > 40 {
				return "", false
			}
			t, err := os.Readlink(next)
			if err != nil || t == "" {
				return "", false
			}
			if onLink != nil {
				onLink(next)
			}
			if filepath.IsAbs(t) {
				cur = "/"
			}
			rest = append(strings.Split(t, "/"), rest...)
			continue
		}
		cur = next
	}
	return cur, true
}

// linkChain returns the symbolic links met while resolving p, in order,
// each by its own path (its directory resolved): p itself when it is
// one, and every link on the way to where it leads (.envrc -> env/a ->
// real.sh gives .envrc and env/a). At most 40 hops, as evalLinks.
// LinkChain returns linkChain(p): the symbolic links met on the way from
// p to what it names, in the order the kernel follows them (p itself
// first when it is one), each once. No file is opened; a loop or a
// dangling link ends the chain. For internal/learn, which refuses a
// grant that could re-point a PATH entry's way (red team round 20,
// R20b-3: Nix's ~/.local/state/nix/profiles/profile).
func LinkChain(p string) []string { return linkChain(p) }

func linkChain(p string) []string {
	var out []string
	resolveWalk(p, func(l string) {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	})
	return out
}

// envPath returns the path an environment variable's value v names for
// the tools that read it: v cleaned when absolute, joined to landjail's
// working directory when relative (kubectl, docker, cargo, git and the
// AWS SDKs open a relative value from their working directory: where the
// user runs them, where landjail starts the command), "" when v is empty,
// "/" or the working directory is unknown (red team round 17, R17a-1).
func envPath(v string) string {
	if v == "" {
		return ""
	}
	if !filepath.IsAbs(v) {
		wd, err := os.Getwd()
		if err != nil {
			return ""
		}
		v = filepath.Join(wd, v)
	}
	if v = filepath.Clean(v); v == "/" {
		return ""
	}
	return v
}

// cwd is landjail's working directory ("" when unknown).
func cwd() string {
	wd, _ := os.Getwd()
	return wd
}

// envPaths returns envPath(v) and, for a relative v, the path from root
// too (the command starts in the workspace; an MCP client may start
// landjail-mcp in HOME or "/": R17a-1).
func envPaths(v, root string) []string {
	p := envPath(v)
	if p == "" {
		return nil
	}
	out := []string{p}
	if !filepath.IsAbs(v) && root != "" {
		if r := filepath.Join(root, v); r != p && r != "/" {
			out = append(out, r)
		}
	}
	return out
}

// homeDir is the caller's home directory for "~/" in git configuration
// ("" when HOME is unset).
func homeDir() string { return HomeDir() }

// HomeDir returns the caller's home directory: $HOME, or where HOME is
// unset or not absolute (a service, cron, env -i, an MCP client's minimal
// environment) the user database's entry, as ssh and git do (os/user);
// "" when neither is known. HOME's link scans and start-up files use it,
// so that an unset HOME does not skip them silently (red team round 16,
// R16-16).
func HomeDir() string {
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return h
	}
	if u, err := user.Current(); err == nil && filepath.IsAbs(u.HomeDir) {
		return u.HomeDir
	}
	return ""
}

// canonicalHome is homeDir with its symbolic links resolved ("" when
// unknown or not absolute).
func canonicalHome() string {
	h := homeDir()
	if !filepath.IsAbs(h) {
		return ""
	}
	if c, err := filepath.EvalSymlinks(h); err == nil {
		return c
	}
	return h
}

// repoTop returns the directory holding the ".git" of the repository
// root is in (root itself, or the nearest ancestor with a ".git"), or
// root when there is none: where git runs hooks and commands.
func repoTop(root string) string {
	for d := root; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == "/" {
			return root
		}
	}
}

// gitConfigFiles returns the git configuration files that apply in
// root: the repository's (config and config.worktree of its git
// directory and commondir, through a gitfile too) and the user's global
// and system files (GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM, ~/.gitconfig,
// $XDG_CONFIG_HOME/git/config, /etc/gitconfig), whether or not they
// exist.
func gitConfigFiles(root string) []string {
	var out []string
	for _, d := range GitDirs(filepath.Join(repoTop(root), ".git")) {
		out = append(out, filepath.Join(d, "config"), filepath.Join(d, "config.worktree"))
	}
	out = append(out, GitGlobalConfigFiles()...)
	for _, e := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if v := os.Getenv(e); v != "" && !filepath.IsAbs(v) {
			out = append(out, envPaths(v, root)...) // from the workspace too (R17a-1)
		}
	}
	return out
}

// GitGlobalConfigFiles returns the user's global and the system git
// configuration files, as git finds them (GIT_CONFIG_GLOBAL, else
// ~/.gitconfig and $XDG_CONFIG_HOME/git/config; GIT_CONFIG_SYSTEM, else
// /etc/gitconfig), whether or not they exist: the files whose references
// apply in every repository (WithProtectedAgentConfig, internal/sweep).
func GitGlobalConfigFiles() []string {
	var out []string
	if f := os.Getenv("GIT_CONFIG_GLOBAL"); f != "" {
		if f = envPath(f); f != "" {
			out = append(out, f)
		}
	} else if h := homeDir(); h != "" {
		out = append(out, filepath.Join(h, ".gitconfig"))
		x := os.Getenv("XDG_CONFIG_HOME")
		if x == "" {
			x = filepath.Join(h, ".config")
		}
		out = append(out, filepath.Join(x, "git", "config"))
	}
	if f := os.Getenv("GIT_CONFIG_SYSTEM"); f != "" {
		if f = envPath(f); f != "" {
			out = append(out, f)
		}
	} else {
		out = append(out, "/etc/gitconfig")
	}
	return out
}
