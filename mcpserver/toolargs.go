package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/landjail/landjail/jail"
)

// Limits of CheckToolArgs. Past any of them the call is refused with
// ErrInvalidToolArgs: the guard fails closed rather than forward what it
// did not finish checking.
const (
	// maxToolArgsBytes bounds the arguments: large enough for a write tool
	// carrying a big file, small enough to walk in well under a second.
	maxToolArgsBytes = 16 << 20
	// maxToolArgsDepth bounds the nesting of arrays and objects in the
	// arguments (and of $ref/anyOf expansion in the schema); no real tool
	// nests this deep, and recursion stays shallow.
	maxToolArgsDepth = 64
	// maxToolArgsChecks bounds the number of Check calls (each costs an
	// lstat per path component), so a hostile call cannot keep the guard
	// busy for minutes.
	maxToolArgsChecks = 10000
	// maxSchemaSteps bounds the schema nodes visited in one call while
	// working out which subschemas apply ($ref chains, nested anyOf; each
	// node's expansion is computed once per call).
	maxSchemaSteps = 1 << 16
	// maxSchemaSet bounds how many subschemas may apply to one value.
	maxSchemaSet = 256
	// maxShownValue bounds how much of the offending value the error
	// message quotes (the Value field holds all of it).
	maxShownValue = 200
)

// ToolArgError is the error CheckToolArgs returns for a refused argument:
// where it is, what it holds, and why it is refused.
type ToolArgError struct {
	// Pointer is the RFC 6901 JSON pointer of the argument in the
	// call's arguments, for example "/files/2/path" ("" is the whole
	// arguments value; "~" and "/" in names are escaped as "~0", "~1").
	// For an object key used as a path, it points at that member.
	Pointer string
	// Value is the argument's string value (or the key) as sent.
	Value string
	// Err is why: the error of jail.Workspace.Check (a *fs.PathError
	// wrapping jail.ErrOutsideWorkspace, ErrDenied, ErrReadOnly, ErrInvalidPath, an
	// errno...) or ErrInvalidToolArgs.
	Err error
}

// Error names the argument, quotes its value (shortened past 200 bytes)
// and gives the reason, in a form meant to be shown to a model.
func (e *ToolArgError) Error() string {
	v := e.Value
	if len(v) > maxShownValue {
		v = v[:maxShownValue] + "..."
	}
	p := e.Pointer
	if p == "" {
		p = "(arguments)"
	}
	return fmt.Sprintf("tool argument %s = %s refused: %v", p, strconv.Quote(v), e.Err)
}

// Unwrap returns Err, so errors.Is(err, jail.ErrOutsideWorkspace) and the other
// sentinels work on a ToolArgError.
func (e *ToolArgError) Unwrap() error { return e.Err }

