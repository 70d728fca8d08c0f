// Package tools is the set of file and shell tools every coding agent
// exposes (the usual tool table: read_file, write_file, edit_file,
// list_directory, glob, grep, bash, patch), each going through one
// *jail.Workspace, the single choke point for the paths an agent supplies,
// and each returning text shaped for a language model: line numbers,
// byte and line counts, truncation markers, and errors that say what was
// refused and what to do instead.
//
// No function of this package calls os.* on a path the agent supplied:
// files are opened, listed, stat'ed and written only through the
// Workspace (Resolve, deny patterns, openat2), and bash runs through
// package exec, confined by the Landlock ruleset compiled from the same
// policy, so the file tools and the shell cannot disagree about what is
// allowed.
//
// The read-before-write protocol (jail.ReadTracker) needs a
// Workspace built with jail.WithReadTracker: read_file marks a file read,
// write_file, edit_file and patch refuse to overwrite an existing file that was
// not read (jail.ErrNotRead) or that changed on disk since
// (jail.ErrStale). Without a tracker, writes are not checked.
//
// Does not protect against: what the Workspace and package exec do not
// (see their docs); a file changed between edit_file's read and its
// atomic write is caught (ErrStale), a change during grep is not.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/landjail/landjail/exec"
	"github.com/landjail/landjail/internal/cpushare"
	"github.com/landjail/landjail/internal/threadcaps"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/seccomp"
	"golang.org/x/sys/unix"
)

