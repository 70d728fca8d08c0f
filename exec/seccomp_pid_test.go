package exec_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
)

// pidCase is one row of testdata/pidsyscalls.toml (see its header).
type pidCase struct {
	Verb              string   `toml:"verb"`
	Target            string   `toml:"target"`
	Victim            string   `toml:"victim"`
	Effect            string   `toml:"effect"`
	Users             []string `toml:"users"`
	Unconfined        string   `toml:"unconfined"`
	UnconfinedNonroot string   `toml:"unconfined_nonroot"`
	Landlock          string   `toml:"landlock"`
	LandlockRoot      string   `toml:"landlock_root"`
	Seccomp           string   `toml:"seccomp"`
	Why               string   `toml:"why"`
}

// nonrootUID runs the non-root rows: an ID no account or other process of
// the machine uses, so the PRIO_USER and IOPRIO_WHO_USER controls renice
// only this test's victim (as uid 65534 they would reach every process
// of nobody on the machine). The kernel treats every non-root uid alike.
const nonrootUID = 64917

func loadPIDCases(t *testing.T) []pidCase {
	var doc struct {
		Case []pidCase `toml:"case"`
	}
	md, err := toml.DecodeFile("../testdata/pidsyscalls.toml", &doc)
	require.NoError(t, err)
	require.Empty(t, md.Undecoded(), "unknown keys in pidsyscalls.toml")
	require.NotEmpty(t, doc.Case)
	return doc.Case
}

var (
	pidProbeOnce sync.Once
	pidProbeBin  string
	pidProbeErr  error
)

// withPIDProbe builds testdata/pidprobe once per test binary and copies
// it into the fixture's read-exec root.
func (f *fixture) withPIDProbe(t *testing.T) string {
	t.Helper()
	pidProbeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "landjail-exec-pidprobe-")
		if err != nil {
			pidProbeErr = err
			return
		}
		pidProbeBin = filepath.Join(dir, "pidprobe")
		out, err := osexec.Command("go", "build", "-o", pidProbeBin, "./testdata/pidprobe").CombinedOutput()
		if err != nil {
			pidProbeErr = fmt.Errorf("go build pidprobe: %v\n%s", err, out)
		}
	})
	require.NoError(t, pidProbeErr)
	data, err := os.ReadFile(pidProbeBin)
	require.NoError(t, err)
	bin := filepath.Join(f.rox, "pidprobe")
	require.NoError(t, os.WriteFile(bin, data, 0o755))
	return bin
}

// victim is an unconfined process of the host (the user's shell, editor
// or agent), in a process group of its own.
type victim struct {
	cmd    *osexec.Cmd
	exited chan struct{}
	state  *os.ProcessState
}

func startVictim(t *testing.T, kind string, cred *syscall.Credential) *victim {
	t.Helper()
	var c *osexec.Cmd
	switch kind {
	case "", "sleep":
		c = osexec.Command("sleep", "600")
	case "busy":
		c = osexec.Command("sh", "-c", "while :; do :; done")
	default:
		t.Fatalf("unknown victim %q", kind)
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	require.NoError(t, c.Start())
	v := &victim{cmd: c, exited: make(chan struct{})}
	go func() { c.Wait(); v.state = c.ProcessState; close(v.exited) }()
	t.Cleanup(func() { c.Process.Kill(); <-v.exited })
	// Wait until it runs its own program (a victim still in the Go
	// child between fork and execve would not be what the row says).
	want := filepath.Base(c.Path)
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c.Process.Pid))
		return err == nil && strings.TrimSpace(string(b)) == want
	}, 5*time.Second, 5*time.Millisecond)
	return v
}

// writableMapping is the start of the victim's stack: writable from the
// start and for good (a data segment of the program may still be turned
// read-only by the dynamic loader's RELRO after the check).
func writableMapping(t *testing.T, pid int) string {
	fh, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	require.NoError(t, err)
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 5 && f[1] == "rw-p" && f[5] == "[stack]" {
			start, _, _ := strings.Cut(f[0], "-")
			return start
		}
	}
	t.Fatalf("no stack in /proc/%d/maps", pid)
	return ""
}

