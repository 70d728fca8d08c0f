// Package sweep neutralises agent and tool configuration that a confined
// command created or changed in the workspace (jail.WithProtectedAgentConfig),
// after the command and every process it started are gone.
//
// Rules cannot stop every such file: a name that does not exist cannot be
// carved out of Landlock rules without freezing its parent directory, and
// a repository created during the run ("git init src/vendor", then
// core.fsmonitor set in src/vendor/.git/config) lives in a directory that
// did not exist when the rules were compiled. Git, direnv, editors and
// build tools run what these files name the next time the user works
// there, unconfined. So the caller takes a Snapshot of the protected
// entries before the command starts and calls Sweep once the command's
// whole process tree is dead: every protected entry that is new, or is not
// the file that was there (another inode, other content, other type), is
// renamed in its own directory to NAME.landjail-quarantined-TIME-RAND, a
// name no tool reads, and the original content of a replaced small file
// is written back; a file whose permission bits alone changed (chmod +x
// on a disabled hook) gets its bits back.
//
// Protected entries: those jail.Workspace.Narrowing reports as
// jail.NarrowAgentConfig (jail.AgentConfigPaths in the workspace root,
// jail.AgentConfigNestedPatterns at any depth), everything below a
// protected directory, and every entry named ".git" that is not a
// directory (a gitfile or a symlink selects another repository directory,
// and with it a config the command wrote).
//
// Every action goes through an openat.Root of the workspace root: no
// symlink is followed and nothing outside the workspace is touched. The
// walk that finds entries does not follow symlinks either.
//
// Sweep is race-free only when no process the command started is alive:
// landjail run kills the whole tree first (a PID namespace, or the
// subreaper's KillDescendants). A process still running could create an
// entry right after the walk passed it; landjail-mcp therefore sweeps
// after every bash call and once more after killing everything at exit.
//
// A directory laid out like a repository directory (git's
// is_git_directory: HEAD, and objects/ and refs/ or a commondir) is one:
// its HEAD, config, hooks, commondir and sequencer state are protected
// wherever it is, outside .git (red team N7: git found src/ before .git).
//
// Sweep does NOT cover: writable roots other than the workspace
// (--rw DIR), and a file the user created in the workspace while the
// command ran (it is quarantined like the command's, and named).
package sweep

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/charlievieth/fastwalk"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/dac"
	"github.com/landjail/landjail/internal/regfile"
	"github.com/landjail/landjail/internal/termsafe"
	"github.com/landjail/landjail/internal/threadcaps"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// ErrWalkLimit is returned (wrapped) when the workspace holds more
// entries than the walk's limit: the sweep did not look at everything.
var ErrWalkLimit = errors.New("sweep: walk limit reached")

// ErrUnlistable is returned (wrapped) by Sweep when a directory of the
// workspace that could be listed when the Snapshot was taken (or did not
// exist) cannot be listed any more: what is below it was not examined.
var ErrUnlistable = errors.New("sweep: a directory became unlistable during the run")

// DefaultWalkLimit is the number of entries a walk visits at most when
// Take is given 0: landlock.DefaultWalkLimit's number (10,000,000, seconds
// of walking), so a workspace that can be compiled can be swept.
const DefaultWalkLimit = 10_000_000

// Suffix is inserted between a quarantined entry's name and its time
// stamp: NAME.landjail-quarantined-20261127T030501Z-1a2b3c4d.
const Suffix = ".landjail-quarantined-"

// maxKeep is the size up to which a protected regular file's content is
// kept by Take, to be written back if the command replaces the file
// (64 KiB: a .git/config is well under 1 KiB); maxKeepTotal bounds all
// content kept (8 MiB). Larger files are compared by SHA-256 only (up to
// maxHash, 1 MiB); a larger one that changed ctime counts as changed.
const (
	maxKeep      = 64 << 10
	maxKeepTotal = 8 << 20
	maxHash      = 1 << 20
)

// Quarantined is one entry Sweep renamed out of the way.
type Quarantined struct {
	// Path is the entry's path relative to the workspace root, MovedTo
	// the name it has now (same directory).
	Path    string `json:"path"`
	MovedTo string `json:"moved_to,omitempty"`
	// Reason is "created" (no such entry before the command),
	// "replaced" (another file, or another type, than before) or
	// "changed" (other content), or "mode" (only the permission bits
	// changed: they were set back, nothing was moved), or "unlistable"
	// (a directory the command made unlistable, which hid what is below
	// it: the owner's rwx bits were added so that the sweep could look),
	// or "transient" (Watch saw it made, and it was gone before it could
	// be neutralised), or "removed" (a protected symbolic link the command
	// removed, put back with its target: nothing was moved), or "deleted"
	// (a protected regular file the command removed, put back with the
	// content and mode Take kept: files over 64 KiB are not kept).
	Reason string `json:"reason"`
	// Restored: the original content (or mode) was written back at Path.
	Restored bool `json:"restored,omitempty"`
	// Error is set when the entry could not be neutralised.
	Error string `json:"error,omitempty"`
	// Live: neutralised while the command ran (Snapshot.Watch), not
	// after it; already written out when it happened.
	Live bool `json:"live,omitempty"`
}

// MarshalJSON encodes q as its fields' json tags say, plus path_b64 and
// moved_to_b64 (standard base64 of the name's bytes) for a name that is
// not valid UTF-8: encoding/json writes such a name with U+FFFD, which
// names no file, and two names then look alike (red team round 26,
// R26c-9: a\xffb/.vscode and a\xfeb/.vscode both reported as
// "a\ufffdb/.vscode"). A script acting on a --report decodes the _b64
// form when it is there.
func (q Quarantined) MarshalJSON() ([]byte, error) {
	type plain Quarantined // no MarshalJSON: no recursion
	b64 := func(s string) string {
		if utf8.ValidString(s) {
			return ""
		}
		return base64.StdEncoding.EncodeToString([]byte(s))
	}
	return json.Marshal(struct {
		plain
		PathB64    string `json:"path_b64,omitempty"`
		MovedToB64 string `json:"moved_to_b64,omitempty"`
	}{plain(q), b64(q.Path), b64(q.MovedTo)})
}

// String renders q for a terminal or a model, one line.
func (q Quarantined) String() string {
	if q.Error != "" {
		return fmt.Sprintf("could NOT neutralise %s (%s by the command): %s", termsafe.Quote(q.Path), q.Reason, termsafe.Quote(q.Error))
	}
	if q.Reason == "mode" {
		if q.Live {
			return fmt.Sprintf("%s: permission bits changed by the command set back while it ran", termsafe.Quote(q.Path))
		}
		return fmt.Sprintf("%s: permission bits changed by the command set back", termsafe.Quote(q.Path))
	}
	if q.Reason == "transient" {
		return fmt.Sprintf("%s: agent configuration made while the command ran, and gone before landjail could neutralise it (it may have been read meanwhile)", termsafe.Quote(q.Path))
	}
	if q.Reason == "unlistable" {
		return fmt.Sprintf("%s: made unlistable by the command; listable for its owner again (u+rwx), and swept", termsafe.Quote(q.Path))
	}
	if q.Reason == "removed" {
		return fmt.Sprintf("%s: a protected symbolic link removed by the command, put back", termsafe.Quote(q.Path))
	}
	if q.Reason == "deleted" {
		return fmt.Sprintf("%s: a protected file removed by the command, put back with its content", termsafe.Quote(q.Path))
	}
	when := ""
	if q.Live {
		when = " while it ran"
	}
	s := fmt.Sprintf("quarantined %s -> %s (%s by the command%s; agent configuration would run outside the sandbox)", termsafe.Quote(q.Path), termsafe.Quote(q.MovedTo), q.Reason, when)
	if q.Restored {
		s += "; original content restored"
	}
	return s
}

