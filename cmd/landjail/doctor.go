package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/internal/limits"
	"github.com/landjail/landjail/internal/mountinfo"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/privdirs"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/openat"
	"github.com/landjail/landjail/seccomp"
)

const doctorHelp = `Print what this kernel and process offer landjail, starting with a one-line
verdict: the layer a run here gets (the namespace layer, Landlock only, or
path-check only) and why. Then the kernel release, the
Landlock ABI and what each ABI level brings, openat2 and the lookup mechanism in
use, the seccomp mode and no_new_privs bit of this process, and the enforcement
report of "landjail run" with default flags in the current directory.

EXIT STATUS:
   0    always, once the report is printed (missing features are facts)
   125  landjail's own error (bad flag, output error)`

// abiLevels is what each Landlock ABI level adds (from the kernel's
// Documentation/userspace-api/landlock.rst). Kernel versions live in the
// repository's one kernel table, not here.
var abiLevels = []struct {
	ABI     int
	Feature string
}{
	{1, "filesystem access control (read, write, execute, make, remove)"},
	{2, "REFER: rename and link across directories"},
	{3, "TRUNCATE: truncate(2) and O_TRUNC"},
	{4, "TCP bind and connect by port"},
	{5, "IOCTL_DEV: ioctl on device files"},
	{6, "scopes: signals and abstract UNIX sockets"},
	{7, "logging flags for denials (audit)"},
}

type abiLevel struct {
	ABI       int    `json:"abi"`
	Feature   string `json:"feature"`
	Available bool   `json:"available"`
}

// doctorReport is what doctor --json prints.
type doctorReport struct {
	Kernel          string           `json:"kernel"`
	LandlockABI     int              `json:"landlock_abi"`
	LandlockError   string           `json:"landlock_error,omitempty"`
	Levels          []abiLevel       `json:"landlock_levels"`
	Openat2         bool             `json:"openat2"`
	OpenatMechanism string           `json:"openat_mechanism"`
	SeccompMode     int              `json:"seccomp_mode"`
	NoNewPrivs      bool             `json:"no_new_privs"`
	Run             *landlock.Report `json:"run,omitempty"`
	RunError        string           `json:"run_error,omitempty"`
	Seccomp         []seccomp.Rule   `json:"seccomp,omitempty"`
	SeccompError    string           `json:"seccomp_error,omitempty"`
	// MountsInWorkspace are mount points below the current directory: a
	// bind mount there reaches another tree (see --no-xdev).
	MountsInWorkspace []string `json:"mounts_in_workspace,omitempty"`
	// Namespaces is "available" or why the namespace layer is not
	// (nsview.Probe); Run.Layer is the layer a run would use.
	Namespaces string `json:"namespaces"`
	// PIDNamespace is "yes" or "no: WHY": whether a run's command gets a
	// PID namespace of its own (fresh /proc, init as PID 1).
	PIDNamespace string `json:"pid_namespace"`
	// SelfTest is "ok", "not enforced: ..." or "skipped: ...": whether a
	// throwaway confined child really was denied an access.
	SelfTest string `json:"self_test"`
	// Limits is how resource limits (--pids, --memory, --cpus) would be
	// enforced here: a cgroup mechanism, or not enforced and why.
	Limits limits.Probe `json:"limits"`
	// PrivateDirs is landjail's private HOMEs and TMPDIRs here: how many,
	// their size, and what landjail gc would remove (privdirs.Survey).
	PrivateDirs string `json:"private_dirs"`
	// Verdict is the one line that says which layer a run here gets and
	// why (doctorVerdict); the text output starts with it.
	Verdict string `json:"verdict"`
}

func newDoctorCommand() *cli.Command {
	return &cli.Command{
		Name:         "doctor",
		Usage:        "report kernel features and what a run here would enforce",
		Description:  doctorHelp,
		Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object"}},
		OnUsageError: onUsageError,
		// A path or NAME=VALUE may hold a comma.
		DisableSliceFlagSeparator: true,
		Action:                    doctorAction,
	}
}