// Toolkit holds one policy and serves the tools. Build it as a literal;
// WS is required. A Toolkit holds no mutable state and is safe for
// concurrent use; it does not own WS, Ruleset or Tracker (the caller
// closes them).
type Toolkit struct {
	// WS is the policy every path goes through.
	WS *jail.Workspace
	// Ruleset confines bash's children (compile it with
	// landlock.Options{System: true} so bash and the usual tools can
	// run). Without Landlock (a Ruleset at level "path-check only", or
	// nil) package exec checks the command's paths before it starts and
	// does not confine it, and the result says so; with nil, bash itself
	// (/usr/bin/bash) is outside the policy, so every command is refused.
	Ruleset *landlock.Ruleset
	// Compile, when not nil, replaces Ruleset for each bash call: it is
	// called before the call and its Ruleset used for that call only
	// (then released and closed). Carve-outs are computed when a Ruleset
	// is compiled, so a long-lived server whose Ruleset was compiled at
	// its start would otherwise let bash read a secret (a .env, a key)
	// created after it started; landjail-mcp sets it to
	// landlock.Compile of the same Workspace and options. An error fails
	// the call (fail closed).
	Compile func() (*landlock.Ruleset, error)
	// Replan, when not nil, plans the policy again for the file tools
	// and returns the planning's error (landjail-mcp: a Compile whose
	// Ruleset is closed unused; it refreshes the link verdicts the file
	// tools check, jail.Workspace.DenyPaths). A file tool's call runs it
	// first when a bash call's command ran since the last plan that
	// succeeded (Bash's own plans count), runs now, or the last plan
	// failed; while it fails, every file tool's call is refused with its
	// error (ErrPolicyRefused), fail closed. A bash command can make the
	// workspace one its policy cannot be carved for (a denied name
	// linked through /proc/self/cwd: Compile refuses it), and the file
	// tools, which judge the link from the server's own working
	// directory, read what the user then writes as that name (red team
	// round 26, R26e-5). Replan runs once for the calls that wait for
	// it (one at a time per Workspace); it costs one Compile (the walk
	// of the roots: BENCHMARKS.md), paid by the first file tool call
	// after each bash call, and by every one while a bash call runs.
	Replan func() error
	// Leftovers, when not nil with Replan, reports whether a process a
	// bash call started may still run after the call ended (landjail-mcp:
	// a live child of the server, a subreaper, that is not one of its
	// own helpers: reaper.Leftovers). While it does, every file tool call
	// plans again, as while a bash call runs: such a process can plant a
	// link after the plan that followed its call (red team round 27,
	// R27d-2: `setsid sh -c "sleep 3; ln -s /proc/self/cwd/notes.txt
	// .env" &` as uid 65534 under --no-namespaces, with no PID namespace
	// or control group to end it, and read_file notes.txt answered what
	// the user wrote as .env). An error is taken as true.
	Leftovers func() (bool, error)
	// AfterWrite, when not nil, runs after each call of a file tool that
	// changes the workspace (write_file, edit_file, patch), whatever its
	// outcome; the lines it returns (what it did) follow a successful
	// call's result. landjail-mcp sweeps agent configuration there
	// (--protect-agent-config): the file tools refuse protected names,
	// but a bare repository's layout (DIR/HEAD, objects/, refs/ and
	// DIR/config with core.fsmonitor) is made of ordinary names, and in
	// a directory made during the session no watch saw it: the user's
	// git in DIR ran it until the next bash call swept (red team round
	// 27, R27e-1).
	AfterWrite func() []string
	// Tracker, when it is the tracker WS was built with
	// (jail.WithReadTracker), lets grep leave the tracker as it was:
	// without it every file grep opens counts as read, so write_file
	// could overwrite a file the model only grepped.
	Tracker *jail.ReadTracker
	// Seccomp, when not nil, is installed with bash's Landlock domain
	// (exec.Cmd.Seccomp): the layer for what Landlock does not restrict.
	Seccomp *seccomp.Filter
	// NoPIDNamespace keeps bash in the host's PID namespace where the
	// namespace layer would give each call its own
	// (exec.Cmd.NoPIDNamespace).
	NoPIDNamespace bool
	// Env is bash's environment; nil means exec.DefaultEnv(WS, nil).
	Env []string
	// Network, when not nil, is called for each bash call with the
	// call's Ruleset and Cmd (Env set) before it starts: it may change
	// the Cmd's Env and InNamespace (landjail-mcp --allow-domain wires
	// its proxy so). It returns started, called once the command started,
	// and finish, called after it was reaped (or when it did not start),
	// whose lines go into the result (BashResult.Network). An error fails
	// the call.
	Network func(rs *landlock.Ruleset, c *exec.Cmd) (started func() error, finish func() []string, err error)
	// Session, when not nil, ends every call's context when it ends
	// (landjail-mcp: the context its SIGTERM cancels). The MCP SDK
	// derives a call's context from its request alone, and waits for
	// the calls in progress before the session closes: a SIGTERM during
	// a long grep or a bash call's planning was not seen by the call
	// (red team round 25, R25d-4: still running 150 s after SIGTERM).
	Session context.Context
	// Discard, when not nil, is called instead of Network for a Ruleset
	// Compile returned after its call was canceled (the call returned
	// ErrCanceled while it was planned): it frees what Compile prepared
	// for Network (landjail-mcp --allow-domain: the call's proxy). The
	// Ruleset is closed after it.
	Discard func(rs *landlock.Ruleset)
	// Limits caps the output of the tools; zero fields take the
	// defaults (DefaultLimits).
	Limits Limits

	// scoped is set by Narrow; then every path must resolve inside one
	// of scope (canonical absolute directories), possibly none.
	scoped bool
	scope  []string
}