// entry is what a Snapshot knows of one protected entry.
type entry struct {
	dev, ino uint64
	mode     uint32 // st_mode: type and permission bits
	uid, gid uint32
	size     int64
	ctime    unix.Timespec
	sum      [sha256.Size]byte
	hashed   bool
	content  []byte // kept for restoring, regular files up to maxKeep
	link     string // symlink target
}

// Snapshot is the protected entries of a workspace at one moment.
type Snapshot struct {
	// restores counts the restores of each protected file (mayRestore).
	restores map[string]int
	// creds, cred and asCommand: TakeAs (commandMayRead, act).
	creds     dac.Creds
	cred      *syscall.Credential
	asCommand bool
	ws        *jail.Workspace
	root      *openat.Root
	limit     int
	known     map[string]*entry // by path relative to the workspace root
	// mine are the entries Sweep renamed (new relative paths): inert
	// names, not examined again (what is moved out of one is, at its
	// new path).
	mine sync.Map
	mu   sync.Mutex // one Sweep at a time (known is updated)
	// names are the last components a protected entry can have
	// (candidates: Narrowing decides), paths the absolute protected
	// paths (jail.Workspace.AgentConfigProtected).
	names map[string]bool
	globs []string
	paths map[string]bool
	// pyTops are the worktree tops (relative, "." for the root) whose
	// repository runs Python from its top (pythonTops): a module or
	// package created directly in one is swept (createdOnly).
	pyTops      map[string]bool
	createdOnly sync.Map
	// refs are the absolute paths the nested repositories' git
	// configurations point git at (nestedRefs), protected with
	// everything below them.
	refs map[string]bool
	// unlistable are the directories Take could not list (nil before
	// Take's walk): they hide nothing the command made.
	unlistable map[string]bool
	// links are the workspace's symbolic links at Take, with their
	// targets: a new or changed one that leads to a directory outside
	// the workspace is swept (linkOutside).
	links map[string]string
	// walkLinks are the symbolic links the last walk met; hidden the
	// directories it could not list that Take could.
	walkLinks []string
	// walkGits are the entries named .git the last walk met (a
	// repository with no protected entry left is one too).
	walkGits []string
	hidden   []string
	now      func() time.Time
	// dirs are the workspace's directories at Take (relative, the root
	// not included): what Watch watches, and the repository
	// directories a live check trusts (live_linux.go).
	dirs       map[string]bool
	collecting bool
	// ancestors are the directories (relative) on the way to a protected
	// path or reference inside the workspace: a symbolic link the command
	// makes there stands in for the directory, and the protected path
	// below it would lead into a place no rule covers (red team round 8,
	// R8-2, R8-6: .config -> nd/.config, conf -> nd).
	ancestors map[string]bool
	// lived are the entries Watch neutralised while the command ran,
	// reported again by Sweep.
	lived []Quarantined
}

// Take records the protected entries of ws's workspace root as they are
// now. It returns nil, nil when ws does not protect agent configuration
// (then Sweep on the nil Snapshot does nothing). limit bounds the entries
// walked (0: DefaultWalkLimit); more fail with ErrWalkLimit. The
// Snapshot holds a directory fd of the root until Close.
func Take(ws *jail.Workspace, limit int) (*Snapshot, error) { return take(ws, limit, nil, false) }

// TakeAs is Take for a command that runs with cred (exec.Cmd.Credential;
// nil: this process's uid) and no capability: what repositories name
// is read only when the command could read it itself (commandMayRead).
// Errors: Take's, dac.Of's.
func TakeAs(ws *jail.Workspace, limit int, cred *syscall.Credential) (*Snapshot, error) {
	return take(ws, limit, cred, true)
}

func take(ws *jail.Workspace, limit int, cred *syscall.Credential, asCommand bool) (*Snapshot, error) {
	if len(ws.AgentConfigProtected()) == 0 {
		return nil, nil
	}
	if limit <= 0 {
		limit = DefaultWalkLimit
	}
	r, err := openat.OpenRoot(ws.Root())
	if err != nil {
		return nil, err
	}
	s := &Snapshot{ws: ws, root: r, limit: limit, known: map[string]*entry{}, now: time.Now,
		names: lastNames(), paths: map[string]bool{}, dirs: map[string]bool{}, collecting: true}
	if asCommand {
		s.cred = cred
		if s.creds, err = dac.Of(cred); err != nil {
			r.Close()
			return nil, err
		}
		s.asCommand = true
	}
	s.globs = lastGlobs(s.names)
	for _, p := range ws.AgentConfigProtected() {
		s.paths[p] = true
	}
	found, err := s.walk()
	if err != nil {
		r.Close()
		return nil, err
	}
	// Red team R1: a hook or driver that runs Python with -m or -c puts
	// the top of the worktree first on sys.path: a new pre_commit.py or
	// yaml.py there shadows what it imports. Such entries are swept when
	// created (pyTops).
	s.pyTops = s.pythonTops(found)
	// What the nested repositories' own configurations point git at
	// (red team F9, below the root: jail covers the root's repository):
	// protected like their config. Either way the walk runs again to
	// record what is there now.
	// Until nothing new: a reference that is a directory link's target
	// holds links of its own (sub/.git/hooks -> ../tools/hooks,
	// tools/hooks/commit-msg -> ../../tools2/pc.sh: red team round 15,
	// R15a-8, the script stayed writable and unswept); eight rounds at
	// most, each a walk.
	for round := 0; round < 8; round++ {
		refs := s.nestedRefs(found)
		if !refs && (round > 0 || len(s.pyTops) == 0) {
			break
		}
		s.unlistable = nil
		if found, err = s.walk(); err != nil {
			r.Close()
			return nil, err
		}
	}
	s.collecting = false // Take's walks alone collect s.dirs
	s.ancestors = map[string]bool{}
	for _, set := range []map[string]bool{s.paths, s.refs} {
		for p := range set {
			rel, ok := strings.CutPrefix(p, s.ws.Root()+"/")
			if !ok {
				continue
			}
			for d := filepath.Dir(rel); d != "." && d != "/"; d = filepath.Dir(d) {
				s.ancestors[d] = true
			}
		}
	}
	s.links = map[string]string{}
	for _, rel := range s.walkLinks {
		s.links[rel], _ = s.root.Readlink(rel)
	}
	kept := 0
	for _, rel := range found {
		e, err := s.stat(rel, kept < maxKeepTotal)
		if err != nil {
			continue // gone since the walk met it
		}
		kept += len(e.content)
		s.known[rel] = e
	}
	return s, nil
}

// Close releases the root's fd. Safe on a nil Snapshot.
func (s *Snapshot) Close() error {
	if s == nil {
		return nil
	}
	return s.root.Close()
}

// Len is the number of protected entries recorded (0 for nil).
func (s *Snapshot) Len() int {
	if s == nil {
		return 0
	}
	return len(s.known)
}