func doctorAction(_ context.Context, cmd *cli.Command) error {
	openat2, mechanism := probeLookups()
	d := doctorReport{
		Kernel:          kernel.Release(),
		LandlockABI:     kernel.LandlockABI(),
		Openat2:         openat2,
		OpenatMechanism: mechanism,
		SeccompMode:     kernel.SeccompMode(),
		NoNewPrivs:      kernel.NoNewPrivs(),
	}
	if err := kernel.LandlockErr(); err != nil {
		d.LandlockError = err.Error()
	}
	for _, l := range abiLevels {
		d.Levels = append(d.Levels, abiLevel{l.ABI, l.Feature, d.LandlockABI >= l.ABI})
	}
	if rep, selfTest, err := defaultRunReport(); err != nil {
		d.RunError = err.Error()
		d.SelfTest = "skipped: " + err.Error()
	} else {
		d.Run, d.SelfTest = rep, selfTest
	}
	if wd, err := os.Getwd(); err == nil {
		d.MountsInWorkspace = mountsBelow(wd)
	}
	d.Limits = limits.Available()
	d.Namespaces = "available"
	d.PIDNamespace = "yes"
	if err := nsview.Probe(); err != nil {
		d.Namespaces = "unavailable: " + err.Error()
		d.PIDNamespace = "no: no namespace view"
		if errors.Is(err, nsview.ErrNotPrivileged) {
			if uerr := nsview.ProbeUserNS(); uerr == nil {
				d.Namespaces = "available through the user-namespace stage (not root: each command is started by a re-executed landjail in a user namespace of its own)"
				d.PIDNamespace = "yes (the stage is PID 1)"
			} else {
				d.Namespaces = "unavailable: " + uerr.Error()
			}
		}
	}
	if d.LandlockABI == 0 {
		d.PIDNamespace = "no: no Landlock"
	}
	if f, err := (&options{}).SeccompFilter(); err != nil {
		d.SeccompError = err.Error()
	} else {
		d.Seccomp = f.Rules()
	}

	d.PrivateDirs = privateDirsLine()
	d.Verdict = doctorVerdict(&d)
	w := cmd.Root().Writer
	if cmd.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	fmt.Fprintf(w, "landjail doctor: %s\n\n", d.Verdict)
	fmt.Fprintf(w, "kernel:         %s\n", d.Kernel)
	if d.LandlockError != "" {
		fmt.Fprintf(w, "landlock ABI:   %d (%s)\n", d.LandlockABI, d.LandlockError)
	} else {
		fmt.Fprintf(w, "landlock ABI:   %d\n", d.LandlockABI)
	}
	for _, l := range d.Levels {
		mark := "no "
		if l.Available {
			mark = "yes"
		}
		fmt.Fprintf(w, "  %s  ABI %d  %s\n", mark, l.ABI, l.Feature)
	}
	fmt.Fprintf(w, "openat2:        %v (lookups use %s)\n", d.Openat2, d.OpenatMechanism)
	fmt.Fprintf(w, "seccomp mode:   %d (%s)\n", d.SeccompMode, seccompName(d.SeccompMode))
	fmt.Fprintf(w, "no_new_privs:   %v\n", d.NoNewPrivs)
	fmt.Fprintf(w, "namespaces:     %s\n", d.Namespaces)
	fmt.Fprintf(w, "pid namespace:  %s\n", d.PIDNamespace)
	fmt.Fprintf(w, "limits:         %s\n", limitsLine(d.Limits))
	fmt.Fprintf(w, "private dirs:   %s\n", d.PrivateDirs)
	fmt.Fprintf(w, "\nlandjail run here (default flags, workspace = current directory, plus a private TMPDIR):\n")
	if d.RunError != "" {
		fmt.Fprintf(w, "  cannot compile: %s\n", d.RunError)
		return nil
	}
	fmt.Fprintln(w, d.Run.String())
	fmt.Fprintf(w, "self-test:      %s\n", d.SelfTest)
	for _, m := range d.MountsInWorkspace {
		fmt.Fprintf(w, "note: mount point inside the workspace: %s (lookups cross it unless --no-xdev)\n", m)
	}
	if d.SeccompError != "" {
		fmt.Fprintf(w, "seccomp layer:  unavailable (%s)\n", d.SeccompError)
		return nil
	}
	fmt.Fprintln(w, "seccomp layer (on the child's thread):")
	for _, r := range d.Seccomp {
		args := r.Args
		if args != "" {
			args = "(" + args + ")"
		}
		fmt.Fprintf(w, "  %-14s %-22s %s\n      %s\n", r.Action, r.Syscall+args, r.Name, r.Reason)
	}
	return nil
}