// CheckToolArgs checks the arguments of one tool call (args, a JSON value,
// normally an object) against the policy before the call is forwarded to
// the tool, typically an MCP server the agent talks to (an MCP
// path guard), through w, the policy. schema is the tool's JSON Schema
// (its MCP inputSchema); it may be nil or empty. a is the access the tool
// needs: jail.Read for tools that only look, jail.Write for tools that
// create, change or delete (the caller
// decides; a tool that does both, such as a copy, should be checked with
// Write, which also refuses its source in a read-only root).
//
// A string is checked with w.Check(value, a) when it sits in a position the
// schema or its name marks as a path:
//
//   - a property named path, file_path, filepath, filename, file, cwd, dir,
//     directory, folder, workdir, working_directory, source, target,
//     destination, dest, src, dst, root, paths, files, dirs, filenames
//     (case-insensitive, "_" and "-" ignored, so filePath and file-path
//     count), or ending in _path, _dir, _file, _paths, _dirs, _files (or
//     their camelCase forms Path, Dir, File...);
//   - a (sub)schema with "format": "path" (or "file-path", "filepath");
//   - a (sub)schema whose description mentions a file, path, directory or
//     folder as a word ("The file to read", "absolute path of ..."), unless
//     the property is named as free text (see below);
//   - the items of an array in such a position (["a.go", "b.go"] under
//     "paths"), and the keys of a map-like object in such a position (an
//     object schema without "properties", such as {"files": {"a.go": ...}}).
//
// In a path position every non-empty string is checked, relative ones too
// (relative to the workspace root), and so is its whitespace-trimmed form
// when that differs (a server that trims " /etc/passwd" must not reach
// /etc/passwd). Empty strings are left alone (they mean "the default").
//
// Everywhere else, heuristically, a string is checked when it (or, for a
// multi-line string, one of its trimmed lines) starts with "/", "\", "~"
// (as "~", "~/...", "~user", "~user/..."), a drive letter ("C:\", "C:/") or
// "file:". Object keys get the same heuristic.
//
// Before Check, a value is classified:
//
//   - "file:" URIs are decoded: the host must be empty or "localhost"
//     (anything else is refused with ErrOutsideWorkspace), the path is
//     percent-decoded ("%2e%2e" is ".."; a bad escape is ErrInvalidPath)
//     and checked both without and with its "?query#fragment" (a server
//     may or may not strip them), and once more decoded a second time when
//     a "%" remains (against servers that decode twice).
//   - Other URLs ("scheme://...") are not checked: they are not local files.
//   - The pseudo-paths /dev/null, /dev/stdin, /dev/stdout and /dev/stderr
//     are allowed.
//   - "~" and "~/..." expand to the caller's home (os.UserHomeDir), "~user"
//     to that user's home (os/user); both are normally outside the
//     workspace, so refused unless allowed. An unknown user, no $HOME, and
//     bash's "~+" and "~-" are refused with ErrOutsideWorkspace.
//   - Windows-style paths ("C:\...", "C:/...", "\\server\share", any
//     string starting with "\") are refused with ErrOutsideWorkspace: on
//     Linux they can never name a file inside the policy, and a server that
//     understands them is not resolving paths the way Check does.
//
// The arguments are walked in document order through arrays and nested
// objects. The schema is followed through properties, patternProperties,
// additionalProperties, unevaluatedProperties, items (single and tuple
// forms), prefixItems, additionalItems, unevaluatedItems, contains, $ref
// (and $recursiveRef, $dynamicRef) to a JSON pointer or an $anchor in
// the schema (see CompileToolSchema), allOf, anyOf, oneOf, if/then/else,
// dependentSchemas and dependencies; path-ness is the union over every
// subschema that can apply, so a value is treated as a path if any branch says so. Cyclic
// $refs terminate. Duplicate keys in an object are each checked (parsers
// disagree on which one wins).
//
// CheckToolArgs returns nil when every checked value passes, else the
// FIRST failing value in document order as a *ToolArgError whose Err wraps
// the reason, so errors.Is(err, jail.ErrOutsideWorkspace), jail.ErrDenied,
// jail.ErrReadOnly (a Write into a read-only root), jail.ErrAbsolutePath
// (with jail.RejectAbsolute) and jail.ErrInvalidPath work. Arguments that
// are not valid UTF-8 JSON give an error wrapping ErrInvalidToolArgs (with
// the JSON error); exceeding a limit gives a *ToolArgError wrapping
// ErrInvalidToolArgs at the place the limit was hit. Null or empty
// arguments are allowed. It never panics, whatever args and schema hold.
//
// What it cannot see, so the tool (or the OS: Landlock, exec) must confine
// itself:
//
//   - paths the tool builds itself (from a project name, a glob, a config
//     file, a symlink it creates, a path relative to a cwd other than the
//     workspace root: the guard assumes relative paths are resolved against
//     the workspace root, so run the server with its cwd there);
//   - relative strings outside path positions ("../../etc/passwd" in a
//     field called "q"): checking every string as a path would refuse
//     ordinary text that merely looks relative, and a relative string is
//     harmless unless the tool treats it as a path, which its schema
//     should then say;
//   - free-text fields: properties named content, contents, text, body,
//     data, message, prompt, description, title, comment, command, cmd,
//     script, code, patch, diff, pattern, regex, query, search, replacement,
//     old_string, new_string, old_str, new_str, old_text, new_text, input,
//     stdin: file contents and regexps routinely start with "/" or "\"
//     ("// Package x", "\bword"), so the heuristic skips them (an explicit
//     "format": "path" still makes them paths). Commands are checked by
//     the confinement of the shell, not here;
//   - paths hidden in encodings (base64, JSON inside a string) or in
//     shell syntax ("cat /etc/passwd" does not start with "/");
//   - what the file system does after the check (a symlink swapped in
//     later): the answer is Check's, valid at the time of the call.
//
// The schema is parsed with github.com/google/jsonschema-go and refused
// (a *SchemaError, errors.Is ErrInvalidSchema and ErrInvalidToolArgs)
// rather than half-followed: when it is not a valid JSON Schema for that
// package (jsonschema.Schema.Resolve fails: a bad keyword value, an
// invalid regexp in pattern or patternProperties, a $ref, $dynamicRef or
// $anchor that does not resolve, a remote $ref), when a patternProperties
// regexp is longer than 1024 bytes, or when it nests deeper than 256.
// A guard that skipped such a subschema would miss the paths it marks.
//
// CheckToolArgs compiles schema on every call; a server that checks many
// calls against the same schema should CompileToolSchema it once.
//
// Safe for concurrent use.
func CheckToolArgs(w *jail.Workspace, schema, args []byte, a jail.Access) error {
	if err := checkArgsBytes(args); err != nil {
		return err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	ts, err := CompileToolSchema(schema)
	if err != nil {
		return err
	}
	return ts.check(w, args, a)
}

// Check is CheckToolArgs with the schema ts was compiled from. Safe for
// concurrent use.
func (ts *ToolSchema) Check(w *jail.Workspace, args []byte, a jail.Access) error {
	if err := checkArgsBytes(args); err != nil {
		return err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		return nil
	}
	return ts.check(w, args, a)
}

// checkArgsBytes refuses arguments that are too large, not UTF-8 or not
// JSON.
func checkArgsBytes(args []byte) error {
	if len(args) > maxToolArgsBytes {
		return fmt.Errorf("%w: arguments are %d bytes, more than %d", ErrInvalidToolArgs, len(args), maxToolArgsBytes)
	}
	if !utf8.Valid(args) {
		return fmt.Errorf("%w: arguments are not UTF-8", ErrInvalidToolArgs)
	}
	if len(bytes.TrimSpace(args)) > 0 && !json.Valid(args) {
		// json.Unmarshal into nothing gives the syntax error with its offset.
		var v any
		err := json.Unmarshal(args, &v)
		if err == nil {
			err = errors.New("cannot happen: json.Valid and json.Unmarshal disagree")
		}
		return fmt.Errorf("%w: arguments: %w", ErrInvalidToolArgs, err)
	}
	return nil
}

func (ts *ToolSchema) check(w *jail.Workspace, args []byte, a jail.Access) error {
	c := &argChecker{w: w, a: a, ts: ts}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var roots []*jsonschema.Schema
	if ts.root != nil {
		var err error
		if roots, err = c.expand(ts.root); err != nil {
			return &ToolArgError{Err: err}
		}
	}
	return c.value(dec, roots, position{path: c.marksPath(roots, "")}, "", 0)
}

// argChecker is the state of one CheckToolArgs call.
type argChecker struct {
	w      *jail.Workspace
	a      jail.Access
	ts     *ToolSchema
	steps  int // schema nodes visited
	checks int // Check calls made

	expanded map[*jsonschema.Schema][]*jsonschema.Schema // expand's cache
}

// position says how a value is to be checked.
type position struct {
	path     bool   // a path position: every string is checked
	freeText bool   // a free-text field: no heuristic
	name     string // the property name the value hangs under
}

// value walks the next JSON value of dec (already validated) at pointer
// ptr, to which schemas apply.
func (c *argChecker) value(dec *json.Decoder, schemas []*jsonschema.Schema, pos position, ptr string, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: %w", ErrInvalidToolArgs, err)}
	}
	switch t := tok.(type) {
	case string:
		return c.str(t, pos, ptr)
	case json.Delim:
		if depth >= maxToolArgsDepth {
			return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: nested deeper than %d", ErrInvalidToolArgs, maxToolArgsDepth)}
		}
		if t == '[' {
			return c.array(dec, schemas, pos, ptr, depth+1)
		}
		return c.object(dec, schemas, pos, ptr, depth+1)
	}
	return nil // number, bool, null
}

