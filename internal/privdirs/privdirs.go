// Package privdirs knows the private directories landjail makes for a
// command and keeps between runs, records which ones a live landjail is
// using, and removes the others once unused for long enough (landjail
// gc).
//
// The directories, by name (every one owned by the user the command runs
// as, mode 0700; see internal/cliopts.CommandHome and sandbox's
// newPrivateTmp):
//
//   - $XDG_CACHE_HOME/landjail/home/HASH: a workspace's private HOME
//     (HASH: 16 hex digits of the root's SHA-256);
//   - $TMPDIR/landjail-home-UID-HASH: the same with --user;
//   - $TMPDIR/landjail-UID-HASH: a workspace's TMPDIR for runs that
//     execve (12 hex digits);
//   - $TMPDIR/landjail-DIGITS: a per-run TMPDIR (os.MkdirTemp), removed
//     by the run that made it unless it was killed, or it took the place
//     of an unusable per-workspace one.
//
// A run that uses such directories records them (Begin, Record) in a
// marker $XDG_CACHE_HOME/landjail/live/PID-STARTTIME, which names the
// landjail process: after an execve the command keeps landjail's PID and
// start time, so the marker stays true for as long as the command runs.
// Supervised runs and landjail-mcp remove theirs at exit (End); GC
// removes the markers of processes that are gone. A shared flock on
// live/.lock, held while a run chooses its directories and writes its
// marker, and GC's exclusive one, keep GC from removing a directory a
// run is about to use.
//
// GC never follows a symbolic link: it considers only names that match
// the patterns above, in those two parents, that are real directories
// owned by the caller (a confined command cannot make one of those in
// place of a name: Landlock grants it only the directories themselves),
// and removes through an os.Root of the parent (no link inside is
// followed; a link is removed as a link). It does not protect against:
// a run whose cache directory was not writable (no marker: GC then has
// only the age of the directory and the environment of live processes
// to go by), and a run started with another XDG_CACHE_HOME or TMPDIR
// than GC's (GC looks where its own environment says).
package privdirs

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/procstat"
)

// markerHeader is a live marker's first line.
const markerHeader = "landjail live marker v1"

// Holds reports whether p, canonical, lies in one of the directories
// above, whichever run's (in $XDG_CACHE_HOME/landjail, or a
// $TMPDIR/landjail-* name): directories a command may write that outlive
// its run. landjail never executes a program found there (--git-identity:
// red team round 26, R26a-6) and --learn never grants them to a run
// (R26c-5: the cache held every workspace's private HOME).
func Holds(p string) bool {
	if cache, err := os.UserCacheDir(); err == nil {
		d := filepath.Join(cache, "landjail")
		if c, err := filepath.EvalSymlinks(d); err == nil {
			d = c
		}
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	tmp := os.TempDir()
	if c, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = c
	}
	rest, ok := strings.CutPrefix(p, tmp+"/")
	return ok && strings.HasPrefix(rest, "landjail-")
}

// Above reports whether p, canonical, is a directory that holds
// directories Holds reports (every workspace's): $XDG_CACHE_HOME/landjail
// or a directory above it (HOME), $TMPDIR or a directory above it
// (/tmp); "/" is not (its callers judge it on its own). A grant of one grants them all: --learn learned rw of
// $TMPDIR from a create refused there, and the next run read and wrote
// other workspaces' kept private TMPDIRs (red team round 27, R27a-2).
func Above(p string) bool {
	above := func(d string) bool {
		if c, err := filepath.EvalSymlinks(d); err == nil {
			d = c
		}
		return p == d || (p != "/" && strings.HasPrefix(d, p+"/"))
	}
	if cache, err := os.UserCacheDir(); err == nil && above(filepath.Join(cache, "landjail")) {
		return true
	}
	return above(os.TempDir())
}

// liveDir is the directory of live markers: $XDG_CACHE_HOME/landjail/live.
func liveDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "landjail", "live"), nil
}

// openLive makes (0700) and opens the live-marker directory, checked to
// be a directory owned by the caller, not a symbolic link.
func openLive() (*os.Root, error) {
	dir, err := liveDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: dir, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory of yours that only you can write")}
	}
	return os.OpenRoot(dir)
}

