//go:build linux

package sweep

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/termsafe"
)

// MaxLive is how many entries Watch neutralises in one watch before it
// calls its abort function: a command that keeps re-creating protected
// names gets that many windows of a few tens of microseconds, then is
// stopped.
const MaxLive = 8

// MaxWatches bounds the directories Watch watches (inotify watches cost
// kernel memory, about 1 KiB each, and count against
// fs.inotify.max_user_watches). The shallowest directories come first;
// beyond the bound only the sweep after the command covers the rest.
const MaxWatches = 65536

// Directory watches: an entry created or moved in (a directory moved
// away is followed by its cookie). Protected regular files that exist at
// Take are watched themselves for writes in place and mode changes.
const (
	dirMask  = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_MOVED_FROM | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK
	fileMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE
)

// Live is a watch started by Snapshot.Watch.
type Live struct {
	s     *Snapshot
	f     *os.File
	w     io.Writer
	abort func(reason string)

	mu      sync.Mutex
	wds     map[int32]string  // watch descriptor: directory or file, relative ("." the root)
	cookies map[uint32]string // a directory moved away, by its IN_MOVED_FROM cookie
	count   int
	aborted bool
	done    chan struct{}
	partial int // directories not watched (MaxWatches, or add_watch failed)
}

// Watch neutralises protected entries while the command runs, as Sweep
// would after it, as soon as inotify reports them (red team round 5, N7:
// a hook or mise file created during a long command was live until the
// sweep, and one removed before the end was never reported). Every
// directory of the workspace found by Take is watched for entries
// created or moved in (the shallowest MaxWatches), directories created
// during the run as they appear (what they hold by then is examined),
// and the protected regular files for writes and mode changes. Each
// entry neutralised is written to w at once and returned again by the
// next Sweep (Quarantined.Live).
//
// Not neutralised live, left to the sweep after the command: what is
// inside a repository whose top directory did not exist at Take (`git
// init sub`, `cargo new` and tests that build fixture repositories keep
// working until the command ends; git finds a repository from the
// working directory upwards, so only a user inside that new directory
// could run it: see deferred); directories beyond MaxWatches.
//
// abort (may be nil) is called once, from the watch's goroutine, when the
// command has made MaxLive entries neutralised, or when inotify's queue
// overflowed (events were lost): the caller stops the command (fail
// closed). Stop ends the watch. Race: an entry is live for the time the
// watch takes to see it (tens of microseconds, longer on a loaded host);
// a reader that opens it exactly then reads it. A nil Snapshot returns a
// nil Live (Stop on it does nothing). Errors: inotify_init1's.
func (s *Snapshot) Watch(w io.Writer, abort func(reason string)) (*Live, error) {
	if s == nil {
		return nil, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sweep: inotify_init1: %w", err)
	}
	l := &Live{s: s, f: os.NewFile(uintptr(fd), "inotify"), w: w, abort: abort,
		wds: map[int32]string{}, cookies: map[uint32]string{}, done: make(chan struct{})}
	root := s.ws.Root()
	dirs := make([]string, 0, len(s.dirs)+1)
	dirs = append(dirs, ".")
	for d := range s.dirs {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool {
		di, dj := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/")
		if di != dj {
			return di < dj
		}
		return dirs[i] < dirs[j]
	})
	for i, d := range dirs {
		if i >= MaxWatches {
			l.partial = len(dirs) - i
			break
		}
		// No command runs yet: the paths are what Take walked.
		wd, err := unix.InotifyAddWatch(fd, filepath.Join(root, d), dirMask|unix.IN_DONT_FOLLOW)
		if err != nil {
			if d == "." {
				l.f.Close()
				return nil, fmt.Errorf("sweep: inotify_add_watch %s: %w", termsafe.Quote(root), err)
			}
			l.partial++
			continue
		}
		l.wds[int32(wd)] = d
	}
	for rel, e := range s.known {
		if e.mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if wd, err := unix.InotifyAddWatch(fd, filepath.Join(root, rel), fileMask|unix.IN_DONT_FOLLOW); err == nil {
			l.wds[int32(wd)] = rel
		}
	}
	if l.partial > 0 {
		fmt.Fprintf(w, "landjail: %d directories of the workspace are not watched for agent configuration while the command runs (more than %d, or inotify refused); they are swept when it ends\n", l.partial, MaxWatches)
	}
	go l.read()
	return l, nil
}