// affected reports whether the row's effect shows on the victim.
func (v *victim) affected(t *testing.T, effect string) bool {
	pid := v.cmd.Process.Pid
	exitedBy := func(sig syscall.Signal, within time.Duration) bool {
		select {
		case <-v.exited:
			ws, ok := v.state.Sys().(syscall.WaitStatus)
			return ok && ws.Signaled() && ws.Signal() == sig
		case <-time.After(within):
			return false
		}
	}
	proc := func(file string) string {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
		require.NoError(t, err)
		return string(b)
	}
	switch effect {
	case "sigxcpu":
		// A limit never set shows at once; a set one (RLIMIT_CPU 0 acts
		// as 1 s of CPU time, update_rlimit_cpu) must then kill.
		limits, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid)) // empty once it died
		for line := range strings.Lines(string(limits)) {
			if strings.HasPrefix(line, "Max cpu time") && strings.Fields(line)[3] == "unlimited" {
				return false
			}
		}
		return exitedBy(syscall.SIGXCPU, 10*time.Second)
	case "sigterm":
		// A sent signal is pending when the syscall returns: the
		// sleeping victim dies as soon as it is scheduled.
		return exitedBy(syscall.SIGTERM, 300*time.Millisecond)
	case "nofile":
		for line := range strings.Lines(proc("limits")) {
			if strings.HasPrefix(line, "Max open files") {
				return strings.Fields(line)[3] == "64"
			}
		}
		t.Fatal("no Max open files in limits")
	case "nice":
		stat := proc("stat")
		f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+2:])
		return f[16] == "19" // field 19, nice
	case "affinity":
		var set unix.CPUSet
		require.NoError(t, unix.SchedGetaffinity(pid, &set))
		return set.Count() == 1 && set.IsSet(0)
	case "sched-idle":
		policy, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
		require.Zero(t, e)
		return policy == 5 // SCHED_IDLE
	case "ioprio":
		prio, _, e := unix.RawSyscall(unix.SYS_IOPRIO_GET, 1 /* IOPRIO_WHO_PROCESS */, uintptr(pid), 0)
		require.Zero(t, e)
		return prio>>13 == 3 // IOPRIO_CLASS_IDLE
	case "oom":
		return strings.TrimSpace(proc("oom_score_adj")) == "1000"
	}
	t.Fatalf("unknown effect %q", effect)
	return false
}

// pidMode is how the probe runs: unconfined (the control), under Landlock
// alone or with the seccomp filter too, both in the host's PID namespace
// (--no-namespaces, --no-pid-namespace), or with the filter in a PID
// namespace of its own (the default where it is available).
type pidMode struct {
	name     string
	confined bool
	filter   bool
	pidns    bool
}

var pidModes = []pidMode{
	{name: "unconfined"},
	{name: "landlock", confined: true},
	{name: "seccomp", confined: true, filter: true},
	{name: "pidns", confined: true, filter: true, pidns: true},
}