// Sweep walks the workspace again and neutralises every protected entry
// that is not as Take recorded it (see the package doc). Call it only
// once no process of the command is alive. It returns what it did, in
// path order; an entry it could not neutralise is listed with Error set
// and makes the returned error non-nil too. A nil Snapshot does nothing.
func (s *Snapshot) Sweep() ([]Quarantined, error) {
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	found, err := s.walk()
	// What Watch neutralised while the command ran comes first (the
	// command may have removed the quarantined copy since).
	out := s.lived
	s.lived = nil
	var errs []error
	for _, q := range out {
		if q.Error != "" {
			errs = append(errs, errors.New(q.Error))
		}
	}
	// Red team F6: a directory the command made unlistable (chmod 000)
	// hid what is below it from a caller without CAP_DAC_READ_SEARCH.
	// The caller owns it (same uid): it is made listable again for its
	// owner (u+rwx, named in the result) and the walk runs again, as
	// often as nested ones turn up.
	for range 16 {
		fixed := s.relist()
		if len(fixed) == 0 {
			break
		}
		out = append(out, fixed...)
		found, err = s.walk()
	}
	// After the directories made unlistable are listable again: a
	// repository below one is met only now (red team round 12, R12-2).
	if s.newRepositoryRefs() {
		found, err = s.walk()
	}
	// Whatever the walk could not examine (unlistable directories, the
	// walk limit, a path longer than PATH_MAX), what it saw is still
	// swept: a command must not be able to make the whole sweep give up.
	errs = append(errs, err)
	stamp := s.now().UTC().Format("20060102T150405Z")
	var moved []string // directories moved away: skip what was below them
	for _, rel := range found {
		if slicesHasParent(moved, rel) {
			continue
		}
		now, err := s.stat(rel, false)
		if err != nil {
			continue // removed (cannot happen once the command is dead)
		}
		q, ok, isDir := s.neutralise(rel, now, stamp)
		if !ok {
			continue
		}
		if q.Error != "" {
			errs = append(errs, errors.New(q.Error))
		}
		if isDir && q.MovedTo != "" {
			moved = append(moved, rel)
		}
		out = append(out, q)
	}
	// A new or changed symbolic link to a directory outside the
	// workspace (the command's private HOME or TMPDIR, kept between
	// runs) would take the user's `cd vendor; git status` into a
	// repository the walk above never saw (it follows no link).
	for _, rel := range s.walkLinks {
		if slicesHasParent(moved, rel) {
			continue
		}
		reason, ok := s.linkOutside(rel)
		if !ok {
			reason, ok = s.linkAncestor(rel)
		}
		if !ok {
			reason, ok = s.linkProtected(rel)
		}
		if !ok {
			continue
		}
		q, err := s.moveAway(rel, reason, stamp, s.quarantineLink)
		if err != nil {
			errs = append(errs, err)
		} else {
			delete(s.links, rel)
		}
		out = append(out, q)
	}
	// Protected links the command removed: put back with their targets
	// (red team round 16, R16-2: a removed link on the way to a hook
	// silenced it, and its target lost its protection for later runs),
	// after the links above are renamed away (a directory on the way
	// replaced by a link: R17a-7).
	var gone []string
	blocked := map[string]bool{}
	for rel, was := range s.known {
		// And protected files with their content kept (red team round
		// 20, R20b-6: a nested repository's pre-commit hook, or its
		// whole hooks directory, removed, and nothing said).
		isLink := was.mode&unix.S_IFMT == unix.S_IFLNK && was.link != ""
		isFile := was.mode&unix.S_IFMT == unix.S_IFREG && (was.content != nil || was.size == 0)
		if (isLink || isFile) && !slicesHasParent(moved, rel) {
			_, err := s.root.Lstat(rel)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				gone = append(gone, rel)
			case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ELOOP):
				// A file, a FIFO or a link took the place of a directory
				// on its way (mv hooks h2 && echo x > hooks): that entry
				// is renamed away and the link put back below a directory
				// made again (red team round 18, R18a-6: nothing was
				// said and the user's hook stopped running).
				if b := s.firstNonDir(rel); b != "" {
					blocked[b] = true
				}
				gone = append(gone, rel)
			}
		}
	}
	for _, b := range slices.Sorted(maps.Keys(blocked)) {
		q, err := s.moveAway(b, "replaced", stamp, s.quarantine)
		if err != nil {
			errs = append(errs, err)
		}
		out = append(out, q)
	}
	sort.Strings(gone)
	for _, rel := range gone {
		was := s.known[rel]
		q := Quarantined{Path: rel, Reason: "removed"}
		var rec *entry // what was put back, from its own handle
		put := func() (err error) { rec, err = s.putLink(rel, was); return err }
		if was.mode&unix.S_IFMT == unix.S_IFREG {
			q.Reason = "deleted"
			put = func() (err error) { rec, err = s.restoreRecord(rel, was); return err }
		}
		err := s.act(put)
		if errors.Is(err, fs.ErrNotExist) {
			// Its directory is gone too (moved away and replaced by a
			// link, which was quarantined above, or removed): made
			// again, with the mode it had, so the hook through the link
			// runs again (red team round 17, R17a-7: the user's
			// pre-commit hook silently stopped). MkdirAll below the root
			// follows no link.
			err = s.act(func() error { return s.root.MkdirAll(filepath.Dir(rel), s.dirMode(filepath.Dir(rel))) })
			if err == nil {
				err = s.act(put)
			}
		}
		if err != nil {
			q.Error = err.Error()
			errs = append(errs, err)
		} else {
			q.Restored = true
			if rec != nil {
				s.known[rel] = rec
			}
		}
		out = append(out, q)
	}
	return out, errors.Join(errs...)
}

// neutralise does to the protected entry rel, found as now, what its
// difference from Take's record calls for: nothing (ok false), its
// permission bits set back ("mode"), or a rename out of the way (the
// content of a replaced small file written back). isDir: the entry was
// a directory. s.mu is held.
func (s *Snapshot) neutralise(rel string, now *entry, stamp string) (q Quarantined, ok, isDir bool) {
	was := s.known[rel]
	if _, ok := s.createdOnly.Load(rel); ok && was != nil {
		return q, false, false // a module of the project's own, there before the command
	}
	reason := classify(was, now, func() (bool, [sha256.Size]byte) { return s.hash(rel) })
	if reason == "" {
		return q, false, false
	}
	if !s.commandCouldChange(rel) {
		// Another user's change, in a place the command cannot write:
		// not the command's doing, left alone (red team round 31,
		// R31d-7: a user's own edit of her .envrc was reverted).
		return q, false, false
	}
	q = Quarantined{Path: rel, Reason: reason}
	if reason == "mode" {
		if err := s.act(func() error { return s.root.Chmod(rel, fileMode(was.mode)) }); err != nil {
			q.Error = err.Error()
		} else {
			q.Restored = true
		}
		return q, true, false
	}
	var to string
	err := s.act(func() (err error) { to, err = s.quarantine(rel, stamp); return err })
	if err != nil {
		q.Error = err.Error()
		return q, true, false
	}
	q.MovedTo = to
	s.mine.Store(to, true)
	if now.mode&unix.S_IFMT == unix.S_IFREG && now.mode&0o111 != 0 {
		// A runner that executes every file of its directory
		// (pre-commit.d/) must not run it under its new name
		// (round 5, N6).
		s.act(func() error { return s.root.Chmod(to, fs.FileMode(now.mode&0o666)) })
	}
	if was != nil && was.mode&unix.S_IFMT == unix.S_IFLNK && was.link != "" {
		// A protected link re-pointed: the original is put back, or
		// what it led to would lose its protection and a hook through it
		// stop running (red team round 16, R16-2).
		var rec *entry
		if err := s.act(func() (err error) { rec, err = s.putLink(rel, was); return err }); err == nil {
			q.Restored = true
			if rec != nil {
				s.known[rel] = rec
			}
		}
	}
	if was != nil && was.content != nil && was.mode&unix.S_IFMT == unix.S_IFREG && s.mayRestore(rel) {
		var rec *entry
		if err := s.act(func() (err error) { rec, err = s.restoreRecord(rel, was); return err }); err == nil {
			q.Restored = true
			s.known[rel] = rec // the restored file is the one to keep
		}
	}
	return q, true, now.mode&unix.S_IFMT == unix.S_IFDIR
}

// moveAway renames rel out of the way with move (quarantine or
// quarantineLink) and returns its record, the error in it too.
func (s *Snapshot) moveAway(rel, reason, stamp string, move func(rel, stamp string) (string, error)) (Quarantined, error) {
	q := Quarantined{Path: rel, Reason: reason}
	var to string
	err := s.act(func() (err error) { to, err = move(rel, stamp); return err })
	if err != nil {
		q.Error = err.Error()
		return q, err
	}
	q.MovedTo = to
	s.mine.Store(to, true)
	return q, nil
}