// Limits caps what the tools return, so one call cannot flood a model's
// context. Byte counts are bytes of UTF-8 text.
type Limits struct {
	// ReadLines is read_file's default and maximum number of lines.
	ReadLines int
	// LineBytes truncates longer lines in read_file and grep output.
	LineBytes int
	// ReadBytes caps read_file's output text.
	ReadBytes int
	// ListEntries caps list_directory: the entries that sort first are
	// shown, the rest counted, with at most ListEntries held at once
	// (jail.Workspace.ReadDirN).
	ListEntries int
	// DirEntries is the most entries glob and grep read of one directory
	// (beyond what deny patterns leave out): a larger directory is not
	// walked, and the result counts it (SkippedLargeDirs), so a command
	// that fills a directory with millions of names cannot make the
	// server hold them all (red team round 25, R25c-10).
	DirEntries int
	// WalkOps bounds the directory reads and stats of one glob or grep
	// call (its pattern, braces and "**" included), each charged one
	// unit per component of its path (each resolves its path from the
	// root): a walk that needs more stops and says its result is cut.
	// Three "**" and 256 alternatives on a chain of 41 directories took
	// 347 s and went on after the client canceled (red team round 26,
	// R26a-8, R26e-6); 4,000,000 units take seconds, and walk a tree of
	// 100,000 directories 8 deep with 4 alternatives. A call whose
	// context ends (Call) stops at its next read, stat or open.
	WalkOps int
	// WalkTime bounds one glob or grep call's walk in time (wall clock,
	// so its CPU too): an op at depth d costs more than d units (each
	// prefix is resolved and checked), so WalkOps alone let a chain of
	// 1,500 directories take 125 s of the server's CPU in one call (red
	// team round 27, R27d-9). Past it the walk stops and says its result
	// is cut, as past WalkOps.
	WalkTime time.Duration
	// GlobResults caps glob.
	GlobResults int
	// GrepMatches caps grep's matching lines.
	GrepMatches int
	// FileBytes caps the size of a file read_file or edit_file reads,
	// and of the content write_file writes (bytes): a larger file is refused with ErrFileTooLarge before any
	// of it is read (fstat on the opened file), and the read itself stops
	// at FileBytes+1 bytes, so a file that grows, or reports size 0 (a
	// /proc file), cannot make the tool allocate more. edit_file holds
	// about three times FileBytes at once (old content, new content, the
	// write). landjail-mcp sets it with --max-file-size.
	FileBytes int64
	// GrepFileBytes: grep skips files whose size is larger (and says how
	// many), and stops reading a file at this many bytes when it grew
	// past it (or reported size 0) while read (and says how many were
	// cut). landjail-mcp sets it with --max-file-size.
	GrepFileBytes int64
	// BashOutput caps bash's combined output (head and tail are kept).
	BashOutput int
	// BashNotes caps the lines landjail adds to a bash result
	// (BashResult.Network: the proxy's refusals, --explain's, the
	// limits', the sweep's), in bytes with their "[landjail: ]" frames:
	// the first and last lines that fit in half of it each are kept,
	// each cut at 512 bytes, and one line counts the rest. The command
	// chooses most of them: 1,024 refused 250-byte names added 310 KB
	// to a result whose output was capped at 30 KB (red team round 26,
	// R26d-5).
	BashNotes int
	// BashTimeout is bash's default timeout; BashMaxTimeout the largest
	// a call may ask for.
	BashTimeout, BashMaxTimeout time.Duration
	// BashConcurrent caps how many bash calls run at once for one
	// Workspace (every Toolkit of that Workspace, Narrow's included,
	// shares the cap; the first call sets its size). A call beyond it
	// waits for a slot, and fails with its context's error if the call
	// is cancelled first; the wait does not count toward its timeout.
	// An agent (or an injected prompt) cannot start hundreds of confined
	// processes at once. landjail-mcp sets it with --max-concurrent-bash.
	BashConcurrent int
}

// DefaultLimits are the limits used for zero fields of Toolkit.Limits.
// ReadLines 2000 and LineBytes 2000 follow the usual agent read tools;
// BashOutput 30000 bytes is about 8k tokens, BashNotes 4000 about 1k. FileBytes and GrepFileBytes
// 10 MiB: far beyond what a model can use from one call (read_file
// returns at most 256 KiB), small enough that edit_file's copies stay
// well under 100 MiB.
var DefaultLimits = Limits{
	ReadLines:      2000,
	LineBytes:      2000,
	ReadBytes:      256 << 10,
	ListEntries:    1000,
	DirEntries:     100000,
	WalkOps:        4000000,
	WalkTime:       10 * time.Second,
	GlobResults:    500,
	GrepMatches:    200,
	FileBytes:      10 << 20,
	GrepFileBytes:  10 << 20,
	BashOutput:     30000,
	BashNotes:      4000,
	BashTimeout:    2 * time.Minute,
	BashMaxTimeout: 10 * time.Minute,
	BashConcurrent: 4,
}

