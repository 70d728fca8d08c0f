// Package mcpserver serves the tools of package tools over the Model
// Context Protocol, with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): one workspace policy per
// server, the same for the file tools and the shell.
//
// Every tool call goes, in order, through: the argument guard
// (CheckToolArgs with the tool's schema, compiled once by New, and its
// access: nothing is forwarded when an argument is refused, nor when the
// schema is one the guard cannot follow completely), the client's roots (which
// can only narrow the policy, see New), and the tool itself, whose paths
// go through the Workspace and whose shell runs under the Landlock
// ruleset. A refusal is a tool result with IsError set and a message for
// the model, never a protocol error, so the model sees it and can correct
// itself; protocol errors are left for unknown tools and malformed
// requests.
//
// The landjail CLI serves it with "landjail mcp [policy flags]"; an agent
// client registers that like any local stdio MCP server, for example in
// its JSON configuration:
//
//	{"mcpServers": {"workspace": {"command": "landjail",
//	  "args": ["mcp", "--workspace", "/home/me/project", "--deny-secrets"]}}}
package mcpserver

//lint:file-ignore SA1019 the roots feature is deprecated from protocol 2026-07-28 (SEP-2577) but is what clients send today.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/landjail/landjail/tools"
)

// Options configures New. The zero value is usable.
type Options struct {
	// Name and Version are the server's implementation info; defaults
	// "landjail" and "dev".
	Name, Version string
	// Logger receives the SDK's log; nil means none.
	Logger *slog.Logger
	// IgnoreRoots makes the server never ask the client for its roots:
	// the operator's policy applies as is.
	IgnoreRoots bool
	// ProtocolVersions, if not empty, restricts the MCP protocol versions
	// the server speaks (mcp.ServerOptions.SupportedProtocolVersions).
	ProtocolVersions []string
}

// Instructions is what the server tells clients about itself.
const Instructions = "File and shell tools confined to one workspace by landjail. " +
	"Paths are relative to the workspace root. Read a file with read_file before " +
	"overwriting it with write_file or changing it with edit_file. The bash tool runs in " +
	"the workspace root under the same policy: files outside the workspace and its " +
	"allowed roots cannot be read or written."

// server is the state shared by the handlers: the operator's toolkit and
// each session's narrowed one.
type server struct {
	k    *tools.Toolkit
	opts Options
	mu   sync.Mutex
	// scoped caches, per session, the toolkit narrowed to the client's
	// roots; dropped when the client says its roots changed.
	scoped map[*mcp.ServerSession]*tools.Toolkit
}

// New returns an MCP server exposing every tool of k (k.Definitions: name,
// description, input schema). Serve it with (*mcp.Server).Run, for
// example over &mcp.StdioTransport{}; see Serve.
//
// Client roots only narrow: when the client supports roots
// (capabilities.roots) and lists at least one, each file: root is resolved
// under the operator's policy and kept only if it lies inside it (the
// others, and non-file: URIs, are ignored); every path argument must then
// resolve inside one of the kept roots as well as pass the policy, and
// default paths become the first kept root (tools.Toolkit.Narrow). If the
// client lists roots but none lies inside the policy, every path is
// refused. An empty list means the client chose none: the policy applies
// as is. The list is asked for at the first tool call of a session (as an
// input request, SEP-2322; the SDK turns it into a roots/list request for
// clients on older protocol versions) and again after each
// notifications/roots/list_changed. The bash tool runs in the first kept
// root but stays confined by the operator's Ruleset, not by the roots.
//
// New does not take ownership of k's Workspace or Ruleset.
func New(k *tools.Toolkit, opts *Options) *mcp.Server {
	s := &server{k: k, scoped: map[*mcp.ServerSession]*tools.Toolkit{}}
	if opts != nil {
		s.opts = *opts
	}
	impl := &mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version, Title: "landjail workspace tools"}
	if impl.Name == "" {
		impl.Name = "landjail"
	}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions:              Instructions,
		Logger:                    s.opts.Logger,
		RootsListChangedHandler:   s.rootsChanged,
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		SupportedProtocolVersions: s.opts.ProtocolVersions,
	})
	for _, d := range k.Definitions() {
		schema, err := CompileToolSchema(d.InputSchema)
		if err != nil {
			s.log("refusing every call of a tool whose schema the argument guard cannot follow", "tool", d.Name, "reason", err)
		}
		srv.AddTool(&mcp.Tool{
			Name:        d.Name,
			Description: d.Description,
			InputSchema: d.InputSchema,
			Annotations: annotations(d),
		}, s.handler(d, schema, err))
	}
	return srv
}