// firstNonDir returns the first directory on the way to rel (below the
// root) that is not one now (a file, a FIFO, a symbolic link), or "".
func (s *Snapshot) firstNonDir(rel string) string {
	parts := strings.Split(filepath.Dir(rel), "/")
	for i := range parts {
		d := filepath.Join(parts[:i+1]...)
		if d == "." {
			return ""
		}
		fi, err := s.root.Lstat(d)
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return d
		}
	}
	return ""
}

// dirMode returns the permission bits the directory rel had when the
// snapshot was taken (0o755 when it was not recorded).
func (s *Snapshot) dirMode(rel string) fs.FileMode {
	if e, ok := s.known[rel]; ok && e.mode&unix.S_IFMT == unix.S_IFDIR {
		return fs.FileMode(e.mode & 0o777)
	}
	return 0o755
}

// relist adds the owner's read, write and search bits to each directory
// of the last walk's hidden that this process owns (no symbolic link
// followed: openat.Root), and returns one "unlistable" entry for each it
// changed.
func (s *Snapshot) relist() []Quarantined {
	var out []Quarantined
	for _, rel := range s.hidden {
		fi, err := s.root.Lstat(rel)
		if err != nil || !fi.IsDir() {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o700 == 0o700 {
			continue
		}
		if err := s.act(func() error { return s.root.Chmod(rel, fi.Mode().Perm()|0o700) }); err != nil {
			continue
		}
		out = append(out, Quarantined{Path: rel, Reason: "unlistable", Restored: true})
	}
	s.hidden = nil
	return out
}

// linkAncestor reports whether the symbolic link rel is new or changed
// since Take ("created" or "replaced") and stands where a directory on
// the way to a protected path or reference is (s.ancestors): wherever it
// leads, git or a shell would read the protected name through it, and
// neither the rules nor the walk (which follows no link) cover its
// target.
func (s *Snapshot) linkAncestor(rel string) (string, bool) {
	if !s.ancestors[rel] {
		return "", false
	}
	_, reason, ok := s.changedLink(rel)
	return reason, ok
}

// changedLink reads the symbolic link rel: its target and "created" (no
// such link at Take) or "replaced" (another target); ok false when it
// is as Take saw it or cannot be read.
func (s *Snapshot) changedLink(rel string) (target, reason string, ok bool) {
	target, err := s.root.Readlink(rel)
	if err != nil {
		return "", "", false
	}
	if was, known := s.links[rel]; known {
		if was == target {
			return "", "", false
		}
		return target, "replaced", true
	}
	return target, "created", true
}

// linkOutside reports whether the symbolic link rel is new or changed
// since Take ("created" or "replaced") and resolves to a directory
// outside the workspace root. Resolved by path with the command dead, as
// the user's shell would resolve it next.
func (s *Snapshot) linkOutside(rel string) (string, bool) {
	target, reason, ok := s.changedLink(rel)
	if !ok {
		return "", false
	}
	root := s.ws.Root()
	// Resolved as the command would (its permission checks, no
	// capability): as root, a link into a directory it cannot search
	// resolved or not, and whether it was kept told the command whether
	// a path existed there (red team round 32, R32b-9). One it cannot
	// resolve is judged as a dangling one, by its words.
	var dst string
	var isDir bool
	err := s.asCommandDo(func() error {
		var err error
		if dst, err = filepath.EvalSymlinks(filepath.Join(root, rel)); err != nil {
			return err
		}
		if fi, err := os.Stat(dst); err == nil && fi.IsDir() {
			isDir = true
		}
		return nil
	})
	if err != nil {
		// Dangling now: what it names may be made later, by a later
		// run in the same private HOME (red team N2). A new link whose
		// target, taken by its words, leaves the workspace goes too.
		abs := target
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(root, filepath.Dir(rel), target)
		}
		abs = filepath.Clean(abs)
		return reason, abs != root && !strings.HasPrefix(abs, root+"/")
	}
	if dst == root || strings.HasPrefix(dst, root+"/") {
		return "", false // inside: the walk sees what is there
	}
	if !isDir {
		return "", false
	}
	return reason, true
}

// asCommandDo runs fn with the command's permission checks and no
// capability (threadcaps.RunAs) when the Snapshot acts as the command,
// else on this thread.
func (s *Snapshot) asCommandDo(fn func() error) error {
	if !s.asCommand {
		return fn()
	}
	var err error
	if rerr := threadcaps.RunAs(s.cred, func() error { err = fn(); return nil }); rerr != nil {
		return rerr
	}
	return err
}

// linkProtected reports whether the symbolic link rel is new or changed
// since Take ("created" or "replaced") and leads to a protected entry of
// the workspace or below one (a hooks directory, a git configuration,
// .vscode/, a reference's target), where jail.ResolveLinks finds it:
// resolved, or where a write through it would create its target when it
// dangles (a link to .git/hooks/pre-commit not made yet). The link's own name is an ordinary one, so nothing
// protects it, and a later write by the user through it (`cp -p
// public/pre-commit web/dist/`, an editor saving web/gc.ini) lands in
// the protected place (red team round 26, R26c-7: web/dist ->
// ../.git/hooks and web/gc.ini -> ../.git/config were kept while a link
// out of the workspace was renamed away).
func (s *Snapshot) linkProtected(rel string) (string, bool) {
	_, reason, ok := s.changedLink(rel)
	if !ok {
		return "", false
	}
	root := s.ws.Root()
	// Where the link leads, or where a write through it would create
	// its target: jail.ResolveLinks (".." after a link taken
	// physically, as the kernel does; a dangling rest appended).
	dst := jail.ResolveLinks(filepath.Join(root, rel))
	if dst == "" || dst == root || !strings.HasPrefix(dst, root+"/") {
		return "", false // the root, or outside: linkOutside's
	}
	if s.ws.Narrowing(dst)&(jail.NarrowAgentConfig|jail.NarrowReadOnly) != 0 {
		return reason, true
	}
	for _, set := range []map[string]bool{s.paths, s.refs} {
		for p := range set {
			if dst == p || strings.HasPrefix(dst, p+"/") {
				return reason, true
			}
		}
	}
	return "", false
}

// Finish is Sweep, with one line per entry and the error, if any,
// written to w ("landjail: ..."). A nil Snapshot does nothing. Callers
// decide what an error means for the run; landjail run makes a command
// that exited 0 fail (the workspace may hold what the sweep could not
// neutralise).
func Finish(s *Snapshot, w io.Writer) ([]Quarantined, error) {
	q, err := s.Sweep()
	for _, e := range q {
		if !e.Live { // written when it happened
			fmt.Fprintf(w, "landjail: %s\n", e)
		}
	}
	if err != nil {
		fmt.Fprintf(w, "landjail: sweeping agent configuration: %s\n", termsafe.Quote(err.Error()))
	}
	return q, err
}

// AfterEach wraps next, a per-call hook of the shape of tools.Toolkit's
// Network (nil for none), so that the finish of every call also sweeps
// s (once the call's process is reaped) and returns its lines, which
// the bash tool shows to the model; they are also written to w. With a
// nil s it returns next unchanged. Generic so that this package needs
// neither tools nor exec.
func AfterEach[R, C any](s *Snapshot, w io.Writer, next func(R, C) (func() error, func() []string, error)) func(R, C) (func() error, func() []string, error) {
	if s == nil {
		return next
	}
	return func(r R, c C) (func() error, func() []string, error) {
		started, finish := func() error { return nil }, func() []string { return nil }
		if next != nil {
			s, f, err := next(r, c)
			if err != nil {
				return nil, nil, err
			}
			started, finish = s, f
		}
		return started, func() []string {
			lines := finish()
			q, err := Finish(s, w)
			for _, e := range q {
				lines = append(lines, e.String())
			}
			if err != nil {
				lines = append(lines, "sweeping agent configuration failed: "+err.Error())
			}
			return lines
		}, nil
	}
}

