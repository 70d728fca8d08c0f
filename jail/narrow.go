package jail

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/gitignore"
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
)

// MaxKeyScan is the largest file, in bytes, that HoldsPrivateKey
// examines (1 MiB: a PEM bundle of every public CA is about 220 KiB;
// a private key is a few KiB). A larger file counts as a private key.
const MaxKeyScan = 1 << 20

// HoldsPrivateKey reports whether the file open as fd holds a PEM private
// key block: a line "-----BEGIN <label>-----" whose label ends in
// "PRIVATE KEY" (RFC 7468 section 10 and 11; OpenSSL's legacy "RSA
// PRIVATE KEY", "EC PRIVATE KEY", OpenSSH's "OPENSSH PRIVATE KEY"). It
// reads with pread(2) from offset 0, so the file offset does not move,
// and never re-opens anything. A directory holds no key (false). It
// fails closed: true when fd is not a regular file or a directory, cannot
// be read (a write-only fd included), or is larger than MaxKeyScan bytes.
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
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return true
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n > MaxKeyScan {
		return true // grew past the limit since the fstat
	}
	return pemPrivateKey(buf[:n])
}

var pemBegin = []byte("-----BEGIN ")

// pemPrivateKey reports whether b holds a "-----BEGIN ...PRIVATE KEY-----"
// line, or OpenPGP's armored "-----BEGIN PGP PRIVATE KEY BLOCK-----"
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
	if w.keys.matchesEntry(canon, root.Path) {
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
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	if rel != "" {
		if dir, file := d.all.ExcludedBoth(rel); dir || file {
			return true
		}
	}
	if !d.abs.Empty() && canon != "/" {
		dir, file := d.abs.ExcludedBoth(canon[1:])
		return dir || file
	}
	return false
}

// ReadOnlyPaths returns the canonical absolute paths given to
// WithReadOnly (not the patterns, which ReadOnlyPatterns returns).
func (w *Workspace) ReadOnlyPaths() []string { return slices.Clone(w.roPaths) }

// ReadOnlyPatterns returns the patterns given to WithReadOnly.
func (w *Workspace) ReadOnlyPatterns() []string { return w.ro.patterns() }

// PrivateKeyPatterns returns the patterns given to WithDenyPrivateKeys.
func (w *Workspace) PrivateKeyPatterns() []string { return w.keys.patterns() }

// AgentConfigProtected returns the canonical absolute paths that
// WithProtectedAgentConfig protects (nil without it): each of
// AgentConfigPaths in the workspace root whether it exists or not, the
// in-policy target of an entry that is (or lies below) a symlink, ".git"
// when it is a file, and the hooks and config of the repository a
// gitfile points to when that lies in a policy root. Computed by New.
func (w *Workspace) AgentConfigProtected() []string { return slices.Clone(w.agent) }

// readOnlyAt reports whether a write to canon is refused by WithReadOnly
// or WithProtectedAgentConfig.
func (w *Workspace) readOnlyAt(canon string, root *wsRoot) bool {
	if canon == w.gitEntry || w.gitAny && filepath.Base(canon) == ".git" {
		return true
	}
	if slices.ContainsFunc(w.agent, func(p string) bool { return within(canon, p) }) ||
		slices.ContainsFunc(w.roPaths, func(p string) bool { return within(canon, p) }) {
		return true
	}
	return w.ro.denied(canon, root.Path) || w.agentNested(canon, root.Path)
}

// agentNested reports whether AgentConfigNestedPatterns match canon or a
// parent. Every pattern ends in a literal name, so the matcher is asked
// only when a component of canon below root is one of them (the write
// path's hot spot: BenchmarkCheckWriteAgentConfig).
func (w *Workspace) agentNested(canon, root string) bool {
	if w.agentPat.empty() {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(canon, root), "/")
	for rel != "" {
		name, rest, _ := strings.Cut(rel, "/")
		if w.agentNames[name] {
			return w.agentPat.denied(canon, root)
		}
		rel = rest
	}
	return false
}

// narrows reports whether the policy has anything beyond roots and deny
// patterns that a fast path would have to consult.
func (w *Workspace) narrows() bool {
	return !w.ro.empty() || len(w.roPaths) > 0 || len(w.agent) > 0 || w.gitEntry != "" || w.gitAny || !w.agentPat.empty() || !w.keys.empty()
}

// keyDeniedPath reports whether canon matches a private-key pattern and
// holds a key, examining it by path (O_NOFOLLOW: canon is canonical). A
// missing file holds nothing; a file that cannot be opened counts as a
// key (fail closed).
func (w *Workspace) keyDeniedPath(canon string, root *wsRoot) bool {
	return w.keys.matchesEntry(canon, root.Path) && PathHoldsPrivateKey(canon)
}

// PathHoldsPrivateKey is HoldsPrivateKey for the file at the canonical
// path canon, opened read-only with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY (a
// symlink, a FIFO or a terminal is never followed, waited on or made a
// controlling terminal). A missing file holds nothing (false); a file
// that cannot be opened counts as a key (true, fail closed). The answer
// is about the file at that moment: a caller that hands out data decides
// on the descriptor it reads instead (Workspace does).
func PathHoldsPrivateKey(canon string) bool {
	fd, err := unix.Open(canon, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err == unix.ENOENT {
		return false
	}
	if err != nil {
		return true
	}
	defer unix.Close(fd)
	return HoldsPrivateKey(fd)
}

// keyCheck fails with ErrDenied when t matches a private-key pattern and
// the existing file holds a key, examined through an fd opened beneath
// t's root (O_NOFOLLOW; a raced symlink fails the open and the operation
// is retried). A missing file is fine; any other open error counts as a
// key (fail closed).
func (w *Workspace) keyCheck(op, name string, t target) error {
	if !w.keys.matchesEntry(t.canon, t.root.Path) {
		return nil
	}
	return w.keyCheckRel(op, name, t.root, t.rel)
}

func (w *Workspace) keyCheckRel(op, name string, root *wsRoot, rel string) error {
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
	if err != nil || HoldsPrivateKey(fd) {
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
	if !d.abs.Empty() && canon != "/" {
		return d.abs.Match(strings.Split(strings.TrimPrefix(canon, "/"), "/"), false) == gitignore.Excluded
	}
	return false
}

// agentProtected computes AgentConfigProtected for the workspace root.
func (w *Workspace) agentProtected(root string) []string {
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	inPolicy := func(p string) bool { return w.rootOf(p) != nil }
	for _, rel := range AgentConfigPaths {
		p := filepath.Join(root, strings.TrimSuffix(rel, "/"))
		add(p)
		if t, err := filepath.EvalSymlinks(p); err == nil && t != p && inPolicy(t) {
			add(t)
		}
	}
	git := filepath.Join(root, ".git")
	fi, err := os.Lstat(git)
	if err != nil || fi.IsDir() {
		return out
	}
	add(git)
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
	return out
}

// gitDirs returns the repository directories a gitfile points to: the
// gitdir, and its commondir if it has one, symlinks resolved where they
// exist.
func gitDirs(gitfile string) []string {
	b, err := os.ReadFile(gitfile)
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
		dir = filepath.Join(filepath.Dir(gitfile), dir)
	}
	if t, err := filepath.EvalSymlinks(dir); err == nil {
		dir = t
	}
	out := []string{dir}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
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
