package jail

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/regfile"
	"github.com/landjail/landjail/openat"
)

// This file finds the paths a repository's git configuration makes git
// read as configuration or run as code: an "include.path = tools/gitconfig"
// or "core.hooksPath = .hooks" of the user's own .git/config points git
// at files in the workspace that are not on any protected list, and the
// command could write them (red team F9: the next `git status` or `git
// commit` ran what it wrote). WithProtectedAgentConfig protects them like
// the names of AgentConfigPaths.

// gitConfigEntry is one "key = value" of a git configuration file, with
// the key in git's canonical form: section and variable name lower case,
// the subsection as written ("diff.Foo.textconv" stays "diff.Foo.textconv").
type gitConfigEntry struct {
	key, value string
	file       string // the file it came from (include.path is relative to its directory)
}

// parseGitConfig parses git-config(1) syntax: [section], [section
// "subsection"], the deprecated [section.subsection], "name = value" and
// a bare "name" (boolean true), values with "..." quoting, the escapes
// \n \t \b \\ \" and a backslash-newline continuation, comments from # or
// ; outside quotes. It returns the entries up to the first syntax error,
// where git itself stops reading the file (and refuses to run): what
// comes after it is never used by git either. file is recorded in each
// entry. Checked against `git config --list` by TestParseGitConfigOracle
// and FuzzParseGitConfig.
func parseGitConfig(b []byte, file string) []gitConfigEntry {
	// git reads "\r\n" as "\n" (get_next_char).
	p := gitConfigParser{b: []byte(strings.ReplaceAll(string(b), "\r\n", "\n"))}
	var out []gitConfigEntry
	section := ""
	for {
		c, ok := p.skipSpaceAndComments()
		if !ok {
			return out
		}
		if c == '[' {
			p.i++
			s, ok := p.sectionHeader()
			if !ok {
				return out
			}
			section = s
			continue
		}
		if !isAlpha(c) {
			return out // git: a bad name
		}
		name, value, ok := p.variable()
		if !ok {
			return out
		}
		key := name // git: a variable before any section has no dot
		if section != "" {
			key = section + "." + name
		}
		out = append(out, gitConfigEntry{key: key, value: value, file: file})
	}
}

type gitConfigParser struct {
	b []byte
	i int
}

// skipSpaceAndComments skips whitespace, newlines and comment lines and
// returns the next byte (false at the end).
func (p *gitConfigParser) skipSpaceAndComments() (byte, bool) {
	if p.i == 0 && strings.HasPrefix(string(p.b), "\xef\xbb\xbf") {
		p.i = 3 // git skips a UTF-8 byte order mark
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '\n' || isGitSpace(c):
			p.i++
		case c == '#' || c == ';':
			for p.i < len(p.b) && p.b[p.i] != '\n' {
				p.i++
			}
		default:
			return c, true
		}
	}
	return 0, false
}

// sectionHeader parses what follows "[" up to "]" and returns the
// section in canonical form ("diff" + "." + subsection).
func (p *gitConfigParser) sectionHeader() (string, bool) {
	var name strings.Builder
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		switch {
		case c == ']':
			if name.Len() == 0 {
				return "", false // git: "[]" is a bad line
			}
			// [section.sub]: the deprecated form; git lowercases it all.
			return strings.ToLower(name.String()), true
		case isGitSpace(c) || c == '\n':
			// [section "subsection"]
			if c == '\n' {
				return "", false
			}
			for p.i < len(p.b) && isGitSpace(p.b[p.i]) {
				p.i++
			}
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return "", false
			}
			p.i++
			var sub strings.Builder
			for {
				if p.i >= len(p.b) || p.b[p.i] == '\n' {
					return "", false
				}
				c := p.b[p.i]
				p.i++
				if c == '"' {
					break
				}
				if c == '\\' {
					if p.i >= len(p.b) || p.b[p.i] == '\n' {
						return "", false
					}
					c = p.b[p.i]
					p.i++
				}
				sub.WriteByte(c)
			}
			if p.i >= len(p.b) || p.b[p.i] != ']' {
				return "", false
			}
			p.i++
			return strings.ToLower(name.String()) + "." + sub.String(), true
		case isAlnum(c) || c == '-' || c == '.':
			name.WriteByte(c)
		default:
			return "", false
		}
	}
	return "", false
}

