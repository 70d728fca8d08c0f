package tools

import (
	"embed"
	"encoding/json"

	"github.com/landjail/landjail/jail"
)

// schemaFiles holds one input schema per tool, schemas/NAME.json: JSON
// Schema draft 2020-12, every path argument named "path" with
// "format": "path" so argument guards (mcpserver.CheckToolArgs) know it
// is one. They are data files so that they can be read, diffed and
// checked as JSON (mcpserver.TestDefinitionsCompile compiles each).
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// schema returns the embedded input schema of the tool named name. A
// missing file is a build mistake, so it panics at package init.
func schema(name string) json.RawMessage {
	b, err := schemaFiles.ReadFile("schemas/" + name + ".json")
	if err != nil {
		panic("tools: no input schema for " + name + ": " + err.Error())
	}
	return b
}

// definitions are the tools: name, description, schema, the access each
// path argument needs.
var definitions = []Definition{
	{
		Name: ToolReadFile,
		Description: "Read a text file in the workspace. Returns the lines numbered like `cat -n`, " +
			"then a summary with the line and byte counts. Use offset and limit (in lines) to page " +
			"through long files; lines longer than the limit are cut with a marker. Binary files are " +
			"not shown (a short notice says so). Files larger than the size cap (--max-file-size) are refused. " +
			"Paths outside the workspace are refused. Reading a file is required before write_file may " +
			"overwrite it or edit_file or patch may change it.",
		InputSchema: schema(ToolReadFile),
		Access:      jail.Read,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolWriteFile,
		Description: "Write a file in the workspace, atomically (readers see the old or the new content). " +
			"Creates missing parent directories. Overwriting an existing file is refused unless it was " +
			"read with read_file in this session and has not changed since. Content larger than the size cap " +
			"(10 MiB by default) is refused. Paths outside the workspace are refused.",
		InputSchema: schema(ToolWriteFile),
		Access:      jail.Write,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolEditFile,
		Description: "Replace an exact string in a file (no regular expressions). old_string must occur " +
			"exactly once unless replace_all is true; include enough surrounding context to make it " +
			"unique. The file must have been read with read_file in this session and be unchanged " +
			"since. Files larger than the size cap (--max-file-size) are refused. Paths outside the workspace are " +
			"refused. Returns the number of replacements.",
		InputSchema: schema(ToolEditFile),
		Access:      jail.Write,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolPatch,
		Description: "Apply a unified diff (git diff format: diff --git or ---/+++ headers, @@ hunks; several files, " +
			"creations from /dev/null, deletions, renames, copies, mode 100644/100755) to the workspace, all files or none. " +
			"Names are taken as git apply -p1 does: the first component (a/, b/) is dropped. Every file it modifies, " +
			"deletes or renames must have been read with read_file in this session and be unchanged since; files it " +
			"creates must not exist. Hunks must match at their @@ line numbers (no fuzz); a hunk that does not is " +
			"reported with the differing line and the nearest matching line, and nothing is written. Refused: paths " +
			"outside the workspace or with .., absolute paths, denied or read-only paths, symlinks, submodules, binary " +
			"patches, setuid bits, files larger than the size cap.",
		InputSchema: schema(ToolPatch),
		Access:      jail.Write,
	},
	{
		Name: ToolListDirectory,
		Description: "List a directory of the workspace: one entry per line with a type marker " +
			"(d directory, f file with its size in bytes, l symlink, ? other), sorted by name. Paths outside the " +
			"workspace are refused.",
		InputSchema: schema(ToolListDirectory),
		Access:      jail.Read,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolGlob,
		Description: "Find files by name with a glob pattern relative to path (default: the workspace " +
			"root): * and ? within one name, ** across directories, {a,b} alternatives, [abc] classes. " +
			"Symbolic links are listed but never followed. Results are sorted and capped; directories end with /. " +
			"Paths outside the workspace are refused.",
		InputSchema: schema(ToolGlob),
		Access:      jail.Read,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolGrep,
		Description: "Search file contents with a regular expression (Go RE2 syntax) under path " +
			"(default: the workspace root), honouring .gitignore files and skipping .git, binary " +
			"files, files larger than the size cap and symbolic links. Prints path:line:text for each matching line, " +
			"capped; the summary line counts the ignored directories and the binary and large files it skipped " +
			"(grep an ignored directory by path to search it). Paths outside the workspace are refused.",
		InputSchema: schema(ToolGrep),
		Access:      jail.Read,
		PathArgs:    []string{"path"},
	},
	{
		Name: ToolBash,
		Description: "Run a command with bash -c in the workspace root, confined by the same policy as the " +
			"file tools (Landlock where the kernel has it): files outside the workspace and its allowed " +
			"roots cannot be read or written. stdin is empty. Returns the combined stdout and stderr " +
			"(long output keeps its head and tail) and the exit code.",
		InputSchema: schema(ToolBash),
		Access:      jail.Execute,
	},
}