// classify says why now is not the entry was ("" when it is): created,
// replaced, changed or mode. hash is called only when the content must
// be compared.
func classify(was, now *entry, hash func() (bool, [sha256.Size]byte)) string {
	switch {
	case was == nil:
		return "created"
	case was.dev != now.dev || was.ino != now.ino || was.mode&unix.S_IFMT != now.mode&unix.S_IFMT:
		return "replaced"
	}
	switch now.mode & unix.S_IFMT {
	case unix.S_IFLNK:
		if was.link != now.link {
			return "changed"
		}
	case unix.S_IFREG:
		if was.size != now.size {
			return "changed"
		}
		if was.ctime != now.ctime {
			ok, sum := hash()
			if !ok || !was.hashed || sum != was.sum {
				return "changed"
			}
		}
	}
	if was.mode != now.mode {
		return "mode"
	}
	return ""
}

// lastNames returns the last component of every pattern and path that
// jail.WithProtectedAgentConfig protects by name.
func lastNames() map[string]bool {
	out := map[string]bool{}
	for _, l := range [][]string{jail.AgentConfigPaths, jail.AgentConfigPatterns, jail.AgentConfigNestedPatterns} {
		for _, p := range l {
			out[filepath.Base(strings.TrimSuffix(p, "/"))] = true
		}
	}
	return out
}

// lastGlobs are the last components of lastNames that are patterns
// ("mise.*.toml"): an entry's name is matched against each.
func lastGlobs(names map[string]bool) []string {
	var out []string
	for n := range names {
		if strings.ContainsAny(n, "*?[") {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// globName reports whether name matches one of globs.
func globName(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := filepath.Match(g, name); ok {
			return true
		}
	}
	return false
}

// SweepLimitFactor is how many times the walk limit the sweeps after a
// command walk (Sweep, AfterEach's): the command made what is there, and
// past the limit what it made unseen stays (a nested repository with
// core.fsmonitor among 10 million hard links: red team round 23,
// R23a-10), so the sweep goes on ten times as far as Take's walk, which
// bounds the planning of a run, and fails (ErrWalkLimit) only past that.
const SweepLimitFactor = 10

// sweepLimit is the entries walk may meet: the limit for Take's walks,
// SweepLimitFactor times it for the sweeps after the command.
func (s *Snapshot) sweepLimit() int {
	if s.collecting {
		return s.limit
	}
	return s.limit * SweepLimitFactor
}

// walk returns the protected entries below the root, relative, sorted
// (a directory before what is below it).
func (s *Snapshot) walk() ([]string, error) {
	root := s.ws.Root()
	var (
		mu      sync.Mutex
		out     []string
		denied  []string // directories that could not be listed
		broken  []string // entries that could not be examined, with why
		links   []string // symbolic links met
		gits    []string // entries named .git met
		seen    atomic.Int64
		inside  sync.Map // protected directories: everything below is protected
		gitDirs sync.Map // looksGitDir's answers by directory
		limit   = s.sweepLimit()
		limitFn = func() error {
			return fmt.Errorf("%w: more than %d entries below %s; agent configuration created there may not have been found (raise --walk-limit N)", ErrWalkLimit, limit, root)
		}
	)
	conf := fastwalk.Config{Follow: false}
	err := fastwalk.Walk(&conf, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root || errors.Is(err, ErrWalkLimit) {
				return err
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			// Unlistable (EACCES) or unexaminable (ENAMETOOLONG past
			// PATH_MAX, ELOOP, EIO): noted, and the walk goes on, so
			// that one odd directory cannot make the sweep give up.
			mu.Lock()
			if errors.Is(err, fs.ErrPermission) {
				denied = append(denied, p[len(root)+1:])
			} else {
				broken = append(broken, fmt.Sprintf("%s: %v", termsafe.Quote(p[len(root)+1:]), err))
			}
			mu.Unlock()
			return nil
		}
		if p == root {
			return nil
		}
		if seen.Add(1) > int64(limit) {
			return limitFn()
		}
		rel := p[len(root)+1:]
		// Every symbolic link is looked at, a quarantined name too: a
		// later call can replace .claude.landjail-quarantined-X with a
		// link to a repository in the private HOME (red team R3); the
		// links Sweep quarantined are known (s.links) and left alone.
		if d.Type()&fs.ModeSymlink != 0 {
			mu.Lock()
			links = append(links, rel)
			mu.Unlock()
		}
		if d.Name() == ".git" {
			mu.Lock()
			gits = append(gits, rel)
			mu.Unlock()
		}
		if _, ok := s.mine.Load(rel); ok {
			// Renamed away by an earlier sweep: inert itself, but what
			// a later command puts inside it is examined like anything
			// else (red team N9: a repository planted in a quarantined
			// .claude, and a link to it, went unseen in landjail-mcp).
			return nil
		}
		if d.IsDir() && s.collecting {
			mu.Lock()
			s.dirs[rel] = true
			mu.Unlock()
		}
		_, below := inside.Load(filepath.Dir(p))
		protected := below || s.protectedEntry(p, rel, d.Name(), d.IsDir(), d.Type()&fs.ModeSymlink != 0, &gitDirs)
		if !protected {
			return nil
		}
		if d.IsDir() {
			inside.Store(p, true)
		}
		mu.Lock()
		out = append(out, rel)
		mu.Unlock()
		return nil
	})
	sort.Strings(out)
	sort.Strings(links)
	s.walkLinks = links
	s.walkGits = gits
	if err != nil {
		return out, err // what was found is still swept (ErrWalkLimit)
	}
	if len(broken) > 0 {
		sort.Strings(broken)
		err = fmt.Errorf("%w: %s (and %d more) could not be examined; agent configuration below it was not", ErrUnlistable, broken[0], len(broken)-1)
	}
	// A directory that cannot be listed hides what is below it. One
	// that could be listed at Take (or is new) was made so during the
	// run (chmod 000 by the command): the sweep is incomplete.
	var hidden []string
	for _, d := range denied {
		if s.unlistable == nil {
			continue
		}
		if !s.unlistable[d] {
			hidden = append(hidden, d)
		}
	}
	if s.unlistable == nil {
		s.unlistable = map[string]bool{}
		for _, d := range denied {
			s.unlistable[d] = true
		}
	}
	s.hidden = hidden
	if len(hidden) > 0 {
		sort.Strings(hidden)
		err = errors.Join(err, fmt.Errorf("%w: %s (and %d more) cannot be listed and could be at the start; agent configuration below it was not examined", ErrUnlistable, termsafe.Quote(hidden[0]), len(hidden)-1))
	}
	return out, err
}

// protectedEntry reports whether the entry rel (p absolute, name its
// last component) is protected by itself, whatever its parent: named
// like a protected path or pattern (Narrowing decides), a reference of a
// nested repository's configuration, a gitfile, an entry of a directory
// laid out like a repository directory, or a module shadowing an import
// at a Python top (recorded in createdOnly). Only an entry named like
// the last component of a protected pattern or path can match one (they
// all end in a literal name): the matcher is asked about those alone,
// which is what keeps a 100,000-entry walk cheap (BENCHMARKS.md).
func (s *Snapshot) protectedEntry(p, rel, name string, dir, link bool, gitDirs *sync.Map) bool {
	if s.refs[p] {
		return true
	}
	if s.names[name] || s.paths[p] || globName(s.globs, name) {
		var n jail.Narrowing
		if filepath.Dir(p) == s.ws.Root() {
			n = s.ws.Narrowing(p)
		} else {
			n = s.ws.EntryNarrowing(p)
		}
		if n&jail.NarrowAgentConfig != 0 {
			return true
		}
	}
	if name == ".git" && !dir {
		return true
	}
	// Red team N7: any directory that git takes for a repository
	// directory (a bare-repository layout: HEAD, objects/, refs/, or
	// HEAD and commondir) is one git uses on the user's next `git
	// status` there, before the .git above it: its config, hooks and
	// HEAD are protected like .git's. Directories below a .git are
	// git's own (submodules, worktrees: AgentConfigPatterns).
	if gitDirNames[name] && !underDotGit(rel) && s.looksGitDir(filepath.Dir(rel), gitDirs) {
		return true
	}
	if len(s.pyTops) > 0 && pyShadow(rel, name, link, s.pyTops) {
		s.createdOnly.Store(rel, true)
		return true
	}
	return false
}

// nestedRefs adds to s.refs what the configuration files of the
// repositories nested in the workspace (found: the walk's protected
// entries) point git at inside the workspace, neither the root nor
// above it (jail.GitConfigReferences), and reports whether it added any.
// The repository at the root is jail's (jail.WithProtectedAgentConfig).
func (s *Snapshot) nestedRefs(found []string) bool {
	root := s.ws.Root()
	home := jail.HomeDir()
	added := false
	for _, rel := range found {
		// A protected entry that is a link into the workspace (a hook
		// -> ../../scripts/pre-commit in a nested repository) runs its
		// target: protected too (round 5, N8; jail covers the root's).
		if fi, err := s.root.Lstat(rel); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// A dangling one too: where its target would be made (round 9, R9-1).
			if t := jail.ResolveLinks(filepath.Join(root, rel)); t != "" && strings.HasPrefix(t, root+"/") && !s.refs[t] {
				if s.refs == nil {
					s.refs = map[string]bool{}
				}
				s.refs[t] = true
				added = true
			}
		}
		base := filepath.Base(rel)
		if base != "config" && base != "config.worktree" {
			continue
		}
		dir := filepath.Dir(rel)
		switch {
		case dir == ".git" || strings.HasPrefix(dir, ".git/"):
			continue // the root's repository, its submodules and worktrees: jail's
		case filepath.Base(dir) == ".git", s.looksGitDir(dir, &sync.Map{}):
		default:
			continue
		}
		if fi, err := s.root.Lstat(rel); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		// Where git runs this repository's commands: SUB for SUB/.git, a
		// submodule's core.worktree, a linked worktree's directory (red
		// team round 6, R6-1: a submodule's relative core.hooksPath was
		// taken from .git/modules). The global files too: their relative
		// core.hooksPath or driver script names a path in every
		// repository (round 5, N2); and a linked worktree's common
		// configuration.
		gd := filepath.Join(root, dir)
		top := jail.GitWorktreeOf(gd)
		if top == "" {
			continue
		}
		files := append([]string{filepath.Join(root, rel)}, jail.GitDirConfigFiles(gd)...)
		files = append(files, jail.GitGlobalConfigFiles()...)
		for _, p := range jail.GitConfigReferences(files, top, home) {
			added = s.addRef(p) || added
		}
	}
	return added
}

