package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/openat"
)

const doctorHelp = `Print what this kernel and process offer landjail: the kernel release, the
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
	d := doctorReport{
		Kernel:          kernel.Release(),
		LandlockABI:     kernel.LandlockABI(),
		Openat2:         kernel.Openat2Supported(),
		OpenatMechanism: openat.Mechanism(),
		SeccompMode:     kernel.SeccompMode(),
		NoNewPrivs:      kernel.NoNewPrivs(),
	}
	if err := kernel.LandlockErr(); err != nil {
		d.LandlockError = err.Error()
	}
	for _, l := range abiLevels {
		d.Levels = append(d.Levels, abiLevel{l.ABI, l.Feature, d.LandlockABI >= l.ABI})
	}
	if rep, err := defaultRunReport(); err != nil {
		d.RunError = err.Error()
	} else {
		d.Run = rep
	}

	w := cmd.Root().Writer
	if cmd.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
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
	fmt.Fprintf(w, "\nlandjail run here (default flags, workspace = current directory, plus a private TMPDIR):\n")
	if d.RunError != "" {
		fmt.Fprintf(w, "  cannot compile: %s\n", d.RunError)
		return nil
	}
	fmt.Fprintln(w, d.Run.String())
	return nil
}

// defaultRunReport compiles what "landjail run" with default flags would
// enforce in the current directory (without creating a TMPDIR).
func defaultRunReport() (*landlock.Report, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	ws, err := jail.New(wd)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	rs, err := landlock.Compile(ws, (&options{}).landlockOptions(""))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	return rs.Report(), nil
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