// Stop ends the watch and waits for its goroutine. Safe on a nil Live
// and twice.
func (l *Live) Stop() {
	if l == nil {
		return
	}
	l.f.Close()
	<-l.done
}

// read handles events until the descriptor is closed.
func (l *Live) read() {
	defer close(l.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := l.f.Read(buf)
		if err != nil {
			if errors.Is(err, os.ErrClosed) || errors.Is(err, io.EOF) {
				return
			}
			l.fail("reading inotify events: " + err.Error())
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := ""
			if ev.Len > 0 {
				b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				if i := indexByte(b, 0); i >= 0 {
					b = b[:i]
				}
				name = string(b)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			l.handle(ev.Wd, ev.Mask, ev.Cookie, name)
		}
	}
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// handle is one event.
func (l *Live) handle(wd int32, mask, cookie uint32, name string) {
	if mask&unix.IN_Q_OVERFLOW != 0 {
		l.fail("inotify's event queue overflowed (events were lost)")
		return
	}
	l.mu.Lock()
	base, ok := l.wds[wd]
	if mask&unix.IN_IGNORED != 0 {
		delete(l.wds, wd)
	}
	l.mu.Unlock()
	if !ok || mask&unix.IN_IGNORED != 0 {
		return
	}
	rel := base
	if name != "" {
		rel = join(base, name)
	}
	dir := mask&unix.IN_ISDIR != 0
	switch {
	case mask&unix.IN_MOVED_FROM != 0:
		if dir {
			l.mu.Lock()
			l.cookies[cookie] = rel
			l.mu.Unlock()
		}
		return
	case mask&unix.IN_MOVED_TO != 0 && dir:
		l.mu.Lock()
		old, moved := l.cookies[cookie]
		delete(l.cookies, cookie)
		if moved {
			for w, p := range l.wds {
				if p == old || strings.HasPrefix(p, old+"/") {
					l.wds[w] = rel + p[len(old):]
				}
			}
		}
		l.mu.Unlock()
		// What the directory holds is at new paths now: examined, and
		// watched where it was not (moved in from an unwatched place).
		l.tree(rel, !moved)
		return
	case mask&unix.IN_CREATE != 0 && dir:
		l.tree(rel, true)
		return
	}
	l.check(rel)
}

// tree examines the directory rel and everything below it, adding a
// watch to each directory first when add (a directory made during the
// run: what it holds by the time the watch is in place is examined
// here, what comes later through the watch).
func (l *Live) tree(rel string, add bool) {
	l.check(rel)
	if _, err := l.s.root.Lstat(rel); err != nil {
		return // neutralised (renamed away) or gone
	}
	if add {
		l.addDir(rel)
	}
	ents, err := l.s.root.ReadDir(rel)
	if err != nil {
		return
	}
	for _, e := range ents {
		sub := join(rel, e.Name())
		if e.IsDir() {
			l.tree(sub, add)
		} else {
			l.check(sub)
		}
	}
}

// addDir watches the directory rel, opened through the root (no
// symbolic link followed: the command may swap a component meanwhile).
func (l *Live) addDir(rel string) {
	l.mu.Lock()
	full := len(l.wds) >= MaxWatches+len(l.s.known)
	l.mu.Unlock()
	if full {
		l.partial++
		return
	}
	fd, err := l.s.root.OpenFd(rel, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	wd, err := unix.InotifyAddWatch(int(l.f.Fd()), "/proc/self/fd/"+strconv.Itoa(fd), dirMask)
	if err != nil {
		l.partial++
		return
	}
	l.mu.Lock()
	l.wds[int32(wd)] = rel
	l.mu.Unlock()
}

// check neutralises rel if it is protected, not as Take recorded it,
// and not in a repository directory the command created.
func (l *Live) check(rel string) {
	s := l.s
	if _, ok := s.mine.Load(rel); ok || !s.liveCandidate(rel) || s.deferred(rel) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.liveProtected(rel) {
		return
	}
	now, err := s.stat(rel, false)
	if err != nil {
		return
	}
	q, ok, _ := s.neutralise(rel, now, s.now().UTC().Format("20060102T150405Z"))
	if !ok {
		return
	}
	q.Live = true
	s.lived = append(s.lived, q)
	fmt.Fprintf(l.w, "landjail: %s\n", q)
	l.mu.Lock()
	l.count++
	over := l.count >= MaxLive
	l.mu.Unlock()
	if over {
		l.fail(fmt.Sprintf("the command made %d entries of agent configuration while it ran (each neutralised)", MaxLive))
	}
}

// fail calls abort once.
func (l *Live) fail(reason string) {
	l.mu.Lock()
	done := l.aborted
	l.aborted = true
	l.mu.Unlock()
	if done {
		return
	}
	fmt.Fprintf(l.w, "landjail: --protect-agent-config: %s; stopping the command\n", reason)
	if l.abort != nil {
		l.abort(reason)
	}
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// liveCandidate is a test on names alone: can rel be protected at all?
// (Most events are a build's files.)
func (s *Snapshot) liveCandidate(rel string) bool {
	root := s.ws.Root()
	for _, c := range strings.Split(rel, "/") {
		if s.names[c] || c == ".git" || gitDirNames[c] || globName(s.globs, c) {
			return true
		}
	}
	if len(s.refs) > 0 {
		p := root
		for _, c := range strings.Split(rel, "/") {
			p += "/" + c
			if s.refs[p] {
				return true
			}
		}
	}
	if len(s.pyTops) > 0 {
		d := filepath.Dir(rel)
		return s.pyTops[d] || s.pyTops[filepath.Dir(d)]
	}
	return false
}

// deferred reports whether rel is inside a repository whose top
// directory (or, for a directory laid out like a repository directory,
// that directory) did not exist at Take: left to the sweep after the
// command. git looks for a repository from the working directory
// upwards, so only a user working inside that new directory could run
// what it holds, and git itself would fail half-way if it were renamed
// (git init sub, cargo new). A new .git in a directory that existed
// (src/.git, which the user's `git status` in src/ would find first) is
// neutralised at once, as is the root's.
func (s *Snapshot) deferred(rel string) bool {
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		if i == 0 {
			continue // the root's own .git, or an entry at the root
		}
		if i == len(comps)-1 && c == ".git" {
			break // a gitfile or .git itself: judged live
		}
		if c == ".git" || gitDirNames[c] && !underDotGit(strings.Join(comps[:i+1], "/")) {
			if top := strings.Join(comps[:i], "/"); !s.dirs[top] {
				return true
			}
			if c == ".git" {
				return false
			}
		}
	}
	return false
}

// liveProtected is walk's decision for one path: rel or a directory
// above it is protected. s.mu is held.
func (s *Snapshot) liveProtected(rel string) bool {
	root := s.ws.Root()
	comps := strings.Split(rel, "/")
	gitDirs := &sync.Map{}
	for i, c := range comps {
		sub := strings.Join(comps[:i+1], "/")
		if _, ok := s.mine.Load(sub); ok {
			continue // a quarantined directory: inert, what it holds is judged by name
		}
		fi, err := s.root.Lstat(sub)
		if err != nil {
			return false
		}
		if s.protectedEntry(root+"/"+sub, sub, c, fi.IsDir(), fi.Mode()&os.ModeSymlink != 0, gitDirs) {
			return true // rel, or a protected directory above it
		}
	}
	return false
}