// variable parses "name", "name = value" or "name" alone (true) from
// the current byte, through the end of its line.
func (p *gitConfigParser) variable() (name, value string, ok bool) {
	start := p.i
	for p.i < len(p.b) && (isAlnum(p.b[p.i]) || p.b[p.i] == '-') {
		p.i++
	}
	name = strings.ToLower(string(p.b[start:p.i]))
	for p.i < len(p.b) && isGitSpace(p.b[p.i]) {
		p.i++
	}
	if p.i >= len(p.b) || p.b[p.i] == '\n' {
		return name, "true", true
	}
	if p.b[p.i] != '=' { // git: "name # comment" is an error too
		return "", "", false
	}
	p.i++
	var v strings.Builder
	quote, comment, spaces := false, false, 0
	for p.i < len(p.b) {
		c := p.b[p.i]
		p.i++
		if c == '\n' {
			if quote {
				return "", "", false
			}
			return name, v.String(), true
		}
		if comment {
			continue
		}
		if isGitSpace(c) && !quote {
			if v.Len() > 0 {
				spaces++
			}
			continue
		}
		if !quote && (c == ';' || c == '#') {
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			v.WriteByte(' ')
		}
		switch c {
		case '\\':
			if p.i >= len(p.b) {
				continue // git reads the end of the file as a newline: a continuation
			}
			e := p.b[p.i]
			p.i++
			switch e {
			case '\n':
				continue // continuation
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case 'n':
				e = '\n'
			case '\\', '"':
			default:
				return "", "", false
			}
			v.WriteByte(e)
		case '"':
			quote = !quote
		default:
			v.WriteByte(c)
		}
	}
	if quote {
		return "", "", false
	}
	return name, v.String(), true
}

