package jail

import (
	"fmt"
	"path/filepath"
)

// Mode is how an allowed root may be used. The workspace root itself is
// always ReadWrite.
type Mode uint8

const (
	// ReadOnly allows reading files and listing directories.
	ReadOnly Mode = iota + 1
	// ReadExec adds executing files (and mapping them executable) to
	// ReadOnly.
	ReadExec
	// ReadWrite allows everything: read, write, create, remove, rename,
	// execute.
	ReadWrite
)

// String returns "ro", "rox" or "rw", the names the CLI flags use.
func (m Mode) String() string {
	switch m {
	case ReadOnly:
		return "ro"
	case ReadExec:
		return "rox"
	case ReadWrite:
		return "rw"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// Allows reports whether a root of mode m permits access a.
func (m Mode) Allows(a Access) bool {
	switch a {
	case Read:
		return m >= ReadOnly
	case Write:
		return m == ReadWrite
	case Execute:
		return m == ReadExec || m == ReadWrite
	}
	return false
}

// Access is the kind of use Check is asked about.
type Access uint8

const (
	// Read: open for reading, stat, list.
	Read Access = iota + 1
	// Write: create, truncate, write, remove, rename, chmod, mkdir.
	Write
	// Execute: execve the file, or use it as a child's working directory
	// for a command.
	Execute
)

// String returns "read", "write" or "execute".
func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Execute:
		return "execute"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// AllowedRoot is one root of the policy: a canonical absolute directory
// (symlinks resolved when the Workspace was built) and its Mode.
type AllowedRoot struct {
	Path string
	Mode Mode
}

// Option configures a Workspace; pass them to New.
type Option func(*config) error

type config struct {
	allowed        []allowedSpec
	deny           []string
	rejectAbsolute bool
	unrestricted   bool
	tracker        *ReadTracker
	noXDev         bool
	noHardlinked   bool
}

type allowedSpec struct {
	path string
	mode Mode
}

// WithAllowed adds an extra root beyond the workspace, usable with mode.
// The path must be absolute and exist; it is canonicalised (symlinks
// resolved) by New. This is seed 004's sandbox_roots and seed 002's
// allowed_paths. A path given several times keeps the widest mode.
func WithAllowed(path string, mode Mode) Option {
	return func(c *config) error {
		if mode < ReadOnly || mode > ReadWrite {
			return fmt.Errorf("jail: WithAllowed(%q): invalid mode %d", path, mode)
		}
		if !filepath.IsAbs(path) {
			return fmt.Errorf("jail: WithAllowed(%q): %w", path, ErrNotAbsolute)
		}
		c.allowed = append(c.allowed, allowedSpec{path, mode})
		return nil
	}
}

// WithDeny adds always-denied patterns in gitignore syntax (gitignore(5):
// ".env", "*.pem", ".git/", "secrets/**", "!keep.pem" to re-include). A
// pattern is matched against the canonical path relative to the deepest
// root that contains it; a pattern starting with "/" is also matched
// against the absolute canonical path, so "/home/*/.ssh/**" works (both
// readings can only deny more). As in git, a pattern that matches a
// directory denies everything below it, and what is below an excluded
// directory cannot be re-included. Directory-only patterns ("x/") are
// applied whether or not the entry is a directory (fail closed), and an
// empty component ("a//b") is read as "a/b" in a deny pattern (git's
// matches nothing) and makes a "!" re-include match nothing. New fails
// when a pattern is malformed (path.ErrBadPattern). Matching is checked
// against git check-ignore by FuzzDenyMatcher; these fail-closed readings
// are the only differences it accepts.
func WithDeny(patterns ...string) Option {
	return func(c *config) error {
		c.deny = append(c.deny, patterns...)
		return nil
	}
}

// RejectAbsolute makes every absolute path an error (ErrAbsolutePath),
// even one inside the workspace: seed 003's mode, where agents must use
// relative paths.
func RejectAbsolute() Option {
	return func(c *config) error { c.rejectAbsolute = true; return nil }
}

// Unrestricted allows every path on the system except those matched by
// the deny patterns (seed 002's "unrestricted: true", which still honours
// the daemon-secret deny list). Paths outside the workspace are treated as
// ReadWrite. Use only for trusted callers.
func Unrestricted() Option {
	return func(c *config) error { c.unrestricted = true; return nil }
}

// WithReadTracker makes the Workspace record every file it reads in t and
// refuse to overwrite an existing file that t has not seen read
// (ErrNotRead) or that changed on disk since (ErrStale).
func WithReadTracker(t *ReadTracker) Option {
	return func(c *config) error { c.tracker = t; return nil }
}

// WithNoXDev makes every open also pass RESOLVE_NO_XDEV, so a lookup
// fails with EXDEV when it would cross a mount point (a bind mount inside
// the workspace cannot be used to reach another file system).
func WithNoXDev() Option {
	return func(c *config) error { c.noXDev = true; return nil }
}

// WithNoHardlinkedWrites makes writes to an existing regular file with
// more than one hard link fail with ErrHardlinked. A hard link made
// before the workspace was set up may alias a file outside it; neither a
// path check nor Landlock can see that.
func WithNoHardlinkedWrites() Option {
	return func(c *config) error { c.noHardlinked = true; return nil }
}

// SecretPatterns is a preset of deny patterns for common secrets. It is
// not enabled by default: pass it to WithDeny explicitly
// (jail.WithDeny(jail.SecretPatterns...)). Sources: seed 004's
// blocked_patterns, seed 002's daemon-secret list, and the usual
// credential files of SSH, cloud CLIs, package managers and agents.
var SecretPatterns = []string{
	".env",
	".env.*",
	"!.env.example",
	"*.pem",
	"*.key",
	"*.p12",
	"*.pfx",
	"id_rsa",
	"id_dsa",
	"id_ecdsa",
	"id_ed25519",
	".ssh/",
	".gnupg/",
	".aws/",
	".azure/",
	".config/gcloud/",
	".kube/config",
	".docker/config.json",
	".netrc",
	".npmrc",
	".pypirc",
	".git-credentials",
	".claude/.credentials.json",
}