func (k *Toolkit) limits() Limits {
	l := k.Limits
	d := DefaultLimits
	pick := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	pick(&l.ReadLines, d.ReadLines)
	pick(&l.LineBytes, d.LineBytes)
	pick(&l.ReadBytes, d.ReadBytes)
	pick(&l.ListEntries, d.ListEntries)
	pick(&l.DirEntries, d.DirEntries)
	pick(&l.WalkOps, d.WalkOps)
	if l.WalkTime <= 0 {
		l.WalkTime = d.WalkTime
	}
	pick(&l.GlobResults, d.GlobResults)
	pick(&l.GrepMatches, d.GrepMatches)
	pick(&l.BashOutput, d.BashOutput)
	pick(&l.BashNotes, d.BashNotes)
	pick(&l.BashConcurrent, d.BashConcurrent)
	if l.FileBytes <= 0 {
		l.FileBytes = d.FileBytes
	}
	if l.GrepFileBytes <= 0 {
		l.GrepFileBytes = d.GrepFileBytes
	}
	if l.BashTimeout <= 0 {
		l.BashTimeout = d.BashTimeout
	}
	if l.BashMaxTimeout <= 0 {
		l.BashMaxTimeout = d.BashMaxTimeout
	}
	return l
}

// Narrow returns a copy of k whose tools accept only paths that resolve
// (under k's policy) inside one of roots; the policy itself is unchanged,
// so Narrow can never widen it. Each root must resolve inside the policy
// and be a directory; the others are left out and returned in skipped
// (each an *Error saying why). If no root is left, the copy refuses every
// path (ErrOutsideScope). Default paths ("" for list_directory, glob,
// grep) become the first root, and bash's working directory too; bash's
// children stay confined by the operator's Ruleset, not by roots.
//
// The scope check resolves the path and the tool then operates on the
// symlink-free canonical name, so a symlink swapped in between makes the
// operation fail rather than leave the scope.
func (k *Toolkit) Narrow(roots ...string) (narrowed *Toolkit, skipped []error) {
	c := *k
	c.scoped = true
	c.scope = nil
	for _, r := range roots {
		canon, err := k.WS.Resolve(r)
		if err == nil && k.scoped && !k.inScope(canon) {
			err = ErrOutsideScope
		}
		if err == nil {
			var fi fs.FileInfo
			if fi, err = k.WS.Stat(k.wsName(canon, r)); err == nil && !fi.IsDir() {
				err = fmt.Errorf("%w: root is not a directory", ErrInvalidArgs)
			}
		}
		if err != nil {
			skipped = append(skipped, k.fail("roots", r, err))
			continue
		}
		c.scope = append(c.scope, canon)
	}
	return &c, skipped
}

// Scope returns the roots the Toolkit was narrowed to (canonical absolute
// paths) and whether it was narrowed at all.
func (k *Toolkit) Scope() ([]string, bool) {
	return append([]string(nil), k.scope...), k.scoped
}

func (k *Toolkit) inScope(canon string) bool {
	for _, r := range k.scope {
		if within(canon, r) {
			return true
		}
	}
	return false
}

// within reports whether p is dir or below it, on whole components.
func within(p, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// path checks an agent-supplied path against the scope (if any) and
// returns the name to hand to the Workspace: unsafePath itself when the
// Toolkit is not narrowed, else the canonical name (relative to the
// workspace root when below it). An empty unsafePath means dflt ("" for
// tools where the path is required).
func (k *Toolkit) path(unsafePath, dflt string) (string, error) {
	if unsafePath == "" {
		if dflt == "" {
			return "", fmt.Errorf("%w: path is required", ErrInvalidArgs)
		}
		if k.scoped && len(k.scope) > 0 {
			return k.wsName(k.scope[0], dflt), nil
		}
		unsafePath = dflt
	}
	if !k.scoped {
		return unsafePath, nil
	}
	canon, err := k.WS.Resolve(unsafePath)
	if err != nil {
		return "", err
	}
	if !k.inScope(canon) {
		return "", ErrOutsideScope
	}
	return k.wsName(canon, unsafePath), nil
}

// wsName names the canonical path canon for the Workspace: relative to
// the workspace root when below it (so RejectAbsolute policies accept
// it), else canon, or orig when the policy refuses absolute paths.
func (k *Toolkit) wsName(canon, orig string) string {
	root := k.WS.Root()
	if within(canon, root) {
		rel, err := filepath.Rel(root, canon)
		if err == nil {
			return rel
		}
	}
	if k.WS.RejectsAbsolute() {
		return orig
	}
	return canon
}

// Definition describes one tool for a framework: its name, a description
// for the model, its JSON Schema (draft 2020-12, type "object") and what
// kind of access it needs (for argument guards such as mcpserver.CheckToolArgs:
// jail.Read, jail.Write or jail.Execute). PathArgs names the arguments
// that are paths.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Access      jail.Access     `json:"-"`
	PathArgs    []string        `json:"-"`
}