// doctorVerdict is doctor's first line: which layer "landjail run" gets
// on this host and why, from what doctor found (the default run's
// report, the Landlock ABI, openat2, the self-test).
func doctorVerdict(d *doctorReport) string {
	if d.Run == nil {
		return fmt.Sprintf("cannot tell what a run here gets (%s)", d.RunError)
	}
	lookups := "openat2"
	if !d.Openat2 {
		lookups = "no openat2: lookups by O_NOFOLLOW walk"
	}
	var v string
	switch d.Run.Layer {
	case landlock.LayerNamespaces:
		who := "root, namespaces allowed"
		if d.Run.UserNamespace {
			who = "not root: a user namespace per command"
		}
		v = fmt.Sprintf("this host gives the namespace layer (%s, Landlock ABI %d, %s)", who, d.LandlockABI, lookups)
	case landlock.LayerLandlockOnly:
		v = fmt.Sprintf("this host gives Landlock only (Landlock ABI %d, %s; namespaces refused: %s)", d.LandlockABI, lookups, d.Run.LayerReason)
	default:
		err, hint := kernel.LandlockErr(), ""
		why := d.Run.LayerReason
		if err != nil {
			why, hint = unix.ErrnoName(errnoOf(err)), " "+landlockHint(err)
			if why == "" {
				why = err.Error()
			}
		}
		v = fmt.Sprintf("this host gives path-check only (no usable Landlock: %s; %s). Commands are checked before they run, not contained.%s", why, lookups, hint)
	}
	if strings.HasPrefix(d.SelfTest, "FAILED") {
		v += "; the Landlock self-test FAILED (see below)"
	}
	return v
}

// gcAge is the age past which doctor counts a private directory as
// landjail gc's to remove (gc's default --older-than).
const gcAge = 24 * time.Hour

// privateDirsLine is doctor's line on the private HOMEs and TMPDIRs kept
// between runs, which grow until landjail gc removes them.
func privateDirsLine() string {
	n, b, stale, staleB := privdirs.Survey(gcAge)
	s := fmt.Sprintf("%d private HOMEs and TMPDIRs (%s)", n, mib(b))
	if stale > 0 {
		s += fmt.Sprintf("; %d unused for over %s (%s): landjail gc removes them", stale, gcAge, mib(staleB))
	}
	return s
}

// landlockHint is the usual cause of the Landlock probe's error, as a
// sentence ("" when there is no hint).
func landlockHint(err error) string {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return "The kernel has no Landlock (before Linux 5.13, or built without it), or a seccomp profile hides it."
	case errors.Is(err, unix.EOPNOTSUPP):
		return "Landlock is built in but not enabled at boot: add landlock to the lsm= kernel parameter."
	case errors.Is(err, unix.EPERM):
		return "A seccomp profile refuses it, as a container runtime's can."
	}
	return ""
}

// errnoOf is the errno err wraps, 0 for none.
func errnoOf(err error) unix.Errno {
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// probeLookups reports whether openat2 works and the lookup mechanism
// package openat uses, in that order of cause and effect: openat switches
// to the O_NOFOLLOW walk only when a lookup fails with ENOSYS or EPERM, so
// reading openat.Mechanism before any lookup would name openat2 on a
// kernel without it. One real lookup (the root directory, through an
// openat.Root) makes the switch happen first; the probe runs after it, so
// "openat2: false" never comes with "lookups use openat2".
func probeLookups() (openat2 bool, mechanism string) {
	if r, err := openat.OpenRoot("/"); err == nil {
		_, _ = r.Stat(".") // an openat2 lookup, for its effect on Mechanism
		r.Close()
	}
	return kernel.Openat2Supported(), openat.Mechanism()
}

// defaultRunReport compiles what "landjail run" with default flags would
// enforce in the current directory (without creating a TMPDIR), and runs
// the canary self-test with it.
func defaultRunReport() (*landlock.Report, string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, "", err
	}
	ws, err := jail.New(wd)
	if err != nil {
		return nil, "", err
	}
	defer ws.Close()
	rs, err := landlock.Compile(ws, (&options{}).LandlockOptions(""))
	if err != nil {
		return nil, "", err
	}
	defer rs.Close()
	defer exec.Release(rs)
	selfTest := "skipped: Landlock not enforced here"
	if rs.Enforced() {
		selfTest = "ok: a confined child was denied a file outside the policy"
		if err := exec.SelfTest(ws, rs); err != nil {
			selfTest = "FAILED: " + err.Error()
		}
	}
	return rs.Report(), selfTest, nil
}

func seccompName(mode int) string {
	switch mode {
	case 0:
		return "none"
	case 1:
		return "strict"
	case 2:
		return "filter"
	}
	return "unknown"
}

// mountsBelow lists the mount points strictly below dir, from
// /proc/self/mountinfo (field 5, octal escapes decoded).
func mountsBelow(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := mountinfo.Unescape(f[4])
		if strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	return out
}

// limitsLine is doctor's line on resource limits: the mechanism and its
// controllers, or why none (and that --strict then refuses an explicit
// limit).
func limitsLine(p limits.Probe) string {
	switch p.Mechanism {
	case limits.CgroupV1, limits.CgroupV2:
		s := fmt.Sprintf("%s (%s)", p.Mechanism, strings.Join(p.Controllers, ", "))
		if p.Reason != "" {
			s += "; " + p.Reason
		}
		return s
	}
	return "not enforced: " + p.Reason + " (--pids/--memory/--cpus are reported as such; --strict refuses them)"
}