// newRepositoryRefs gives the repositories the command made (their .git
// met by Sweep's walk, not known at Take) what Take gave those that existed:
// the user's global configuration's references taken from their own top
// (a relative core.hooksPath = .hooks names SUB/.hooks in every
// repository) and, when one of their hooks runs Python from the top, the
// modules there (pyTops). It reports whether it added any; s.mu is held
// (red team round 11, R11a-9: git init lib/nd, then lib/nd/.hooks/pre-commit
// ran on the user's next commit there after the run).
func (s *Snapshot) newRepositoryRefs() bool {
	root := s.ws.Root()
	home := jail.HomeDir()
	global := jail.GitGlobalConfigFiles()
	added := false
	tops := map[string]bool{}
	for _, rel := range s.walkGits {
		top := filepath.Dir(rel)
		if top == "." || tops[top] {
			continue // the root's repository: jail's
		}
		tops[top] = true
		for _, p := range jail.GitConfigReferences(global, filepath.Join(root, top), home) {
			added = s.addRef(p) || added
		}
	}
	if len(tops) > 0 {
		for t := range s.pythonTops(s.walkGits) {
			if !s.pyTops[t] {
				if s.pyTops == nil {
					s.pyTops = map[string]bool{}
				}
				s.pyTops[t] = true
				added = true
			}
		}
	}
	return added
}

// addRef adds the reference p to s.refs when it lies inside the
// workspace, not above it (the root itself: the hook names in it), and
// reports whether one was new.
func (s *Snapshot) addRef(p string) bool {
	root := s.ws.Root()
	if p == root {
		// A nested repository's core.hooksPath = .. (or
		// init.templateDir) naming the workspace root: the root stays
		// writable, the hooks git runs from it are protected by name
		// (red team round 27, R27d-4), as jail does for the root
		// repository's (R26a-9).
		added := false
		for _, n := range jail.GitHookNames() {
			added = s.addRef(filepath.Join(root, n)) || added
		}
		return added
	}
	if !strings.HasPrefix(p, root+"/") || s.refs[p] {
		return false
	}
	if s.refs == nil {
		s.refs = map[string]bool{}
	}
	s.refs[p] = true
	return true
}

// pyShadow reports whether rel (base name name) is a Python module or a
// package's __init__ directly in one of tops: what `python -m` run there
// imports before the installed packages.
func pyShadow(rel, name string, link bool, tops map[string]bool) bool {
	dir := filepath.Dir(rel)
	if link && tops[dir] {
		return true // pre_commit -> tools/pc: a package by another path (red team S3)
	}
	switch {
	case strings.HasSuffix(name, ".py") || strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".so"):
		if tops[dir] {
			return true
		}
		return (name == "__init__.py" || name == "__init__.pyc" || strings.HasPrefix(name, "__init__.")) && tops[filepath.Dir(dir)]
	}
	return false
}

// runsPythonFromTop matches a command that runs Python with -m or -c
// (the working directory, the worktree's top for git hooks and drivers,
// goes first on sys.path); -I or -P would not, but a hook's flags are not
// parsed: over-matching only sweeps more new modules. Compiled at first
// use, not at every landjail start (issue 25).
var runsPythonFromTop = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)python[0-9.]*["']?[^\n]*?\s-([A-Za-z]*[mc]|\s|$)|-m\s*pre_commit|PRE_COMMIT`)
})

