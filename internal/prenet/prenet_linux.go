package prenet

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// state is the namespace Start makes: fd (-1 for none) is valid once done
// is closed, and taken (set to -1) under mu by the one Take that has it.
var state = struct {
	once sync.Once
	done chan struct{}
	mu   sync.Mutex
	fd   int
	// With StartWithMount (withMount): the mount and IPC namespaces (-1
	// for none), valid once mntDone is closed.
	withMount atomic.Bool
	mntDone   chan struct{}
	mnt, ipc  int
	// started: Start or StartWithMount began making one (Pending).
	started atomic.Bool
}{done: make(chan struct{}), fd: -1, mntDone: make(chan struct{}), mnt: -1, ipc: -1}

func start() {
	state.once.Do(func() {
		state.started.Store(true)
		onThread(build)
	})
}

func startWithMount() {
	state.once.Do(func() {
		state.started.Store(true)
		state.withMount.Store(true)
		onThread(func() {
			buildMount()
			close(state.mntDone)
			build()
		})
	})
}

// buildMount makes the mount and IPC namespaces StartWithMount asks for,
// on the calling thread (which dies afterwards); on failure it keeps
// nothing.
func buildMount() {
	if syscall.Unshare(syscall.CLONE_FS|syscall.CLONE_NEWNS) != nil ||
		syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "") != nil {
		return
	}
	mnt, err := syscall.Open("/proc/thread-self/ns/mnt", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	ipc := -1
	if syscall.Unshare(syscall.CLONE_NEWIPC) == nil {
		if ipc, err = syscall.Open("/proc/thread-self/ns/ipc", syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != nil {
			ipc = -1
		}
	}
	state.mu.Lock()
	state.mnt, state.ipc = mnt, ipc
	state.mu.Unlock()
}

// onThread runs fn on a goroutine locked to a thread that is not the
// main thread, and lets that thread die afterwards (the goroutine never
// unlocks it): as osthread.Go, which this leaf package cannot import.
// When the goroutine lands on the main thread, it holds it locked while
// a second goroutine, which then cannot land there, runs fn.
func onThread(fn func()) {
	go func() {
		runtime.LockOSThread()
		if syscall.Gettid() == syscall.Getpid() {
			locked := make(chan struct{})
			onThread(func() { close(locked); fn() })
			<-locked
			runtime.UnlockOSThread() // nothing was done to this thread
			return
		}
		fn()
	}()
}

func build() {
	defer close(state.done)
	if err := syscall.Unshare(syscall.CLONE_NEWNET); err != nil {
		return
	}
	if !loopbackUp() {
		return
	}
	fd, err := syscall.Open("/proc/thread-self/ns/net", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	state.mu.Lock()
	state.fd = fd
	state.mu.Unlock()
}

// ifreqFlags is struct ifreq with its ifr_flags member (linux/if.h): 16
// bytes of name, then the union, whose largest member is 24 bytes.
type ifreqFlags struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// loopbackUp sets "lo" of the calling thread's network namespace up
// (SIOCGIFFLAGS, then SIOCSIFFLAGS with IFF_UP), as ip link set lo up.
func loopbackUp() bool {
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(s)
	var ifr ifreqFlags
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return false
	}
	ifr.flags |= syscall.IFF_UP
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr)))
	return e == 0
}

func pending() bool {
	if !state.started.Load() {
		return false
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	select {
	case <-state.done:
		return state.fd >= 0
	default:
		return true
	}
}

func reset() {
	if state.started.Load() {
		<-state.done
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.fd >= 0 {
		syscall.Close(state.fd)
	}
	state.once = sync.Once{}
	state.done = make(chan struct{})
	state.fd = -1
	state.started.Store(false)
}

func take() int {
	state.once.Do(func() { close(state.done) })
	<-state.done
	state.mu.Lock()
	defer state.mu.Unlock()
	fd := state.fd
	state.fd = -1
	return fd
}

func peek() (uint64, bool) {
	<-state.done
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.fd < 0 {
		return 0, false
	}
	var st syscall.Stat_t
	if syscall.Fstat(state.fd, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}

func takeMount() (mnt, ipc int) {
	if !state.withMount.Load() {
		return -1, -1 // and Start may still come: the once stays unused
	}
	<-state.mntDone
	state.mu.Lock()
	defer state.mu.Unlock()
	mnt, ipc = state.mnt, state.ipc
	state.mnt, state.ipc = -1, -1
	return mnt, ipc
}

func peekMount() (uint64, bool) {
	if !state.withMount.Load() {
		return 0, false
	}
	<-state.mntDone
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.mnt < 0 {
		return 0, false
	}
	var st syscall.Stat_t
	if syscall.Fstat(state.mnt, &st) != nil {
		return 0, false
	}
	return st.Ino, true
}
