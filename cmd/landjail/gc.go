package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/internal/privdirs"
)

const gcHelp = `Remove the private directories landjail keeps between runs once they are
unused: each workspace's private HOME ($XDG_CACHE_HOME/landjail/home/HASH,
with the command's caches: a Go module build can leave hundreds of MB), the
per-workspace TMPDIRs ($TMPDIR/landjail-UID-HASH, landjail-home-UID-HASH with
--user) and per-run TMPDIRs a killed run left behind ($TMPDIR/landjail-N).

A directory is removed only when it matches one of those names, is a real
directory owned by you, was last used longer ago than --older-than (a run
marks its directories used when it starts) and no live process uses it: no
running landjail recorded it ($XDG_CACHE_HOME/landjail/live) and no process
has it as its HOME or TMPDIR. Nothing is followed: a symbolic link a command
left in its HOME is removed as a link, never its target. Run with the same
XDG_CACHE_HOME and TMPDIR as the runs whose directories it should find.

` + exitHelp

func newGCCommand() *cli.Command {
	return &cli.Command{
		Name:        "gc",
		Usage:       "remove private HOMEs and TMPDIRs that no run has used for a while",
		Description: gcHelp,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "older-than", Value: 24 * time.Hour, Usage: "remove only directories unused for longer than `DURATION`"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be removed, remove nothing"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "also list the directories kept, and why"},
		},
		OnUsageError: onUsageError,
		Action:       gcAction,
	}
}

func gcAction(_ context.Context, cmd *cli.Command) error {
	if cmd.Args().Present() {
		return fmt.Errorf("gc: unexpected arguments %q", cmd.Args().Slice())
	}
	o := privdirs.Options{OlderThan: cmd.Duration("older-than"), DryRun: cmd.Bool("dry-run")}
	if o.OlderThan < 0 {
		return fmt.Errorf("gc: invalid --older-than %s", o.OlderThan)
	}
	dirs, err := privdirs.GC(o)
	if err != nil {
		return fmt.Errorf("gc: %w", err)
	}
	w, verbose := cmd.Root().Writer, cmd.Bool("verbose")
	var n, nKept, failed int
	var freed, kept int64
	for _, d := range dirs {
		age := d.Unused.Round(time.Minute)
		remove := d.Kind == privdirs.KindTrash || d.Unused >= o.OlderThan
		switch {
		case d.Removed:
			fmt.Fprintf(w, "removed: %s (%s, %s, unused for %s)\n", d.Path, d.Kind, mib(d.Bytes), age)
			n++
			freed += d.Bytes
		case d.Err != nil:
			var pe *fs.PathError
			why := d.Err
			if errors.As(d.Err, &pe) {
				why = pe.Err
			}
			fmt.Fprintf(cmd.Root().ErrWriter, "landjail: gc: cannot remove %s: %v\n", d.Path, why)
			failed++
		case d.InUseBy != 0:
			if verbose {
				fmt.Fprintf(w, "in use by pid %d: %s (%s, %s)\n", d.InUseBy, d.Path, d.Kind, mib(d.Bytes))
			}
			kept += d.Bytes
			nKept++
		case o.DryRun && remove:
			fmt.Fprintf(w, "would remove: %s (%s, %s, unused for %s)\n", d.Path, d.Kind, mib(d.Bytes), age)
			n++
			freed += d.Bytes
		default:
			if verbose {
				fmt.Fprintf(w, "used %s ago: %s (%s, %s)\n", age, d.Path, d.Kind, mib(d.Bytes))
			}
			kept += d.Bytes
			nKept++
		}
	}
	verb := "removed"
	if o.DryRun {
		verb = "would remove"
	}
	fmt.Fprintf(w, "landjail gc: %s %d directories (%s); kept %d in use or used within %s (%s)\n", verb, n, mib(freed), nKept, o.OlderThan, mib(kept))
	if failed > 0 {
		return fmt.Errorf("gc: %d directories could not be removed", failed)
	}
	return nil
}

// mib renders a byte count as MiB with one decimal.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