// isGitSpace is git's isspace (sane-ctype.h) less the newline, which
// the parser handles itself.
func isGitSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }
func isAlpha(c byte) bool    { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool    { return isAlpha(c) || c >= '0' && c <= '9' }

// gitPathKeys are the keys whose whole value is a path git reads
// configuration, hooks or templates from (git-config(1)); "*" stands for
// any subsection.
var gitPathKeys = []string{
	"include.path", "includeif.*.path", "core.hookspath", "init.templatedir", "core.attributesfile",
}

// gitCommandKeys are the keys whose value is a command git runs (through
// the shell, in the top of the worktree), git-config(1) and gitattributes(5).
var gitCommandKeys = []string{
	"core.fsmonitor", "core.sshcommand", "core.editor", "core.pager", "core.askpass", "core.gitproxy",
	"sequence.editor", "diff.external", "diff.*.textconv", "diff.*.command",
	"filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver",
	"credential.helper", "credential.*.helper", "gpg.program", "gpg.*.program", "gpg.ssh.defaultkeycommand",
	"pager.*", "interactive.difffilter", "uploadpack.packobjectshook",
	"web.browser", "browser.*.cmd", "browser.*.path", "man.*.cmd", "man.*.path",
	"difftool.*.cmd", "difftool.*.path", "mergetool.*.cmd", "mergetool.*.path",
	"sendemail.smtpserver", "sendemail.sendmailcmd", "remote.*.receivepack", "remote.*.uploadpack",
	"submodule.*.update", "tar.*.command", "trailer.*.command", "trailer.*.cmd",
	// git 2.54 configuration-based hooks (git-hook(1)): run like .git/hooks
	// (red team round 6, R6-7).
	"hook.*.command",
}

// matchGitKey reports whether key (canonical) matches pattern, where a
// "*" component stands for any subsection (which may hold dots).
func matchGitKey(pattern, key string) bool {
	ps := strings.Split(pattern, ".")
	first, rest, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	sub, name := "", rest
	if i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	switch len(ps) {
	case 2:
		if ps[1] == "*" { // alias.*, pager.*: any name, no subsection
			return ps[0] == first && i < 0
		}
		return ps[0] == first && i < 0 && ps[1] == name
	case 3:
		return ps[0] == first && i >= 0 && (ps[1] == "*" || strings.EqualFold(ps[1], sub)) && ps[2] == name
	}
	return false
}

func matchAnyGitKey(patterns []string, key string) bool {
	for _, p := range patterns {
		if matchGitKey(p, key) {
			return true
		}
	}
	return false
}

// GitConfigReferences returns the absolute paths (cleaned, symbolic links
// not resolved) that the git configuration files in files, and the files
// they include, make git read as configuration, take hooks or templates
// from, or run as a program (the keys WithProtectedAgentConfig follows,
// see there), relative paths taken from worktree (the top of the
// repository's worktree) and "~/" from home. A file that does not exist
// or cannot be read contributes nothing; no error is returned. It runs
// nothing: the files are parsed (git-config(1) syntax). internal/sweep
// uses it for the repositories nested in a workspace.
func GitConfigReferences(files []string, worktree, home string) []string {
	return gitConfigReferences(files, worktree, home)
}

// gitConfigReferences returns the absolute paths (cleaned, not resolved)
// that the git configuration files in files, and the files they include,
// name as configuration to read (include.path, includeIf.*.path), hooks
// or templates (core.hooksPath, init.templateDir) or a program to run
// (core.fsmonitor, filter and diff drivers, aliases, …: every word of the
// command that is a path: it holds a "/" or starts with "."). Relative
// paths are taken from worktree (where git runs hooks and commands),
// include paths from the including file's directory, "~/" from home.
// Included files are read too (at most 10 levels, as git does); a file
// that cannot be read contributes nothing. Words holding "$" or a glob
// are skipped (the shell would expand them; GIT_DIR's files are
// protected by name).
func gitConfigReferences(files []string, worktree, home string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		// As git resolves it, ".." after a link physically
		// (lnk/../githooks with lnk -> deep/d1 is deep/githooks: red
		// team round 16, R16-12), and cleaned as written.
		forms := []string{filepath.Clean(p)}
		if r, ok := resolveWalk(p, nil); ok && r != forms[0] {
			forms = append(forms, r)
		}
		for _, f := range forms {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	expand := func(p, rel string) string {
		switch {
		case p == "~" || strings.HasPrefix(p, "~/"):
			if home == "" {
				return ""
			}
			return home + p[1:]
		case filepath.IsAbs(p):
			return p
		case strings.HasPrefix(p, "~") || strings.HasPrefix(p, "%("):
			return "" // ~user, %(prefix)/: not the workspace's
		}
		return rel + "/" + p // not Join: see add
	}
	read := map[string]bool{}
	var walk func(file string, depth int)
	walk = func(file string, depth int) {
		if depth > 10 || read[file] {
			return
		}
		read[file] = true
		b, err := readConfigFile(file)
		if err != nil {
			return
		}
		for _, e := range parseGitConfig(b, file) {
			switch {
			case matchAnyGitKey(gitPathKeys, e.key):
				base := worktree
				if strings.HasSuffix(e.key, ".path") {
					base = filepath.Dir(e.file)
				}
				p := expand(e.value, base)
				if p == "" {
					continue
				}
				add(p)
				if strings.HasSuffix(e.key, ".path") {
					walk(p, depth+1)
				}
			case matchAnyGitKey(gitCommandKeys, e.key):
				if e.key == "core.fsmonitor" && isGitBool(e.value) {
					continue
				}
				for _, w := range commandWords(e.value) {
					if p := expand(w, worktree); p != "" {
						add(p)
					}
				}
			}
		}
	}
	for _, f := range files {
		walk(f, 0)
	}
	return out
}

func isGitBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return true
	}
	return false
}

// maxGitConfig bounds what is read of one configuration file (1 MiB).
const maxGitConfig = 1 << 20

// readConfigFile reads a regular file of at most maxGitConfig bytes;
// anything else (a FIFO, a device, a directory: an include.path can name
// one) is an error, and never opened (regfile.Open: an open of a FIFO
// a command named released its writer, red team round 31, R31c-5).
func readConfigFile(name string) ([]byte, error) {
	return readRegular(regfile.Open(name, true))
}

// readRegularAt is readConfigFile for a file of the root r (a workspace
// file the command can write: .gitmodules): a FIFO there blocked
// landjail's start for ever, and landjail-mcp's past SIGTERM (red team
// round 26, R26a-10).
func readRegularAt(r *openat.Root, name string) ([]byte, error) {
	return readRegular(r.OpenFile(name, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0))
}

// readRegular reads f, opened non-blocking, when it is a regular file
// of at most maxGitConfig bytes (ErrInvalidPath otherwise), and closes
// it.
func readRegular(f *os.File, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxGitConfig {
		return nil, &fs.PathError{Op: "read", Path: f.Name(), Err: ErrInvalidPath}
	}
	return io.ReadAll(io.LimitReader(f, maxGitConfig))
}
