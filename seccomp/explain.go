package seccomp

import (
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// The records of Options.Explain (see explain_linux.go for how they are
// made). Portable, so that the package's API is the same everywhere.

// Event is one kind of call the supervisor recorded under Options.Explain,
// with how many times it came.
type Event struct {
	// Syscall is the syscall's name ("socket", "openat").
	Syscall string
	// Rule is the Name of the filter rule that refused the call; "" for
	// an observed call (the kernel refused it: see Why).
	Rule string
	// Errno is the errno the rule answered, or the one the kernel
	// answers for Why (EROFS, EACCES).
	Errno unix.Errno
	// Args are the call's first three arguments for socket and
	// socketpair (domain, type, protocol), zero otherwise (the pointers
	// and descriptors of other calls say nothing once they are gone).
	Args [3]uint64
	// Path is an observed call's path, absolute in the child's view of
	// the file system (its working directory or descriptor joined with a
	// relative name); OverflowPath for the calls that came after
	// MaxEvents distinct events, counted together by the other fields.
	Path string
	// Access is what an observed call wanted: "read", "write" or
	// "create".
	Access string
	// Why is what refuses an observed call: ViewReadOnly, ViewNoPerm or
	// LandlockRead.
	Why string
	// Comm is the calling thread's comm, "" when several differed.
	Comm string
	// Count is how many calls had this Syscall, Rule, Errno, Args, Path,
	// Access and Why.
	Count int
}

// Why values of an observed Event.
const (
	// ViewReadOnly: a write or creation on a read-only mount (EROFS).
	ViewReadOnly = "read-only mount"
	// ViewNoPerm: a regular file with no permission bits (mode 0000),
	// which a process without CAP_DAC_OVERRIDE cannot open (EACCES); the
	// namespace layer masks denied files with such a file.
	ViewNoPerm = "mode 0000"
	// LandlockRead: not the view's: the broker (Filter.InstallBroker),
	// confined by the child's ruleset, was refused opening the file for
	// reading (EACCES): Landlock refuses it, seen without audit records.
	LandlockRead = "landlock refuses reading"
)

// MaxEvents bounds the distinct Events a Filter keeps: past it, a new
// kind of call is counted with its Path OverflowPath and its Args zero,
// so that a command making refused calls with distinct paths cannot grow
// the unconfined supervisor's memory without bound (red team round 15,
// R15b-3: 300,000 distinct refused creations grew landjail to 852 MB).
const MaxEvents = 10_000

// OverflowPath is the Path of the Events counted past MaxEvents.
const OverflowPath = "(more paths, not kept)"

// eventLog aggregates Events; safe for concurrent use.
type eventLog struct {
	mu    sync.Mutex
	list  []Event
	index map[string]int
}

func (l *eventLog) add(e Event) {
	key := func(e Event) string {
		return fmt.Sprint(e.Syscall, "\x00", e.Rule, "\x00", int(e.Errno), "\x00", e.Args, "\x00", e.Path, "\x00", e.Access, "\x00", e.Why)
	}
	k := key(e)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.index == nil {
		l.index = map[string]int{}
	}
	if _, ok := l.index[k]; !ok && len(l.list) >= MaxEvents {
		e.Path, e.Args = OverflowPath, [3]uint64{}
		k = key(e)
	}
	if i, ok := l.index[k]; ok {
		l.list[i].Count++
		if l.list[i].Comm != e.Comm {
			l.list[i].Comm = ""
		}
		return
	}
	e.Count = 1
	l.index[k] = len(l.list)
	l.list = append(l.list, e)
}

func (l *eventLog) events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.list...)
}
