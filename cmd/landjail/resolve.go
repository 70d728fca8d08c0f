package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/landjail/landjail/internal/cliopts"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
)

const resolveHelp = `Resolve each PATH under the policy (relative paths are relative to the
workspace root) and print one line per PATH, in order:

   ok<TAB>CANONICAL
   error<TAB>PATH<TAB>REASON<TAB>MESSAGE

REASON is one of outside, denied, absolute, invalid, read-only,
not-executable, not-found, loop, not-dir, permission, error. A PATH or
CANONICAL containing a control character (tab, newline, ...) or starting
with a double quote is
printed as a Go-quoted string. With --json, one JSON object per line:
{"path","ok","canonical"} or {"path","ok":false,"reason","error"}.

The policy is run's: the workspace, the --ro/--rox/--rw directories and,
unless --no-system, the directories of the system preset (/usr, /bin, /lib*
read and execute, /etc/ssl/certs, ... read-only). Single files (of --ro
and of the preset) are granted to run's children by Landlock only and are
refused here.

--access read|write|execute also applies the policy's mode (a write into a
--ro root is refused as read-only); without it only resolution is checked.

EXIT STATUS:
   0    every PATH resolved
   1    at least one PATH was refused
   125  landjail's own error: bad flag, bad config, bad policy`

func newResolveCommand() *cli.Command {
	return &cli.Command{
		Name:        "resolve",
		Usage:       "print the canonical path of each PATH under the policy, or why it is refused",
		ArgsUsage:   "PATH...",
		Description: resolveHelp,
		Flags: append(cliopts.PolicyFlags(),
			&cli.BoolFlag{Name: "no-system", Usage: "leave out the system preset (/usr, /bin, /lib*, ...), as run --no-system does"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines"},
			&cli.StringFlag{Name: "access", Usage: "also check `ACCESS` (read, write or execute) against the roots' modes"},
		),
		OnUsageError: onUsageError,
		// A path or NAME=VALUE may hold a comma.
		DisableSliceFlagSeparator: true,
		Action:                    resolveAction,
	}
}

// resolveResult is one output line of resolve --json.
type resolveResult struct {
	Path      string `json:"path"`
	OK        bool   `json:"ok"`
	Canonical string `json:"canonical,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
}

func resolveAction(_ context.Context, cmd *cli.Command) error {
	paths := cmd.Args().Slice()
	if len(paths) == 0 {
		return errors.New("resolve: no PATH given (see landjail resolve --help)")
	}
	var access jail.Access
	switch a := cmd.String("access"); a {
	case "":
	case "read":
		access = jail.Read
	case "write":
		access = jail.Write
	case "execute":
		access = jail.Execute
	default:
		return fmt.Errorf("resolve: invalid --access %q (want read, write or execute)", a)
	}
	o, err := cliopts.Load(cmd)
	if err != nil {
		return err
	}
	// The same view as run's child: the policy plus the system preset.
	ws, err := o.Policy(append(o.SystemRoots(), o.PresetRoots()...)...)
	if err != nil {
		return err
	}
	defer ws.Close()
	// And what the child's rules deny by way of symbolic links, found by
	// the same walk of the policy's roots (red team round 9, R9-3).
	if pws, err := o.Policy(); err == nil {
		denied, readOnly, err := landlock.DeniedPaths(pws, o.WalkLimit)
		pws.Close()
		if err != nil {
			return fmt.Errorf("resolve: %w", err)
		}
		ws.DenyPaths(denied, readOnly)
	}

	w := cmd.Root().Writer
	enc := json.NewEncoder(w)
	refused := false
	for _, p := range paths {
		var canon string
		if access != 0 {
			canon, err = ws.Check(p, access)
		} else {
			canon, err = ws.Resolve(p)
		}
		r := resolveResult{Path: p, OK: err == nil, Canonical: canon}
		if err != nil {
			refused = true
			r.Canonical = ""
			r.Reason, r.Error = reasonOf(err), causeOf(err).Error()
		}
		switch {
		case cmd.Bool("json"):
			if err := enc.Encode(r); err != nil {
				return err
			}
		case r.OK:
			fmt.Fprintf(w, "ok\t%s\n", field(r.Canonical))
		default:
			fmt.Fprintf(w, "error\t%s\t%s\t%s\n", field(r.Path), r.Reason, field(r.Error))
		}
	}
	if refused {
		return exitStatus(exitRefused)
	}
	return nil
}

// reasonOf names the refusal with a stable word for scripts.
func reasonOf(err error) string {
	for _, r := range []struct {
		err  error
		name string
	}{
		{jail.ErrOutsideWorkspace, "outside"},
		{jail.ErrDenied, "denied"},
		{jail.ErrAbsolutePath, "absolute"},
		{jail.ErrInvalidPath, "invalid"},
		{jail.ErrReadOnly, "read-only"},
		{jail.ErrNotExecutable, "not-executable"},
		{unix.ENOENT, "not-found"},
		{unix.ELOOP, "loop"},
		{unix.ENOTDIR, "not-dir"},
		{unix.EACCES, "permission"},
	} {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return "error"
}

// causeOf strips the *fs.PathError wrapper: the path is printed already.
func causeOf(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// field returns s, Go-quoted if it holds a control character (a tab or a
// newline would break the line format).
func field(s string) string {
	if strings.HasPrefix(s, `"`) || strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}