func (c *argChecker) array(dec *json.Decoder, schemas []*jsonschema.Schema, pos position, ptr string, depth int) error {
	for i := 0; dec.More(); i++ {
		var sub []*jsonschema.Schema
		for _, s := range schemas {
			if err := c.itemSchemas(s, i, &sub); err != nil {
				return &ToolArgError{Pointer: ptr, Err: err}
			}
		}
		// Items inherit the array's path-ness and free-text-ness.
		ipos := position{name: pos.name, freeText: pos.freeText}
		ipos.path = pos.path || c.marksPath(sub, pos.name)
		if err := c.value(dec, sub, ipos, ptr+"/"+strconv.Itoa(i), depth); err != nil {
			return err
		}
	}
	_, err := dec.Token() // ']'
	if err != nil {
		return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: %w", ErrInvalidToolArgs, err)}
	}
	return nil
}

func (c *argChecker) object(dec *json.Decoder, schemas []*jsonschema.Schema, pos position, ptr string, depth int) error {
	// Keys are paths when the object itself sits in a path position and
	// no applicable schema declares named properties (a map keyed by path).
	keysArePaths := pos.path
	for _, s := range schemas {
		if s.Properties != nil {
			keysArePaths = false
		}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: %w", ErrInvalidToolArgs, err)}
		}
		key, ok := tok.(string)
		if !ok {
			return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: cannot happen: object key %v", ErrInvalidToolArgs, tok)}
		}
		mptr := ptr + "/" + escapePointer(key)
		if err := c.str(key, position{path: keysArePaths}, mptr); err != nil {
			return err
		}
		var sub []*jsonschema.Schema
		for _, s := range schemas {
			if err := c.propertySchemas(s, key, &sub); err != nil {
				return &ToolArgError{Pointer: mptr, Err: err}
			}
		}
		vpos := position{name: key, freeText: isFreeTextName(key)}
		vpos.path = isPathName(key) || c.marksPath(sub, key)
		if err := c.value(dec, sub, vpos, mptr, depth); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	if err != nil {
		return &ToolArgError{Pointer: ptr, Err: fmt.Errorf("%w: %w", ErrInvalidToolArgs, err)}
	}
	return nil
}