// Run is one run's record of its directories, from Begin to End. A nil
// *Run (no cache directory to write to) does nothing. It works through a
// descriptor of the live directory with plain system calls (no *os.File:
// a run's start pays for every one), each on a single name, never
// following a symbolic link.
type Run struct {
	dir    int           // the live directory, -1 once ended
	lock   int           // live/.lock, flocked shared from Begin to Record; -1 after
	marker string        // name in dir, "" before Record
	pruned chan struct{} // closed when Record's prune has ended; nil before
	// recorded is closed when RecordAsync's Record has returned (nil
	// without RecordAsync), recordErr is its error.
	recorded  chan struct{}
	recordErr error
	done      atomic.Bool // set right before recorded is closed
}

// openLiveFD makes (0700) and opens the live-marker directory, checked
// (on the descriptor) to be a directory owned by the caller that only the
// caller can write; a symbolic link in its place is refused.
func openLiveFD() (int, error) {
	dir, err := liveDir()
	if err != nil {
		return -1, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return -1, err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "open", Path: dir, Err: errors.New("not a directory of yours that only you can write")}
	}
	return fd, nil
}

// Begin starts the record of a run: it takes the shared lock that keeps
// GC out until Record has written the marker. It returns nil when the
// cache directory cannot be used (the run then goes unrecorded; see the
// package doc).
func Begin() *Run {
	dir, err := openLiveFD()
	if err != nil {
		return nil
	}
	lock, err := unix.Openat(dir, ".lock", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		unix.Close(dir)
		return nil
	}
	if err := unix.Flock(lock, unix.LOCK_SH); err != nil {
		unix.Close(lock)
		unix.Close(dir)
		return nil
	}
	return &Run{dir: dir, lock: lock}
}

// Record writes the run's marker naming dirs (empty names are skipped),
// sets each directory's modification time to now (GC's "last used"),
// and releases the lock. Errors are not fatal to a run and are returned
// only for tests.
func (r *Run) Record(dirs ...string) error {
	if r == nil {
		return nil
	}
	defer r.unlock()
	pid := os.Getpid()
	st, err := startTime(pid)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(markerHeader + "\n")
	for _, d := range dirs {
		if d == "" {
			continue
		}
		b.WriteString(d + "\n")
		// The directory's own time: its mtime changes only when an
		// entry directly in it does. AT_SYMLINK_NOFOLLOW: a link's time.
		unix.UtimesNanoAt(unix.AT_FDCWD, d, []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}, unix.AT_SYMLINK_NOFOLLOW)
	}
	name := strconv.Itoa(pid) + "-" + strconv.FormatUint(st, 10)
	if err := writeAt(r.dir, name, b.String()); err != nil {
		return err
	}
	r.marker = name
	// Pruning is housekeeping: on another goroutine, through its own
	// descriptor (End may close r.dir meanwhile). Safe without the lock:
	// it removes only markers of processes that are gone, which GC
	// disregards; an execve may cut it short, the next run goes on.
	if fd, err := unix.FcntlInt(uintptr(r.dir), unix.F_DUPFD_CLOEXEC, 0); err == nil {
		r.pruned = make(chan struct{})
		go func() {
			defer close(r.pruned)
			defer unix.Close(fd)
			prune(fd, name)
		}()
	}
	return nil
}

// RecordAsync is Record on another goroutine, so that writing the marker
// (a new file per run, ≈50 µs of the caller's thread here) overlaps the
// caller's other work. Until Record has written the marker the run still
// holds Begin's shared lock, so GC stays out as before; the lock's
// descriptor is close-on-exec, so a process that replaces itself (execve)
// must call Wait first, or GC could remove what the command uses before
// the marker names it. End waits for it too. Call it at most once, instead
// of Record. A nil *Run does nothing.
func (r *Run) RecordAsync(dirs ...string) {
	if r == nil {
		return
	}
	r.RecordOn(func(f func()) bool { go f(); return true }, dirs...)
}

// RecordOn is RecordAsync on what run runs f on (a goroutine that is
// there already: internal/limits.Then), when run takes f and RecordOn
// reports true; when run refuses, nothing is started and it reports
// false (RecordAsync or Record may follow). Wait and End wait for it as
// for RecordAsync. A nil *Run does nothing and reports true.
func (r *Run) RecordOn(run func(f func()) bool, dirs ...string) bool {
	if r == nil {
		return true
	}
	recorded := make(chan struct{})
	ok := run(func() {
		defer close(recorded)
		recordAsyncStarts()
		r.recordErr = r.Record(dirs...)
		r.done.Store(true)
	})
	if ok {
		r.recorded = recorded
	}
	return ok
}

// recordAsyncStarts is called by RecordAsync's goroutine before Record (a
// test hook).
var recordAsyncStarts = func() {}

