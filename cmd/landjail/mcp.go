package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"

	"github.com/urfave/cli/v3"
	"golang.org/x/sys/unix"
)

const mcpHelp = `Serve the workspace tools (read_file, write_file, edit_file, list_directory,
glob, grep, bash) over the Model Context Protocol on stdin/stdout, with the same
policy flags and --config file as run. Every argument is passed to the
landjail-mcp binary, which landjail execs from its own directory or from PATH:
the MCP SDK lives there so that it does not slow down every "landjail run".
"landjail mcp --help" shows landjail-mcp's flags, among them --max-file-size
(default 10MiB: read_file and edit_file refuse larger files, grep skips them).

Install both:  go install github.com/landjail/landjail/cmd/...@latest`

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
			err = unix.Exec(bin, append([]string{bin}, cmd.Args().Slice()...), os.Environ())
			return fmt.Errorf("mcp: execve %s: %w", bin, err)
		},
	}
}

// findMCP looks for landjail-mcp next to the running executable, then in
// PATH.
func findMCP() (string, error) {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "landjail-mcp")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := osexec.LookPath("landjail-mcp"); err == nil {
		return p, nil
	}
	return "", errors.New("mcp: the landjail-mcp binary is neither next to landjail nor in PATH (go install github.com/landjail/landjail/cmd/landjail-mcp@latest, or go run ./cmd/landjail-mcp)")
}