// str checks one string value (or key) s at ptr.
func (c *argChecker) str(s string, pos position, ptr string) error {
	var cands []string
	switch {
	case pos.path:
		cands = append(cands, s)
		if t := strings.TrimSpace(s); t != s {
			cands = append(cands, t)
		}
	case pos.freeText:
		return nil
	default:
		if looksLikePath(s) {
			cands = append(cands, s)
		}
		if t := strings.TrimSpace(s); t != s && looksLikePath(t) {
			cands = append(cands, t)
		}
		if strings.ContainsAny(s, "\n\r") {
			for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if t := strings.TrimSpace(line); t != s && looksLikePath(t) {
					cands = append(cands, t)
				}
			}
		}
	}
	for _, cand := range cands {
		if err := c.checkPath(cand, pos.path); err != nil {
			return &ToolArgError{Pointer: ptr, Value: s, Err: err}
		}
	}
	return nil
}

// looksLikePath is the heuristic for strings outside path positions.
func looksLikePath(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '/', '\\':
		return true
	case '~':
		return tildeForm(s)
	}
	return isDrivePath(s) || hasFilePrefix(s)
}

// tildeRE matches the tilde prefixes a shell or expanduser would expand:
// "~", "~/...", "~user", "~user/...", "~+", "~-".
var tildeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^~([A-Za-z_][A-Za-z0-9_.-]*|[+-])?(/|$)`) })

func tildeForm(s string) bool { return tildeRE().MatchString(s) }

// driveRE matches a Windows drive-absolute path.
var driveRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]:[\\/]`) })