// pythonTops returns the worktree tops (relative to the root, "." for
// it) of the repositories in the workspace (the root's, and those below
// it that the walk found: a .git directory's config or a gitfile) whose
// hooks, configuration, global configuration, .pre-commit-config.yaml,
// .husky or .githooks scripts, or whatever their configuration points
// git at (core.hooksPath, drivers: jail.GitConfigReferences) run Python
// with -m or -c. A gitfile's git directory (a linked worktree, a
// submodule) and its commondir are read where they are (red team S1);
// so is a global hooks directory (S5).
func (s *Snapshot) pythonTops(found []string) map[string]bool {
	home := jail.HomeDir()
	root := s.ws.Root()
	global := jail.GitGlobalConfigFiles()
	tops := map[string]bool{}
	check := func(top string) {
		if tops[top] {
			return
		}
		abs := filepath.Join(root, top)
		files := append([]string(nil), global...)
		var dirs []string
		for _, g := range jail.GitDirs(filepath.Join(abs, ".git")) {
			files = append(files, filepath.Join(g, "config"), filepath.Join(g, "config.worktree"))
			dirs = append(dirs, filepath.Join(g, "hooks"))
		}
		configs := append([]string(nil), files...)
		files = append(files, filepath.Join(abs, ".pre-commit-config.yaml"))
		dirs = append(dirs, filepath.Join(abs, ".husky"), filepath.Join(abs, ".githooks"))
		// What the configuration names (commandMayRead: only what the
		// command could read itself); the hooks directories above are
		// the repository's own or the user's.
		named := map[string]bool{}
		for _, r := range jail.GitConfigReferences(configs, abs, home) {
			if !s.commandMayRead(r) {
				continue
			}
			named[r] = true
			if fi, err := os.Stat(r); err == nil && fi.IsDir() {
				dirs = append(dirs, r)
			} else {
				files = append(files, r)
			}
		}
		for _, d := range dirs {
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range ents {
				f := filepath.Join(d, e.Name())
				if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), ".sample") && (!named[d] || s.commandMayRead(f)) {
					files = append(files, f)
				}
			}
		}
		for _, f := range files {
			if b, err := readSmall(f); err == nil && runsPythonFromTop().Match(b) {
				tops[top] = true
				return
			}
		}
	}
	if _, err := s.root.Lstat(".git"); err == nil {
		check(".")
	}
	for _, rel := range found {
		switch {
		case filepath.Base(rel) == "config" && filepath.Base(filepath.Dir(rel)) == ".git":
			check(filepath.Dir(filepath.Dir(rel)))
		case filepath.Base(rel) == ".git": // a gitfile (a .git directory is not protected itself)
			check(filepath.Dir(rel))
		}
	}
	return tops
}

// readSmall reads a regular file of at most maxHash bytes; anything
// else (a FIFO, a device) is never opened (regfile.Open: the names come
// from configuration the command may have written, red team round 31,
// R31c-5: an include.path naming a host FIFO released and killed its
// writer).
func readSmall(name string) ([]byte, error) {
	f, err := regfile.Open(name, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxHash))
}

// maxRestores bounds how often one Snapshot writes a protected file's
// content back: a restore the record does not match (or a command that
// replaces the file as fast as it is restored) would otherwise make the
// watch quarantine and restore it for ever, a quarantined copy each time
// (2 million in minutes, once). Past it the file stays moved away, not
// restored.
const maxRestores = 64

// mayRestore counts a restore of rel and reports whether it is within
// maxRestores. s.mu is held.
func (s *Snapshot) mayRestore(rel string) bool {
	if s.restores == nil {
		s.restores = map[string]int{}
	}
	s.restores[rel]++
	return s.restores[rel] <= maxRestores
}

// commandCouldChange reports whether the command could have made or
// changed the entry rel: it may write and search the directory holding
// it, or write the entry itself (mode bits and ACLs for its
// credentials), or it owns either (and so may change their mode).
// Always true for a Snapshot of Take.
func (s *Snapshot) commandCouldChange(rel string) bool {
	if !s.asCommand {
		return true
	}
	abs := filepath.Join(s.ws.Root(), rel)
	if ok, err := s.creds.MayPath(filepath.Dir(abs), dac.Write|dac.Exec); err == nil && ok {
		return true
	}
	if ok, err := s.creds.MayPath(abs, dac.Write); err == nil && ok {
		return true
	}
	// Its owner may give itself any mode: a command that planted a name
	// and then made the directory or the file read-only (chmod 0500)
	// still did it (quarantine chmods the directory back).
	for _, p := range []string{filepath.Dir(abs), abs} {
		var st unix.Stat_t
		if unix.Lstat(p, &st) == nil && st.Uid == s.creds.UID {
			return true
		}
	}
	return false
}

// act runs fn, a change the sweep makes in the workspace (a rename out
// of the way, a chmod, a restored file or link), for a Snapshot of
// TakeAs with the command's permission checks and CAP_CHOWN alone
// (threadcaps.RunAsKeeping: a restored file gets its owner back), and
// returns fn's error. What the sweep undoes the command did, so its
// credentials suffice; with landjail's own, a command that exchanged one
// of its directories with another user's between the sweep's look and
// its rename made landjail rename that user's 0600 file, chmod it 0666
// and delete another of hers (red team round 31, R31a-7 HIGH, R31a-8
// MEDIUM); now the kernel refuses what the command could not have done.
// Should the thread fail to take them, nothing is done (fail closed).
func (s *Snapshot) act(fn func() error) error {
	if !s.asCommand {
		return fn()
	}
	var err error
	if rerr := threadcaps.RunAsKeeping(s.cred, []int{unix.CAP_CHOWN}, func() error { err = fn(); return nil }); rerr != nil {
		return rerr
	}
	return err
}

// commandMayRead reports whether the command could read p itself (a
// directory: list it): the policy allows it (jail.Workspace.Check: its
// roots, deny patterns and private keys, as Landlock and the view's
// masks do) and so do the mode bits and ACL for its credentials, with
// no capability (package dac, on the file opened O_PATH). A Snapshot of
// Take (no command given) answers yes. The files a repository's
// configuration names are chosen by the command when it wrote that
// configuration (a nested repository it made): read as root, whether
// one of the user's private files ran Python decided which of the
// command's modules were quarantined, and the bash tool's result said
// so (red team round 31, R31c-5: a one-bit oracle on root's 0700
// files); what the command cannot read counts as running no Python.
func (s *Snapshot) commandMayRead(p string) bool {
	if !s.asCommand {
		return true
	}
	if _, err := s.ws.Check(p, jail.Read); err != nil {
		return false
	}
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	want := uint32(dac.Read)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		want |= dac.Exec
	}
	ok, err := s.creds.MayFd(fd, want)
	return ok && err == nil
}

// gitDirNames are the entries of a repository directory that make git
// run code or read configuration from elsewhere (config, config.worktree,
// hooks, commondir, the sequencer's todo lists), and HEAD, without which
// git does not take the directory for a repository at all: a HEAD the
// command created in a directory laid out like a repository is renamed
// away, and git no longer stops there.
var gitDirNames = map[string]bool{
	"HEAD": true, "config": true, "config.worktree": true, "commondir": true, "hooks": true,
	"rebase-merge": true, "rebase-apply": true, "sequencer": true,
}

// underDotGit reports whether rel has a directory named ".git" among
// its components (not counting its last).
func underDotGit(rel string) bool {
	dir := filepath.Dir(rel)
	return dir == ".git" || strings.HasPrefix(dir, ".git/") || strings.HasSuffix(dir, "/.git") || strings.Contains(dir, "/.git/")
}

// looksGitDir reports whether the directory dir (relative to the root,
// "." for the root) is one git's repository discovery accepts as a git
// directory (setup.c is_git_directory: a HEAD, and objects/ and refs/ or
// a commondir naming where they are). Presence is enough, whatever the
// entries hold or point to: a dangling link can be made to resolve by a
// later run. cache holds the answers of one walk.
func (s *Snapshot) looksGitDir(dir string, cache *sync.Map) bool {
	if v, ok := cache.Load(dir); ok {
		return v.(bool)
	}
	has := func(name string) bool {
		_, err := s.root.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	ok := false
	if fi, err := s.root.Lstat(filepath.Join(dir, "HEAD")); err == nil && (fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0) {
		ok = has("commondir") || has("objects") && has("refs")
	}
	cache.Store(dir, ok)
	return ok
}

// stat records the entry at rel (no symlink followed); keep also keeps
// a small regular file's content.
func (s *Snapshot) stat(rel string, keep bool) (*entry, error) {
	fi, err := s.root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, errors.New("sweep: no Stat_t (cannot happen on Linux)")
	}
	e := &entry{dev: st.Dev, ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, ctime: unix.Timespec(st.Ctim)}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		e.link, _ = s.root.Readlink(rel)
	case unix.S_IFREG:
		if st.Size <= maxHash {
			if b, err := s.read(rel); err == nil {
				e.sum, e.hashed = sha256.Sum256(b), true
				if keep && len(b) <= maxKeep {
					e.content = b
				}
			}
		}
	}
	return e, nil
}