// Result is what a tool returns on success: a typed value whose String
// is the text for the model.
type Result interface {
	String() string
}

// Failer is a Result that can report that the tool ran but did not
// complete its job for a reason of its own (BashResult: landjail killed
// the command at its timeout). An MCP server marks such a result as a
// tool error (CallToolResult.isError, MCP 2025-06-18 "Tools: error
// handling") with the same text; a command's own failure (a non-zero
// exit code) is not one.
type Failer interface {
	Result
	Failed() bool
}

// Tool names.
const (
	ToolReadFile      = "read_file"
	ToolWriteFile     = "write_file"
	ToolEditFile      = "edit_file"
	ToolListDirectory = "list_directory"
	ToolGlob          = "glob"
	ToolGrep          = "grep"
	ToolBash          = "bash"
	ToolPatch         = "patch"
)

// Definitions returns the tools' definitions, in a fixed order. The
// slice and its schemas are fresh copies.
func (k *Toolkit) Definitions() []Definition {
	defs := make([]Definition, len(definitions))
	for i, d := range definitions {
		d.InputSchema = append(json.RawMessage(nil), d.InputSchema...)
		d.PathArgs = append([]string(nil), d.PathArgs...)
		defs[i] = d
	}
	return defs
}

// Call decodes args (a JSON object; empty means {}) for the tool named
// name and runs it. Unknown fields are an error (ErrInvalidArgs), so a
// misspelt argument is reported rather than ignored. Errors are *Error.
// The file tools run under cpushare.Exempt: they work for the agent, not
// for a command, so their CPU is not charged to the --cpus share of the
// bash calls running meanwhile (red team round 24, R24c-1: a grep's
// 1.3 s held a call, and every call, for 65 s); Bash exempts its own
// planning. A file tool's call returns ErrCanceled as soon as ctx (or
// Session) ends, whether or not the tool has finished. With Replan, a
// file tool's call may plan the policy first, and is refused
// (ErrPolicyRefused) while that fails (Toolkit.Replan); the methods
// called directly (ReadFile, Grep, ...) do not plan.
func (k *Toolkit) Call(ctx context.Context, name string, args json.RawMessage) (res Result, err error) {
	run, ok := callers[name]
	if !ok {
		return nil, k.fail(name, "", fmt.Errorf("%w %q", ErrUnknownTool, name))
	}
	if k.Session != nil {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(k.Session, func() { cancel(context.Cause(k.Session)) })()
	}
	if name == ToolBash {
		return run(ctx, k, name, args)
	}
	// A file tool runs on a goroutine of its own, and the call returns
	// ErrCanceled as soon as ctx ends (a client's cancellation, the
	// server's SIGTERM): the tool itself takes no context, and a walk or
	// a hint that ran long held landjail-mcp past SIGTERM, until the
	// client's SIGKILL skipped the session's last sweep (red team round
	// 25, R25c-3, R25c-4, R25c-9). What it was doing goes on until it
	// ends or the process exits; a write is a temporary file renamed
	// over its name, so it is whole or not done.
	type answer struct {
		res Result
		err error
	}
	ch := make(chan answer, 1)
	go cpushare.Exempt(func() {
		if err := k.planned(); err != nil {
			ch <- answer{nil, k.fail(name, "", err)}
			return
		}
		var res Result
		err := threadcaps.Run(fileToolCaps, func() error {
			var err error
			cpushare.Exempt(func() { res, err = run(ctx, k, name, args) })
			return err
		})
		if err != nil {
			err = k.fail(name, "", err) // as it was, or the thread's capset failed and nothing ran
		}
		if k.AfterWrite != nil && writeTools[name] {
			if lines := k.AfterWrite(); len(lines) > 0 && err == nil {
				res = notedResult{res, lines}
			}
		}
		ch <- answer{res, err}
	})
	select {
	case a := <-ch:
		return a.res, a.err
	case <-ctx.Done():
		return nil, k.fail(name, "", fmt.Errorf("%w: %w", ErrCanceled, context.Cause(ctx)))
	}
}