func isDrivePath(s string) bool { return driveRE().MatchString(s) }

func hasFilePrefix(s string) bool { return len(s) >= 5 && strings.EqualFold(s[:5], "file:") }

// urlRE matches "scheme://".
var urlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`) })

// pseudoPaths are device names every tool may use.
var pseudoPaths = map[string]bool{"/dev/null": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true}

// errWindowsPath is the reason for refusing a Windows-style path.
var errWindowsPath = fmt.Errorf("%w (a Windows-style path, never inside on Linux)", jail.ErrOutsideWorkspace)

// checkPath classifies s (see CheckToolArgs) and checks it. inPath says
// whether s sits in a path position (then relative strings and
// unexpandable "~x" names are checked as relative paths).
func (c *argChecker) checkPath(s string, inPath bool) error {
	switch {
	case s == "":
		return nil
	case hasFilePrefix(s):
		return c.checkFileURI(s)
	case isDrivePath(s), s[0] == '\\':
		return &fs.PathError{Op: "check", Path: s, Err: errWindowsPath}
	case urlRE().MatchString(s), pseudoPaths[s]:
		return nil
	case s[0] == '~':
		if tildeForm(s) {
			p, err := expandTilde(s)
			if err != nil {
				return &fs.PathError{Op: "check", Path: s, Err: err}
			}
			return c.check(p)
		}
		if !inPath {
			return nil // cannot happen: looksLikePath only passes tilde forms
		}
	}
	return c.check(s)
}

func (c *argChecker) check(p string) error {
	if pseudoPaths[p] {
		return nil
	}
	c.checks++
	if c.checks > maxToolArgsChecks {
		return fmt.Errorf("%w: more than %d paths to check", ErrInvalidToolArgs, maxToolArgsChecks)
	}
	_, err := c.w.Check(p, c.a)
	return err
}

// expandTilde expands a tildeForm string.
func expandTilde(s string) (string, error) {
	name, rest, _ := strings.Cut(s[1:], "/")
	var home string
	switch name {
	case "":
		h, err := os.UserHomeDir()
		if err != nil || h == "" {
			return "", fmt.Errorf("%w (no home directory to expand ~ to)", jail.ErrOutsideWorkspace)
		}
		home = h
	case "+", "-":
		return "", fmt.Errorf("%w (~%s names the tool's own working directory)", jail.ErrOutsideWorkspace, name)
	default:
		u, err := user.Lookup(name)
		if err != nil || u.HomeDir == "" {
			return "", fmt.Errorf("%w (no home directory for ~%s)", jail.ErrOutsideWorkspace, name)
		}
		home = u.HomeDir
	}
	if rest == "" {
		return home, nil
	}
	return strings.TrimSuffix(home, "/") + "/" + rest, nil
}

// checkFileURI decodes and checks a "file:" URI.
func (c *argChecker) checkFileURI(s string) error {
	rest := s[len("file:"):]
	if strings.HasPrefix(rest, "//") {
		host, p, _ := strings.Cut(rest[2:], "/")
		// Cut drops the "/"; the path is absolute.
		p = "/" + p
		if host != "" && !strings.EqualFold(host, "localhost") {
			return &fs.PathError{Op: "check", Path: s, Err: fmt.Errorf("%w (file URI on host %q)", jail.ErrOutsideWorkspace, host)}
		}
		rest = p
	}
	full, err := url.PathUnescape(rest)
	if err != nil {
		return &fs.PathError{Op: "check", Path: s, Err: fmt.Errorf("%w: %w", jail.ErrInvalidPath, err)}
	}
	paths := []string{full}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		bare, err := url.PathUnescape(rest[:i])
		if err != nil {
			return &fs.PathError{Op: "check", Path: s, Err: fmt.Errorf("%w: %w", jail.ErrInvalidPath, err)}
		}
		paths = []string{bare, full}
	}
	for _, p := range paths {
		if strings.Contains(p, "%") {
			if twice, err := url.PathUnescape(p); err == nil && twice != p {
				paths = append(paths, twice)
			}
		}
	}
	for _, p := range paths {
		if p == "" {
			continue
		}
		// "file:///C:/Windows", "file:C:/x", "file:////server/share".
		if isDrivePath(p) || isDrivePath(strings.TrimPrefix(p, "/")) || p[0] == '\\' || strings.HasPrefix(p, "//") {
			return &fs.PathError{Op: "check", Path: s, Err: errWindowsPath}
		}
		if err := c.check(p); err != nil {
			return err
		}
	}
	return nil
}

// escapePointer escapes a member name for an RFC 6901 JSON pointer.
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// normName lowercases name and drops "_" and "-".
func normName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return r
	}, strings.ToLower(name))
}

// pathNames are property names that hold paths, normalised by normName.
var pathNames = map[string]bool{
	"path": true, "filepath": true, "filename": true, "file": true,
	"cwd": true, "dir": true, "directory": true, "folder": true,
	"workdir": true, "workingdirectory": true, "workingdir": true,
	"source": true, "target": true, "destination": true, "dest": true,
	"src": true, "dst": true, "root": true,
	"paths": true, "files": true, "dirs": true, "directories": true,
	"filenames": true, "filepaths": true, "folders": true,
}

// pathSuffixes are the name endings of path properties: snake_case and
// kebab-case after lowercasing, camelCase as written.
var (
	pathSuffixes      = []string{"_path", "_paths", "_dir", "_dirs", "_file", "_files", "-path", "-dir", "-file"}
	camelPathSuffixes = []string{"Path", "Paths", "Dir", "Dirs", "File", "Files"}
)

// isPathName reports whether a property called name holds a path.
func isPathName(name string) bool {
	if pathNames[normName(name)] {
		return true
	}
	lower := strings.ToLower(name)
	for _, suf := range pathSuffixes {
		if strings.HasSuffix(lower, suf) && len(lower) > len(suf) {
			return true
		}
	}
	for _, suf := range camelPathSuffixes {
		if strings.HasSuffix(name, suf) && len(name) > len(suf) {
			if r := name[len(name)-len(suf)-1]; r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return true
			}
		}
	}
	return false
}

// freeTextNames are property names whose values are text, not paths,
// normalised by normName.
var freeTextNames = map[string]bool{
	"content": true, "contents": true, "text": true, "body": true, "data": true,
	"message": true, "prompt": true, "description": true, "title": true, "comment": true,
	"command": true, "cmd": true, "script": true, "code": true, "patch": true, "diff": true,
	"pattern": true, "regex": true, "regexp": true, "query": true, "search": true, "replacement": true,
	"oldstring": true, "newstring": true, "oldstr": true, "newstr": true, "oldtext": true, "newtext": true,
	"input": true, "stdin": true,
}

func isFreeTextName(name string) bool { return freeTextNames[normName(name)] }

// pathFormats are "format" values that mark a path.
var pathFormats = map[string]bool{"path": true, "file-path": true, "filepath": true}

// pathWordRE finds the words in a description that mark a path.
var pathWordRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(path|paths|pathname|file|files|filename|filenames|filepath|directory|directories|folder|folders|dir)\b`)
})