// hash returns the SHA-256 of the regular file at rel (false when it
// cannot be read or is larger than maxHash).
func (s *Snapshot) hash(rel string) (bool, [sha256.Size]byte) {
	b, err := s.read(rel)
	if err != nil {
		return false, [sha256.Size]byte{}
	}
	return true, sha256.Sum256(b)
}

func (s *Snapshot) read(rel string) ([]byte, error) {
	f, err := s.root.OpenFile(rel, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Only a regular file is read: a FIFO the command swapped in, whose
	// write end it holds, made Go's poller wait for data with the
	// watch's lock held, and nothing was neutralised live for the rest
	// of the run (red team round 32, R32b-8).
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: errors.New("not a regular file")}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxHash+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxHash {
		return nil, errors.New("larger than the hash limit")
	}
	return b, nil
}

// quarantine renames rel within its directory to a name no tool reads,
// returning the new relative path. The name carries a random part, so a
// command cannot plant an entry there in advance; a taken name is tried
// again with another.
func (s *Snapshot) quarantine(rel, stamp string) (string, error) {
	var err error
	for range 8 {
		var rnd [4]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", err
		}
		to := rel + Suffix + stamp + "-" + hex.EncodeToString(rnd[:])
		if _, lerr := s.root.Lstat(to); lerr == nil {
			continue
		}
		if err = s.root.Rename(rel, to); err == nil {
			return to, nil
		}
		if errors.Is(err, unix.EACCES) {
			// The command made the directory read-only (chmod a-w):
			// the owner may write it again.
			dir := filepath.Dir(rel)
			if fi, lerr := s.root.Lstat(dir); lerr == nil && fi.IsDir() {
				if s.root.Chmod(dir, fi.Mode().Perm()|0o300) == nil {
					if err = s.root.Rename(rel, to); err == nil {
						return to, nil
					}
				}
			}
		}
	}
	return "", err
}

// quarantineLink replaces the symbolic link rel by a regular file under
// a quarantine name that records where it pointed: a renamed link would
// still lead a user who enters it (a git-aware prompt on cd) into the
// repository outside (red team S7). The file is written first (O_EXCL,
// 0600), then the link is removed; if the removal fails, the file goes.
func (s *Snapshot) quarantineLink(rel, stamp string) (string, error) {
	target, err := s.root.Readlink(rel)
	if err != nil {
		return "", err
	}
	for range 8 {
		var rnd [4]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", err
		}
		to := rel + Suffix + stamp + "-" + hex.EncodeToString(rnd[:])
		f, err := s.root.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, werr := fmt.Fprintf(f, "landjail quarantined a symbolic link here: %s -> %s\n", rel, target)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = s.root.Remove(rel)
		}
		if werr != nil {
			s.root.Remove(to)
			return "", werr
		}
		return to, nil
	}
	return "", fmt.Errorf("sweep: no free quarantine name for %s", termsafe.Quote(rel))
}

// restoreRecord writes was's content back at rel, which must not exist
// (EEXIST otherwise), with its permission bits, and its owner and group
// where this process may give them (as root: a user's .git/config
// restored as root's was no longer theirs to write, and git refuses a
// repository whose files another user owns; red team round 25, R25b-5's
// kin).
//
// The file is made nameless (O_TMPFILE in rel's directory, opened beneath
// the root with no symbolic link) and gets its name last, complete:
// without the access ACL it inherited from a default ACL of the
// directory, with its mode, content and owner. Created by name, it was
// the command's for a moment (the sweep acts as the command): the
// command opened it then, kept the descriptor and read another user's
// content once written (red team round 32, R32b-1); and a default ACL
// the command had set on its directory gave its uid a named entry on
// her restored file (R32b-2). The link needs CAP_FOWNER on a file
// another user owns (protected_hardlinks): restoreLink keeps it for that
// call alone.
//
// It returns the record of the file it wrote, made from its own
// descriptor (fstat after the link) and the content it wrote: never from
// the name a moment later, where the command may have renamed its own
// file over the restored one (red team round 32, R32b-7: its hook became
// the record, and survived the run).
func (s *Snapshot) restoreRecord(rel string, was *entry) (*entry, error) {
	dir, name := filepath.Dir(rel), filepath.Base(rel)
	dfd, err := s.root.OpenFd(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, ".", unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open O_TMPFILE", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	if err := unix.Fremovexattr(fd, "system.posix_acl_access"); err != nil && err != unix.ENODATA && err != unix.EOPNOTSUPP {
		return nil, &fs.PathError{Op: "fremovexattr", Path: rel, Err: err}
	}
	// The exact mode (the umask, the special bits) while the file is
	// still this thread's, then the owner: after the chown, a chmod
	// needs CAP_FOWNER, which the sweep's thread does not hold (act); a
	// chmod by name that failed there left the restored file different
	// from the record, and the watch quarantined and restored it again,
	// millions of times.
	if err := f.Chmod(fileMode(was.mode)); err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, bytes.NewReader(was.content)); err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && (st.Uid != was.uid || st.Gid != was.gid) {
		f.Chown(int(was.uid), int(was.gid)) // where this thread may give them (CAP_CHOWN)
	}
	if err := s.restoreLink(fd, dfd, name, rel); err != nil {
		return nil, err
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &entry{dev: st.Dev, ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, ctime: unix.Timespec(st.Ctim),
		sum: sha256.Sum256(was.content), hashed: true, content: was.content}, nil
}

// putLink makes the symbolic link rel -> was.link again and returns its
// record from a descriptor of it (O_PATH|O_NOFOLLOW beneath the root),
// checked to be a link to was.link: nil (the record is left as it was,
// so the next look neutralises again) when what is there is not the link
// made, as when the command renamed something over it meanwhile (red
// team round 32, R32b-7).
func (s *Snapshot) putLink(rel string, was *entry) (*entry, error) {
	if err := s.root.Symlink(was.link, rel); err != nil {
		return nil, err
	}
	fd, err := s.root.OpenFd(rel, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
		return nil, nil
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil || string(buf[:n]) != was.link {
		return nil, nil
	}
	return &entry{dev: st.Dev, ino: st.Ino, mode: st.Mode, uid: st.Uid, gid: st.Gid, size: st.Size, ctime: st.Ctim, link: was.link}, nil
}

// restoreLink gives the nameless file fd the name name in the directory
// dfd (linkat through /proc/self/fd, which needs no capability to
// follow), with CAP_FOWNER besides CAP_CHOWN when the sweep acts as the
// command: a link to a file the thread's fsuid does not own is refused
// otherwise (fs.protected_hardlinks). The directory is the pinned one,
// the name one component: nothing is resolved by path but the
// descriptor's own magic link.
func (s *Snapshot) restoreLink(fd, dfd int, name, rel string) error {
	link := func() error {
		err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), dfd, name, unix.AT_SYMLINK_FOLLOW)
		if err != nil {
			return &fs.PathError{Op: "linkat", Path: rel, Err: err}
		}
		return nil
	}
	if !s.asCommand {
		return link()
	}
	var err error
	if rerr := threadcaps.RunAsKeeping(s.cred, []int{unix.CAP_CHOWN, unix.CAP_FOWNER}, func() error { err = link(); return nil }); rerr != nil {
		return rerr
	}
	return err
}

// fileMode converts st_mode's permission and special bits to fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	fm := fs.FileMode(m & 0o777)
	if m&unix.S_ISUID != 0 {
		fm |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		fm |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		fm |= fs.ModeSticky
	}
	return fm
}

func slicesHasParent(dirs []string, rel string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}
