package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v3"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/mcpserver"
	"github.com/landjail/landjail/tools"
)

const mcpHelp = `Serve the workspace tools (read_file, write_file, edit_file, list_directory,
glob, grep, bash) over the Model Context Protocol on stdin/stdout, for an agent
client to start as a local MCP server. One policy per server, from the same
flags and --config file as run: the file tools go through it in landjail, and
bash runs confined by Landlock exactly as "landjail run" would run it (system
preset, private TMPDIR, TCP denied but for --connect-tcp/--bind-tcp).

Every tool call is checked before it is dispatched (path arguments must pass the
policy); refusals come back as tool errors the model can read. Writing over an
existing file needs a read_file of its current version first. The client's
roots, if it lists any, can only narrow the policy (--ignore-roots: not asked).
Nothing but MCP messages is written to stdout; warnings go to stderr.

Register it in a client's MCP configuration, for example:

   {"mcpServers": {"workspace": {"command": "landjail",
     "args": ["mcp", "--workspace", "/home/me/project", "--deny-secrets"]}}}

` + exitHelp

// mcpCommand returns the "mcp" subcommand.
func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:        "mcp",
		Usage:       "serve the jailed file and shell tools over MCP (stdio)",
		Description: mcpHelp,
		Flags: append(policyFlags(),
			&cli.IntSliceFlag{Name: flagConnectTCP, Usage: "allow bash's commands TCP connect to `PORT` (repeatable; Landlock ABI 4)"},
			&cli.IntSliceFlag{Name: flagBindTCP, Usage: "allow bash's commands TCP bind on `PORT` (repeatable; Landlock ABI 4)"},
			&cli.StringFlag{Name: flagNet, Usage: "`MODE` \"host\" leaves the network unrestricted for bash"},
			&cli.StringSliceFlag{Name: flagEnv, Usage: "pass `NAME` from the environment to bash, or set NAME=VALUE (repeatable)"},
			&cli.DurationFlag{Name: flagTimeout, Usage: "bash's default timeout per command (default 2m; a call may ask for up to 10m)"},
			&cli.BoolFlag{Name: flagStrict, Usage: "refuse to start if anything requested cannot be enforced"},
			&cli.BoolFlag{Name: flagBestEffort, Usage: "drop what the kernel cannot enforce, with a warning on stderr (default)"},
			&cli.BoolFlag{Name: flagNoSystem, Usage: "do not add the system preset nor a private TMPDIR (bash will hardly run)"},
			&cli.BoolFlag{Name: "ignore-roots", Usage: "never ask the client for its roots"},
		),
		OnUsageError:              onUsageError,
		DisableSliceFlagSeparator: true,
		Action:                    mcpAction,
	}
}

func mcpAction(ctx context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return fmt.Errorf("mcp: unexpected arguments %q (the server talks over stdin/stdout)", cmd.Args().Slice())
	}
	o, err := loadOptions(cmd)
	if err != nil {
		return err
	}
	if o.User != "" || o.Report != "" {
		return errors.New("mcp: the user and report settings apply to run only")
	}
	// The policy exactly as run builds it, plus the read tracker the
	// write tools need.
	tracker := jail.NewReadTracker()
	ws, err := o.workspace(jail.WithReadTracker(tracker))
	if err != nil {
		return err
	}
	defer ws.Close()

	env := exec.DefaultEnv(ws, o.Env)
	tmp := ""
	if !o.NoSystem && !hasEnv(env, "TMPDIR") {
		if tmp, err = os.MkdirTemp("", "landjail-mcp-"); err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
	}
	rs, err := landlock.Compile(ws, o.landlockOptions(tmp))
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	defer rs.Close()
	stderr := cmd.Root().ErrWriter
	warnDropped(stderr, rs.Report())

	filter, err := o.seccompFilter()
	if err != nil {
		if o.Strict {
			return fmt.Errorf("mcp: seccomp: %w", err)
		}
		fmt.Fprintf(cmd.Root().ErrWriter, "landjail: warning: best effort dropped the seccomp layer: %v\n", err)
	}
	k := &tools.Toolkit{WS: ws, Ruleset: rs, Tracker: tracker, Env: env, Seccomp: filter}
	k.Limits.BashTimeout = time.Duration(o.Timeout)
	srv := mcpserver.New(k, &mcpserver.Options{Name: "landjail", IgnoreRoots: cmd.Bool("ignore-roots")})
	t := &mcp.IOTransport{Reader: io.NopCloser(cmd.Root().Reader), Writer: nopWriteCloser{cmd.Root().Writer}}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}

// nopWriteCloser keeps the caller's stdout open when the session ends.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