// marksPath reports whether any of schemas marks its value as a path
// (format, or a description for a property not named as free text).
func (c *argChecker) marksPath(schemas []*jsonschema.Schema, name string) bool {
	free := isFreeTextName(name)
	for _, s := range schemas {
		if pathFormats[strings.ToLower(s.Format)] {
			return true
		}
		if free {
			continue
		}
		if s.Description != "" && pathWordRE().MatchString(s.Description) {
			return true
		}
	}
	return false
}

// expand returns the schemas node stands for: itself and, transitively,
// its $ref, $dynamicRef and $recursiveRef targets (resolved by
// CompileToolSchema) and its allOf/anyOf/oneOf/then/else,
// dependentSchemas and dependencies branches, each once (so $ref cycles
// terminate). Results are cached per node for the call.
func (c *argChecker) expand(node *jsonschema.Schema) ([]*jsonschema.Schema, error) {
	if node == nil {
		return nil, nil
	}
	if got, ok := c.expanded[node]; ok {
		return got, nil
	}
	var out []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	stack := []*jsonschema.Schema{node}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n == nil || seen[n] {
			continue
		}
		seen[n] = true
		c.steps++
		if c.steps > maxSchemaSteps {
			return nil, fmt.Errorf("%w: schema too complex (more than %d expansion steps)", ErrInvalidToolArgs, maxSchemaSteps)
		}
		if len(out) >= maxSchemaSet {
			return nil, fmt.Errorf("%w: more than %d subschemas apply to one value", ErrInvalidToolArgs, maxSchemaSet)
		}
		out = append(out, n)
		stack = append(stack, c.ts.refs[n]...)
		stack = append(stack, n.AllOf...)
		stack = append(stack, n.AnyOf...)
		stack = append(stack, n.OneOf...)
		stack = append(stack, n.Then, n.Else)
		for _, k := range sortedKeys(n.DependentSchemas) {
			stack = append(stack, n.DependentSchemas[k])
		}
		for _, k := range sortedKeys(n.DependencySchemas) {
			stack = append(stack, n.DependencySchemas[k])
		}
	}
	if c.expanded == nil {
		c.expanded = map[*jsonschema.Schema][]*jsonschema.Schema{}
	}
	c.expanded[node] = out
	return out, nil
}