// TestSeccompPIDSyscalls runs testdata/pidsyscalls.toml: every syscall
// that takes a process ID (or pidfd) and acts on that process, aimed at a
// live unconfined victim of the same user (or at the caller itself), as
// root and as a non-root user. The unconfined control shows each refused
// host row reaching the victim (its effect is checked on the victim:
// killed, reniced, pinned, ...); the landlock mode shows what the kernel
// already stops through Landlock (ptrace scope, signal scope from ABI 6);
// the seccomp mode shows the pid rules stop the rest, with the victim
// untouched, while the self forms still work; in a PID namespace no host
// row succeeds.
func TestSeccompPIDSyscalls(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 6)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the non-root rows run as another uid, the root rows as root")
	}
	f := newFixture(t)
	bin := f.withPIDProbe(t)
	for d := f.root; d != "/tmp"; d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755)) // for the non-root child
	}
	rs := f.compile(t, landlock.Options{})
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true})
	require.NoError(t, err)
	rsNS := f.compile(t, landlock.Options{Namespaces: true})
	havePIDNS, why := exec.PIDNamespace(rsNS, filter)

	users := map[string]*syscall.Credential{"root": nil, "nonroot": {Uid: nonrootUID, Gid: nonrootUID}}
	for _, tc := range loadPIDCases(t) {
		us := tc.Users
		if len(us) == 0 {
			us = []string{"root", "nonroot"}
		}
		for _, user := range us {
			cred, ok := users[user]
			require.True(t, ok, "unknown user %q", user)
			for _, m := range pidModes {
				name := fmt.Sprintf("%s %s/%s/%s", tc.Verb, tc.Target, user, m.name)
				t.Run(name, func(t *testing.T) {
					if m.pidns && !havePIDNS {
						if errno, ok := kerneltest.Blocked(kerneltest.FeatureNamespaces); ok {
							t.Skipf("namespaces blocked with %s by the emulation: %s", unix.ErrnoName(errno), why)
						}
						kerneltest.Missing(t, "no PID namespace: %s", why)
					}
					want := map[string]string{"unconfined": tc.Unconfined, "landlock": tc.Landlock, "seccomp": tc.Seccomp, "pidns": tc.Seccomp}[m.name]
					if m.name == "unconfined" && user == "nonroot" && tc.UnconfinedNonroot != "" {
						want = tc.UnconfinedNonroot
					}
					if m.name == "landlock" && user == "root" && tc.LandlockRoot != "" {
						want = tc.LandlockRoot
					}
					require.NotEmpty(t, want, "row %s has no expectation for %s", tc.Verb, m.name)
					v := startVictim(t, tc.Victim, cred)
					pid := v.cmd.Process.Pid
					target, host := tc.Target, true
					switch tc.Target {
					case "host", "host-pgrp":
						target = strconv.Itoa(pid) // the victim leads its group
					case "host-uid":
						target = strconv.Itoa(nonrootUID)
						require.Equal(t, "nonroot", user, "host-uid rows run as the non-root user only")
					default:
						host = false
					}
					args := []string{tc.Verb, target, writableMapping(t, pid)}
					var out, stderr bytes.Buffer
					var run func() error
					if !m.confined {
						c := osexec.Command(bin, args...)
						c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
						c.Stdout, c.Stderr = &out, &stderr
						run = c.Run
					} else {
						r := rs
						if m.pidns {
							r = rsNS
						}
						c := exec.CommandContext(context.Background(), f.ws, r, bin, args...)
						c.NoPIDNamespace = !m.pidns
						c.Credential = cred
						if m.filter {
							c.Seccomp = filter
						}
						c.Stdout, c.Stderr = &out, &stderr
						run = c.Run
					}
					require.NoError(t, run(), "probe: %s", stderr.String())
					got := strings.TrimSpace(out.String())
					t.Logf("%v → %s (%s)", args[:2], got, tc.Why)
					if m.pidns && host {
						// The victim is not in the namespace: nothing reaches it.
						assert.NotEqual(t, "ok", got, "a host process from a PID namespace")
					} else {
						assert.Equal(t, want, got)
					}
					if tc.Effect != "" && host {
						assert.Equal(t, got == "ok", v.affected(t, tc.Effect),
							"the victim is affected exactly when the call succeeded (%s)", tc.Effect)
					}
				})
			}
		}
	}
}

// TestSeccompPIDSelfWorkloads: programs that set their own limits,
// priority and affinity run unchanged under the filter (the pid rules
// allow pid 0): bash's ulimit, nice, taskset and ionice starting a
// command, and Python's resource and os.sched_setaffinity.
func TestSeccompPIDSelfWorkloads(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	f := newFixture(t)
	rs := f.compile(t, landlock.Options{})
	filter, err := seccomp.Build(seccomp.Options{LandlockABI: landlock.ABI(), NetRestricted: true})
	require.NoError(t, err)
	cmds := [][]string{
		{"/bin/sh", "-c", "ulimit -n 256 && ulimit -t 100 && ulimit -n"},
		{"nice", "-n", "5", "/bin/sh", "-c", "echo ok"},
		{"taskset", "-c", "0", "/bin/sh", "-c", "echo ok"},
		{"ionice", "-c", "3", "/bin/sh", "-c", "echo ok"},
		{"/usr/bin/python3", "-c", "import os, resource; resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128)); os.sched_setaffinity(0, {0}); os.nice(1); print(resource.getrlimit(resource.RLIMIT_NOFILE)[0], sorted(os.sched_getaffinity(0)))"},
	}
	want := []string{"256\n", "ok\n", "ok\n", "ok\n", "128 [0]\n"}
	for i, args := range cmds {
		path, err := osexec.LookPath(args[0])
		if err != nil {
			t.Logf("skipping %v: %v", args, err)
			continue
		}
		for _, fl := range []*seccomp.Filter{nil, filter} {
			c := exec.CommandContext(context.Background(), f.ws, rs, path, args[1:]...)
			c.Seccomp = fl
			out, err := c.CombinedOutput()
			assert.NoError(t, err, "%v (filter %v): %s", args, fl != nil, out)
			assert.Equal(t, want[i], string(out), "%v (filter %v)", args, fl != nil)
		}
	}
}