// Wait waits until the Record that RecordAsync started has returned, and
// returns its error (only for tests, as Record's). Nil at once without
// RecordAsync, and on a nil *Run. Safe to call more than once, from one
// goroutine at a time.
func (r *Run) Wait() error {
	if r == nil || r.recorded == nil {
		return nil
	}
	// Spin for up to 50 µs before parking: a goroutine parked here and
	// readied by the writer resumes only once its thread is woken (≈30
	// µs on a 2-vCPU VM; BENCHMARKS.md round 7). No runtime.Gosched: the
	// caller is the locked thread about to execve (exec.Cmd.BeforeExec),
	// which Gosched would put to sleep until another thread hands the
	// processor back.
	for end := time.Now().Add(50 * time.Microsecond); !r.done.Load() && time.Now().Before(end); {
	}
	<-r.recorded
	return r.recordErr
}

// writeAt creates or truncates name in dir (mode 0600, no symbolic link
// followed) and writes s to it.
func writeAt(dir int, name, s string) error {
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	_, err = unix.Write(fd, []byte(s))
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// pruneMax bounds the stale markers one Record removes. A run that
// execve's leaves its marker behind (nothing is left to remove it), so
// each Record removes up to this many markers of processes that are gone:
// more than it adds, so the directory stays small without landjail gc,
// at the cost of a few reads of /proc per run.
const pruneMax = 4

// prune removes up to pruneMax markers in dir, other than ours, whose
// process is gone, among the first 64 names of the directory. Two runs
// (or a run and GC) removing the same marker is harmless.
func prune(dir int, ours string) {
	if _, err := unix.Seek(dir, 0, 0); err != nil {
		return
	}
	buf := make([]byte, 8192)
	n, err := unix.Getdents(dir, buf)
	if err != nil || n <= 0 {
		return
	}
	_, _, names := unix.ParseDirent(buf[:n], 64, nil)
	removed := 0
	for _, n := range names {
		if removed == pruneMax {
			return
		}
		if n == ours || !staleMarker(n) {
			continue
		}
		if unix.Unlinkat(dir, n, 0) == nil {
			removed++
		}
	}
}

// staleMarker reports whether name is a marker ("PID-STARTTIME") whose
// process is gone.
func staleMarker(name string) bool {
	pidS, stS, ok := strings.Cut(name, "-")
	pid, err1 := strconv.Atoi(pidS)
	want, err2 := strconv.ParseUint(stS, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	got, err := startTime(pid)
	return err != nil || got != want
}

func (r *Run) unlock() {
	if r.lock >= 0 {
		unix.Flock(r.lock, unix.LOCK_UN)
		unix.Close(r.lock)
		r.lock = -1
	}
}

// End removes the marker (the run is over) and closes the record. Safe on
// nil and twice.
func (r *Run) End() {
	if r == nil || r.dir < 0 {
		return
	}
	r.Wait() // RecordAsync's Record holds r.lock and sets r.marker
	r.unlock()
	if r.pruned != nil {
		<-r.pruned
	}
	if r.marker != "" {
		unix.Unlinkat(r.dir, r.marker, 0)
	}
	unix.Close(r.dir)
	r.dir = -1
}

// startTime is procstat.StartTime (for this process: read once).
func startTime(pid int) (uint64, error) {
	if pid == os.Getpid() {
		return procstat.SelfStartTime()
	}
	return procstat.StartTime(pid)
}

// Dir is one private directory GC considered.
type Dir struct {
	// Path is the directory's absolute path.
	Path string
	// Kind says what it is: KindHome, KindTmp or KindRunTmp.
	Kind string
	// Unused is how long ago it was last used (its modification time).
	Unused time.Duration
	// Bytes is the disk space its tree takes (st_blocks × 512, no link
	// followed), counted before removal.
	Bytes int64
	// InUseBy is the PID of a live landjail (or of a process whose HOME
	// or TMPDIR it is); 0 when unused.
	InUseBy int
	// Removed says GC removed it; Err why removing failed.
	Removed bool
	Err     error
}

// Kinds of private directory.
const (
	KindHome   = "private HOME"
	KindTmp    = "workspace TMPDIR"
	KindRunTmp = "per-run TMPDIR"
	// KindTrash: a directory an interrupted gc renamed and did not finish
	// removing (trashPrefix).
	KindTrash = "left by an interrupted gc"
)

// Options are GC's.
type Options struct {
	// OlderThan: only directories unused for longer are removed.
	OlderThan time.Duration
	// DryRun lists what would be removed and removes nothing.
	DryRun bool
}

var (
	homeName   = lazyRegexp(`^[0-9a-f]{16}$`)
	tmpName    = lazyRegexp(`^landjail-(?:home-)?([0-9]+)-[0-9a-f]{12,16}$`)
	runTmpName = lazyRegexp(`^landjail-[0-9]+$`)
	trashName  = lazyRegexp(`^\.landjail-gc-[0-9]+-[0-9]+$`)
)

// candidates lists the private directories of the caller: names matching
// the patterns in the two parents, real directories (Lstat) owned by the
// caller.
func candidates() []Dir {
	uid := os.Geteuid()
	var out []Dir
	add := func(parent, name, kind string) {
		p := filepath.Join(parent, name)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid {
			return
		}
		mt := time.Unix(st.Mtim.Unix())
		out = append(out, Dir{Path: p, Kind: kind, Unused: time.Since(mt)})
	}
	if cache, err := os.UserCacheDir(); err == nil {
		parent := filepath.Join(cache, "landjail", "home")
		if ents, err := os.ReadDir(parent); err == nil {
			for _, e := range ents {
				if homeName().MatchString(e.Name()) {
					add(parent, e.Name(), KindHome)
				} else if trashName().MatchString(e.Name()) {
					add(parent, e.Name(), KindTrash)
				}
			}
		}
	}
	parent := os.TempDir()
	if ents, err := os.ReadDir(parent); err == nil {
		for _, e := range ents {
			n := e.Name()
			if m := tmpName().FindStringSubmatch(n); m != nil && m[1] == strconv.Itoa(uid) {
				kind := KindTmp
				if strings.HasPrefix(n, "landjail-home-") {
					kind = KindHome
				}
				add(parent, n, kind)
			} else if runTmpName().MatchString(n) {
				add(parent, n, KindRunTmp)
			} else if trashName().MatchString(n) {
				add(parent, n, KindTrash)
			}
		}
	}
	return out
}

// inUse maps the directories live processes use to a PID: those the live
// markers name (markers of dead processes are removed), and the HOME and
// TMPDIR in the environment of every process the caller can read (a run
// that could not write a marker, the commands of a run). dryRun leaves
// the stale markers in place.
func inUse(root *os.Root, dryRun bool) map[string]int {
	used := map[string]int{}
	if ents, err := fs.ReadDir(root.FS(), "."); err == nil {
		for _, e := range ents {
			pidS, _, ok := strings.Cut(e.Name(), "-")
			pid, err := strconv.Atoi(pidS)
			if !ok || err != nil || !e.Type().IsRegular() {
				continue
			}
			if staleMarker(e.Name()) {
				if !dryRun {
					root.Remove(e.Name()) // that process is gone
				}
				continue
			}
			f, err := root.Open(e.Name())
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if l := sc.Text(); filepath.IsAbs(l) {
					used[filepath.Clean(l)] = pid
				}
			}
			f.Close()
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + p.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			for _, k := range []string{"HOME=", "TMPDIR="} {
				if v, ok := strings.CutPrefix(kv, k); ok && filepath.IsAbs(v) {
					if _, seen := used[filepath.Clean(v)]; !seen {
						used[filepath.Clean(v)] = pid
					}
				}
			}
		}
	}
	return used
}

// usedBy returns the PID using d or a directory inside it (a HOME inside
// a private TMPDIR), 0 for none.
func usedBy(used map[string]int, d string) int {
	for p, pid := range used {
		if p == d || strings.HasPrefix(p, d+"/") {
			return pid
		}
	}
	return 0
}

// GC removes the caller's private directories that no live landjail (and
// no live process, by its HOME or TMPDIR) uses and that were unused for
// longer than o.OlderThan, or with o.DryRun only says which. It returns
// every directory considered, in use or not. Under the exclusive lock it
// only decides and renames each doomed directory to a trash name
// (".landjail-gc-PID-N" in its parent); sizes are counted before and the
// trees removed after, so that runs starting meanwhile wait milliseconds,
// not the seconds a large tree takes. Errors: the live-marker directory
// cannot be used (then nothing is removed: GC cannot tell which
// directories are in use).
func GC(o Options) ([]Dir, error) {
	root, err := openLive()
	if err != nil {
		return nil, fmt.Errorf("the live-run markers (%w): nothing removed", err)
	}
	defer root.Close()
	// Sizes first, without the lock: walking hundreds of MB takes
	// seconds, and every run's start waits while gc holds it.
	dirs := candidates()
	for i := range dirs {
		dirs[i].Bytes = treeBytes(dirs[i].Path)
	}
	trash, err := decide(root, dirs, o)
	if err != nil {
		return nil, err
	}
	// The removal itself, which takes as long, after the lock: a
	// directory renamed to a trash name is no run's any more.
	for i, t := range trash {
		if t != "" {
			dirs[i].Err = removeDir(t)
			dirs[i].Removed = dirs[i].Err == nil
		}
	}
	return dirs, nil
}

// decide takes the exclusive lock, finds the directories in use, and
// renames each directory to remove to a trash name in its parent
// (trashPrefix) while runs are kept out, so that no run can start using
// it before it is gone. It returns the trash path per directory ("" for
// one kept). A trash directory an interrupted gc left is removed as is.
func decide(root *os.Root, dirs []Dir, o Options) ([]string, error) {
	lock, err := root.OpenFile(".lock", os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("the live-run lock: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return nil, &fs.PathError{Op: "flock", Path: lock.Name(), Err: err}
	}
	defer unix.Flock(int(lock.Fd()), unix.LOCK_UN)
	used := inUse(root, o.DryRun)
	trash := make([]string, len(dirs))
	for i := range dirs {
		d := &dirs[i]
		if d.InUseBy = usedBy(used, d.Path); d.InUseBy != 0 || o.DryRun {
			continue
		}
		if d.Kind == KindTrash {
			trash[i] = d.Path
			continue
		}
		if d.Unused < o.OlderThan {
			continue
		}
		trash[i], d.Err = moveToTrash(d.Path, i)
	}
	return trash, nil
}

// trashPrefix names a directory gc renamed and is removing (or an
// interrupted gc left): ".landjail-gc-PID-N", in the directory's parent.
const trashPrefix = ".landjail-gc-"

// moveToTrash renames dir, a real directory owned by the caller (checked
// again), to a trash name in its parent, through an os.Root of the parent
// (rename(2) follows no link).
func moveToTrash(dir string, n int) (string, error) {
	parent, name := filepath.Split(dir)
	r, err := os.OpenRoot(parent)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := ownDir(r, name, dir); err != nil {
		return "", err
	}
	t := fmt.Sprintf("%s%d-%d", trashPrefix, os.Getpid(), n)
	if err := r.Rename(name, t); err != nil {
		return "", err
	}
	return filepath.Join(parent, t), nil
}

// ownDir checks that name below r is a real directory owned by the
// caller.
func ownDir(r *os.Root, name, shown string) error {
	fi, err := r.Lstat(name)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return &fs.PathError{Op: "remove", Path: shown, Err: errors.New("no longer a directory of yours: left alone")}
	}
	return nil
}

// Survey is what GC would consider, without the lock or the in-use
// check, for doctor: how many private directories there are, their disk
// space, and how many (and how much) were unused for longer than
// olderThan.
func Survey(olderThan time.Duration) (n int, bytes int64, stale int, staleBytes int64) {
	for _, d := range candidates() {
		b := treeBytes(d.Path)
		n++
		bytes += b
		if d.Unused >= olderThan {
			stale++
			staleBytes += b
		}
	}
	return n, bytes, stale, staleBytes
}

// removeDir removes dir, a real directory owned by the caller (checked
// again), through an os.Root of its parent: nothing outside the parent
// is reached and no symbolic link is followed (Root.RemoveAll removes a
// link as a link).
func removeDir(dir string) error {
	parent, name := filepath.Split(dir)
	r, err := os.OpenRoot(parent)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := ownDir(r, name, dir); err != nil {
		return err
	}
	err = r.RemoveAll(name)
	if errors.Is(err, fs.ErrPermission) {
		// Directories without write permission for their owner (Go's
		// module cache makes its directories 0555): made writable, then
		// removed again. Only root passes over them without it.
		writable(r, name)
		err = r.RemoveAll(name)
	}
	return err
}

// writable gives every directory of the tree at name below r, name
// included, mode 0700: each opened through r with O_NOFOLLOW and
// O_DIRECTORY (a symbolic link is never followed, a file never changed)
// and changed by fchmod on that descriptor. Errors are left to the
// RemoveAll that follows.
func writable(r *os.Root, name string) {
	fs.WalkDir(r.FS(), name, func(p string, d fs.DirEntry, err error) error {
		if d == nil || !d.IsDir() {
			return nil
		}
		if f, err := r.OpenFile(p, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0); err == nil {
			f.Chmod(0o700)
			f.Close()
		}
		return nil
	})
}

// treeBytes is the disk space of the tree at dir, no link followed
// (filepath.WalkDir lstats), unreadable parts left out.
func treeBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

// lazyRegexp compiles pattern at its first use, not in the package's init:
// only gc matches names, and every landjail start would pay the compile.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
