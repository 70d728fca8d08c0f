package mcpserver

import "errors"

// Sentinel errors of the argument guard (CheckToolArgs, ToolSchema.Check).
var (
	// ErrInvalidToolArgs: the arguments are not valid UTF-8 JSON, exceed
	// the guard's limits (more than 16 MiB, nesting deeper than 64, more
	// than 10000 path checks, a schema too complex to expand), or the
	// schema cannot be followed (then also ErrInvalidSchema). Nothing can
	// be said about such a call, so it must not be forwarded.
	ErrInvalidToolArgs = errors.New("invalid tool arguments")
	// ErrInvalidSchema: the tool's input schema is not one the guard can
	// follow completely (see CompileToolSchema); every call of the tool
	// is refused. Errors wrapping it are *SchemaError and also match
	// ErrInvalidToolArgs.
	ErrInvalidSchema = errors.New("tool input schema cannot be checked")
)