// Serve runs New(k, opts) over stdin/stdout until the client disconnects
// or ctx is done, through a GuardedTransport (a line that is not a
// JSON-RPC message is answered with an error, not the end of the
// session).
func Serve(ctx context.Context, k *tools.Toolkit, opts *Options) error {
	return New(k, opts).Run(ctx, &GuardedTransport{Reader: os.Stdin, Writer: os.Stdout})
}

func annotations(d tools.Definition) *mcp.ToolAnnotations {
	f := false
	t := true
	switch d.Name {
	case tools.ToolReadFile, tools.ToolListDirectory, tools.ToolGlob, tools.ToolGrep:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}
	case tools.ToolWriteFile, tools.ToolEditFile, tools.ToolPatch:
		return &mcp.ToolAnnotations{DestructiveHint: &t, IdempotentHint: d.Name == tools.ToolWriteFile, OpenWorldHint: &f}
	}
	return &mcp.ToolAnnotations{DestructiveHint: &t}
}

// handler serves tool d; schema is d's compiled input schema, or
// schemaErr why it could not be compiled (then every call is refused).
func (s *server) handler(d tools.Definition, schema *ToolSchema, schemaErr error) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.Params.Arguments
		if schemaErr != nil {
			return errorResult(fmt.Sprintf("%s: refused: %v", d.Name, schemaErr)), nil
		}
		// On a file tool's thread: the check opens what the tool would,
		// with no more permission (R30d-6).
		if err := tools.AsFileTool(func() error { return schema.Check(s.k.WS, args, d.Access) }); err != nil {
			return errorResult(fmt.Sprintf("%s: %v", d.Name, err)), nil
		}
		k, ask, err := s.toolkit(req)
		if err != nil {
			return errorResult(fmt.Sprintf("%s: %v", d.Name, err)), nil
		}
		if ask != nil {
			return ask, nil
		}
		res, err := k.Call(ctx, d.Name, args)
		if err != nil {
			return errorResult(err.Error()), nil
		}
		failed := false
		if f, ok := res.(tools.Failer); ok {
			failed = f.Failed()
		}
		return &mcp.CallToolResult{IsError: failed, Content: []mcp.Content{&mcp.TextContent{Text: res.String()}}}, nil
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// rootsInput is the id of the roots/list input request.
const rootsInput = "landjail-roots"

// toolkit returns the toolkit for the call's session: the operator's, or
// the one narrowed to the client's roots. When the roots are not known
// yet it returns ask, an input-required result asking the client for
// them (SEP-2322 multi round-trip; for clients on older protocol versions
// the SDK sends roots/list itself and calls the handler again with the
// answer). A roots answer that is not a roots/list result is refused.
func (s *server) toolkit(req *mcp.CallToolRequest) (k *tools.Toolkit, ask *mcp.CallToolResult, err error) {
	ss := req.Session
	if s.opts.IgnoreRoots || ss == nil {
		return s.k, nil, nil
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.RootsV2 == nil {
		return s.k, nil, nil
	}
	if resp, ok := req.Params.InputResponses[rootsInput]; ok {
		lr, ok := resp.(*mcp.ListRootsResult)
		if !ok || lr == nil {
			return nil, nil, fmt.Errorf("refused: the answer to the roots request is not a list of roots (%T)", resp)
		}
		k = s.narrow(lr.Roots)
		s.mu.Lock()
		s.scoped[ss] = k
		s.mu.Unlock()
		return k, nil, nil
	}
	s.mu.Lock()
	k, ok := s.scoped[ss]
	s.mu.Unlock()
	if ok {
		return k, nil, nil
	}
	return nil, &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{rootsInput: &mcp.ListRootsParams{}}}, nil
}

// narrow applies the client's roots to the operator's toolkit.
func (s *server) narrow(roots []*mcp.Root) *tools.Toolkit {
	if len(roots) == 0 {
		return s.k
	}
	var paths []string
	for _, r := range roots {
		p, err := rootPath(r.URI)
		if err != nil {
			s.log("ignoring client root", "uri", r.URI, "reason", err)
			continue
		}
		paths = append(paths, p)
	}
	k, skipped := s.k.Narrow(paths...)
	for _, err := range skipped {
		s.log("ignoring client root", "reason", err)
	}
	return k
}

// rootPath returns the local path of a file: root URI.
func rootPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if !strings.EqualFold(u.Scheme, "file") {
		return "", errors.New("not a file: URI")
	}
	if u.Host != "" && !strings.EqualFold(u.Host, "localhost") {
		return "", errors.New("file: URI names another host")
	}
	if u.Path == "" || !strings.HasPrefix(u.Path, "/") {
		return "", errors.New("file: URI without an absolute path")
	}
	return u.Path, nil
}

func (s *server) rootsChanged(_ context.Context, req *mcp.RootsListChangedRequest) {
	s.mu.Lock()
	delete(s.scoped, req.Session)
	s.mu.Unlock()
}

func (s *server) log(msg string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Info(msg, args...)
	}
}