// add appends the expansion of node to *set, without duplicates.
func (c *argChecker) add(set *[]*jsonschema.Schema, node *jsonschema.Schema) error {
	got, err := c.expand(node)
	if err != nil {
		return err
	}
outer:
	for _, g := range got {
		for _, have := range *set {
			if have == g {
				continue outer
			}
		}
		if len(*set) >= maxSchemaSet {
			return fmt.Errorf("%w: more than %d subschemas apply to one value", ErrInvalidToolArgs, maxSchemaSet)
		}
		*set = append(*set, g)
	}
	return nil
}

// itemSchemas appends the expanded schemas that apply to item i of an
// array described by s.
func (c *argChecker) itemSchemas(s *jsonschema.Schema, i int, out *[]*jsonschema.Schema) error {
	if i < len(s.PrefixItems) {
		return c.add(out, s.PrefixItems[i])
	}
	// "contains" may describe any item: its path-ness counts for all.
	if err := c.add(out, s.Contains); err != nil {
		return err
	}
	switch {
	case s.ItemsArray != nil: // draft 4-2019 tuple form
		if i < len(s.ItemsArray) {
			return c.add(out, s.ItemsArray[i])
		}
		return c.add(out, s.AdditionalItems)
	case s.Items != nil:
		return c.add(out, s.Items)
	}
	return c.add(out, s.UnevaluatedItems)
}

// propertySchemas appends the expanded schemas that apply to member key
// of an object described by s.
func (c *argChecker) propertySchemas(s *jsonschema.Schema, key string, out *[]*jsonschema.Schema) error {
	matched := false
	if p, ok := s.Properties[key]; ok {
		matched = true
		if err := c.add(out, p); err != nil {
			return err
		}
	}
	for _, pp := range c.ts.patterns[s] {
		if !pp.re.MatchString(key) {
			continue
		}
		matched = true
		if err := c.add(out, pp.schema); err != nil {
			return err
		}
	}
	if !matched {
		if err := c.add(out, s.AdditionalProperties); err != nil {
			return err
		}
		return c.add(out, s.UnevaluatedProperties)
	}
	return nil
}