// AsFileTool runs fn on a thread with a file tool's capabilities
// (threadcaps.Run with CAP_CHOWN alone: no CAP_DAC_OVERRIDE,
// CAP_DAC_READ_SEARCH or CAP_FOWNER as root) and returns its error, or
// threadcaps' when the thread could not be made so (fn not run: fail
// closed). For what decides about a call before the tool runs: the MCP
// server's argument check resolves the paths and, under
// jail.WithDenyPrivateKeyHeaders, reads the head of the file named;
// with the server's capabilities it read another user's 0600 file the
// tool and bash cannot, and answered "denied by policy" for a key where
// the tool answers "permission denied" (red team round 30, R30d-6).
func AsFileTool(fn func() error) error { return threadcaps.Run(fileToolCaps, fn) }

// fileToolCaps are the capabilities a file tool's thread keeps
// (threadcaps.Run): CAP_CHOWN alone, so that a write gives the replaced
// file's owner back (R25b-5). As root the tools had kept
// CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER and read another
// user's 0600 file in the workspace, and wrote into their 0700
// directory, which the same server's bash (no capability) is refused
// (red team round 27, R27c-1); now a file's mode bits say the same to
// both. Planning and AfterWrite's sweep run before and after, with the
// server's capabilities: they must see every entry.
var fileToolCaps = []int{unix.CAP_CHOWN}

// writeTools are the file tools that change the workspace (AfterWrite).
var writeTools = map[string]bool{ToolWriteFile: true, ToolEditFile: true, ToolPatch: true}

// notedResult is a write tool's result with AfterWrite's lines after it.
type notedResult struct {
	Result
	lines []string
}

func (r notedResult) String() string {
	return r.Result.String() + "\n" + strings.Join(r.lines, "\n")
}

// caller decodes a tool's arguments and runs its method.
type caller func(ctx context.Context, k *Toolkit, name string, args json.RawMessage) (Result, error)

// callers maps each tool name to its Toolkit method.
var callers = map[string]caller{
	ToolReadFile:      method((*Toolkit).ReadFile),
	ToolWriteFile:     method((*Toolkit).WriteFile),
	ToolEditFile:      method((*Toolkit).EditFile),
	ToolListDirectory: method((*Toolkit).ListDirectory),
	ToolGlob:          methodContext((*Toolkit).glob),
	ToolGrep:          methodContext((*Toolkit).grep),
	ToolPatch:         method((*Toolkit).Patch),
	ToolBash: func(ctx context.Context, k *Toolkit, name string, args json.RawMessage) (Result, error) {
		return call(k, name, args, func(a BashArgs) (*BashResult, error) { return k.Bash(ctx, a) })
	},
}

// method is the caller of a Toolkit method that takes no context.
func method[A any, R Result](m func(*Toolkit, A) (R, error)) caller {
	return func(_ context.Context, k *Toolkit, name string, args json.RawMessage) (Result, error) {
		return call(k, name, args, func(a A) (R, error) { return m(k, a) })
	}
}

// methodContext is the caller of a Toolkit method that takes the
// call's context.
func methodContext[A any, R Result](m func(*Toolkit, context.Context, A) (R, error)) caller {
	return func(ctx context.Context, k *Toolkit, name string, args json.RawMessage) (Result, error) {
		return call(k, name, args, func(a A) (R, error) { return m(k, ctx, a) })
	}
}

func call[A any, R Result](k *Toolkit, name string, raw json.RawMessage, run func(A) (R, error)) (Result, error) {
	var a A
	if len(strings.TrimSpace(string(raw))) > 0 && string(raw) != "null" {
		if err := decodeArgs(string(raw), &a); err != nil {
			return nil, k.fail(name, "", err)
		}
	}
	r, err := run(a)
	if err != nil {
		return nil, err
	}
	return r, nil
}

var errCapReached = errors.New("result cap reached")
