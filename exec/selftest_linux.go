package exec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

// selfTestResult caches a Ruleset's self-test verdict. Only verdicts are
// cached (nil, ErrNotEnforced); ErrSelfTestFailed is retried next time.
type selfTestResult struct {
	mu   sync.Mutex
	done bool
	err  error
}

// selfTestCached runs selfTest once per Ruleset (until Release).
func selfTestCached(ws *jail.Workspace, rs *landlock.Ruleset) error {
	registry.mu.Lock()
	e := entryFor(rs)
	r := e.selfTest
	if r == nil {
		r = &selfTestResult{}
		e.selfTest = r
	}
	registry.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return r.err
	}
	err := selfTest(ws, rs)
	if err == nil || errors.Is(err, ErrNotEnforced) {
		r.done, r.err = true, err
	}
	return err
}

// selfTestProbeDir, when set (tests only), is where the probe directory
// is created, without checking that rs denies it: a stand-in for a file
// system on which Landlock does not enforce.
var selfTestProbeDir string

func selfTest(ws *jail.Workspace, rs *landlock.Ruleset) error {
	if ws == nil {
		return ErrNoWorkspace
	}
	if !rs.Enforced() {
		return fmt.Errorf("exec: self-test: %w", landlock.ErrUnavailable)
	}
	dir, err := makeProbeDir(ws, rs)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	probe := filepath.Join(dir, "probe")
	if err := os.WriteFile(probe, []byte("landjail self-test probe\n"), 0o644); err != nil {
		return fmt.Errorf("%w: %w", ErrSelfTestFailed, err)
	}
	if err := probeThread(rs, probe, ws.Root()); err != nil {
		return err
	}
	if rs.Allows(evalSymlinksLenient("/bin/sh"), ll.AccessFSExecute|ll.AccessFSReadFile) {
		return probeChild(ws, rs, probe)
	}
	return nil
}

// makeProbeDir creates a private directory outside every rule of rs,
// trying candidates on the workspace's file system first.
func makeProbeDir(ws *jail.Workspace, rs *landlock.Ruleset) (string, error) {
	if selfTestProbeDir != "" {
		return os.MkdirTemp(selfTestProbeDir, ".landjail-selftest-")
	}
	dev := func(p string) uint64 {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil {
			return ^uint64(0)
		}
		return st.Dev
	}
	wsDev := dev(ws.Root())
	cands := []string{os.TempDir(), filepath.Dir(ws.Root()), "/dev/shm"}
	slices.SortStableFunc(cands, func(a, b string) int {
		da, db := dev(a) != wsDev, dev(b) != wsDev
		switch {
		case da == db:
			return 0
		case !da:
			return -1
		}
		return 1
	})
	var errs []error
	for _, c := range cands {
		c = evalSymlinksLenient(c)
		if rs.Allows(filepath.Join(c, ".landjail-selftest"), ll.AccessFSReadFile) {
			errs = append(errs, fmt.Errorf("%s is allowed by the ruleset", c))
			continue
		}
		d, err := os.MkdirTemp(c, ".landjail-selftest-")
		if err != nil {
			errs = append(errs, err)
			continue
		}
		return d, nil
	}
	return "", fmt.Errorf("%w: no probe location outside the policy: %w", ErrSelfTestFailed, errors.Join(errs...))
}

// probeThread confines a throwaway thread with rs (no_new_privs and the
// domain; capabilities are irrelevant to Landlock) and opens probe (must
// fail with EACCES) and the workspace root (must succeed).
func probeThread(rs *landlock.Ruleset, probe, root string) error {
	var denied, allowed error
	err := onFreshThread(func() error {
		// Landlock alone: the namespace view would hide a probe below
		// /tmp (private there) and prove nothing about Landlock.
		if err := confineOnly(rs, true, nil, nil); err != nil {
			return err
		}
		fd, err := unix.Open(probe, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		denied = err
		fd, err = unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		allowed = err
		return nil
	})
	switch {
	case err != nil:
		return fmt.Errorf("%w: confining a thread: %w", ErrSelfTestFailed, err)
	case denied == nil:
		return fmt.Errorf("%w: a confined thread opened %s", ErrNotEnforced, probe)
	case !errors.Is(denied, unix.EACCES):
		return fmt.Errorf("%w: opening %s from a confined thread: %w (want EACCES)", ErrSelfTestFailed, probe, denied)
	case allowed != nil:
		return fmt.Errorf("%w: a confined thread cannot open the workspace root %s: %w", ErrSelfTestFailed, root, allowed)
	}
	return nil
}

// probeChildScript exits 10 if the probe ($1) opens, 11 if the workspace
// root ($2) does not. `true` is a regular built-in: a failed redirection
// fails the command, not the shell.
const probeChildScript = `true < "$1" && exit 10; true < "$2" || exit 11; exit 0`

// probeChild runs /bin/sh through the same spawn path as Start (a
// pooled spawner thread, capabilities dropped) and has it open probe and
// the workspace root.
func probeChild(ws *jail.Workspace, rs *landlock.Ruleset, probe string) error {
	var stderr bytes.Buffer
	c := &Cmd{
		Path:      "/bin/sh",
		Args:      []string{"sh", "-c", probeChildScript, "sh", probe, ws.Root()},
		Env:       []string{"PATH=/usr/bin:/bin"}, // no LANG: C-locale messages
		Stderr:    &stderr,
		Workspace: ws,
		Ruleset:   rs,
		ctx:       context.Background(),
	}
	err := c.Run()
	var ee *osexec.ExitError
	msg := strings.TrimSpace(stderr.String())
	switch {
	case err == nil:
		if _, view := rs.View(); view && hiddenByView(probe) && strings.Contains(msg, "No such file") {
			return nil // the child's /tmp and /dev/shm are private: the probe is not even there
		}
		if !strings.Contains(msg, "Permission denied") {
			return fmt.Errorf("%w: the probe child was refused %s for another reason: %q", ErrSelfTestFailed, probe, msg)
		}
		return nil
	case errors.As(err, &ee) && ee.ExitCode() == 10:
		return fmt.Errorf("%w: a confined child opened %s", ErrNotEnforced, probe)
	case errors.As(err, &ee) && ee.ExitCode() == 11:
		return fmt.Errorf("%w: a confined child cannot open the workspace root %s: %q", ErrSelfTestFailed, ws.Root(), msg)
	}
	return fmt.Errorf("%w: probe child: %w (%q)", ErrSelfTestFailed, err, msg)
}

// hiddenByView reports whether p lies below /tmp or /dev/shm, which a
// namespace view replaces by private tmpfs.
func hiddenByView(p string) bool {
	return strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/dev/shm/")
}
