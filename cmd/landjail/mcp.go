package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/selfbin"
)

const mcpHelp = `Serve the workspace tools (read_file, write_file, edit_file, list_directory,
glob, grep, bash) over the Model Context Protocol on stdin/stdout, with the same
policy flags and --config file as run. Every argument is passed to the
landjail-mcp binary, which landjail execs from its own directory only (never
from PATH: it runs unconfined; a file or directory other users can write is
refused): the MCP SDK lives there so that it does not slow down every
"landjail run".
"landjail mcp --help" shows landjail-mcp's flags, among them --max-file-size
(default 10MiB: read_file and edit_file refuse larger files, grep skips them).

Install both, from a checkout:  CGO_ENABLED=0 go install -ldflags='-s -w' ./cmd/...`

// newMCPCommand returns the "mcp" subcommand, which execs landjail-mcp.
func newMCPCommand() *cli.Command {
	return &cli.Command{
		Name:            "mcp",
		Usage:           "serve the jailed file and shell tools over MCP (stdio); runs landjail-mcp",
		Description:     mcpHelp,
		SkipFlagParsing: true,
		Action: func(_ context.Context, cmd *cli.Command) error {
			bin, err := findMCP()
			if err != nil {
				return err
			}
			// The checked descriptor is executed, not the name: a file
			// renamed over it since the check is not what runs.
			err = unix.Exec(bin.Path(), append([]string{"landjail-mcp"}, cmd.Args().Slice()...), os.Environ())
			return fmt.Errorf("mcp: execve %s: %w", bin.Source(), err)
		},
	}
}

// findMCP pins landjail-mcp next to the running executable
// (internal/selfbin: owner root or the caller, not writable by others).
func findMCP() (*selfbin.Binary, error) {
	p, err := selfbin.Next("landjail-mcp")
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	b, err := selfbin.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mcp: the landjail-mcp binary is not next to landjail (%s; go install ./cmd/... in a checkout of landjail installs both)", p)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	return b, nil
}
