package learn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/landjail/landjail/jail"
)

// Execution-bearing paths (red team R6-3).
//
// The command under --learn is untrusted and chooses what it is refused,
// so a write it provokes must not become a grant that lets the next run
// plant code the user then runs outside the sandbox. A write or create
// grant (rw) is never learned, whatever the roots, for:
//
//   - anything inside a directory named .git (hooks, config, the
//     repositories of submodules and worktrees);
//   - the user's HOME or a directory above it (a grant of it covers the
//     shell start-up files);
//   - below HOME or below a directory that holds a .git entry (a
//     repository's top): what jail.WithProtectedAgentConfig protects
//     there (jail.AgentConfigPaths: shell start-up files, ~/.gitconfig,
//     ~/.config/git, ~/.local/bin, editor, direnv and agent
//     configuration; jail.AgentConfigPatterns;
//     jail.AgentConfigNestedPatterns at any depth; the scripts the git
//     configuration names), or a directory above one of them (~/.config
//     holds ~/.config/git);
//   - any directory of a repository (a create grant covers everything
//     below it: a nested repository's .git/config, a .envrc, a .vscode/);
//   - a directory with a repository anywhere below it, or with more than
//     maxRepoScan entries below it (not searched to the end);
//   - the system's code and configuration (red team R8-4), a directory
//     above one, or anything below one: systemRoots (/etc, /usr, /bin,
//     /sbin, /lib*, /boot, /opt, /root, /run, /var/lib, /var/spool,
//     /var/cache, /var/log, /var/mail, /var/backups, /var/opt,
//     /var/local, /mnt, /media), every absolute directory on the caller's PATH and
//     LD_LIBRARY_PATH, and every directory /etc/ld.so.conf lists (a
//     cron job, a login-shell script, a unit, a program found before the
//     real one on PATH, a library the loader picks up). The root
//     directory / holds them all.
//
// Reads and executes (ro, rox) are not affected. What is not covered:
// names below a directory of HOME other than the ones above (a cache
// directory stays learnable), the files of a repository that are not
// agent configuration (its Makefile, package.json scripts), relative
// PATH entries (".", ""), and what a server runs on request from its
// data (/srv, /var/www: a CGI or PHP script): /srv is left learnable,
// it holds a site's data by the FHS and nothing on the system runs from
// it by itself; a repository served from it is refused by the rules
// above.

// execPrefix starts the reason of every execution-bearing refusal.
const execPrefix = "could plant code that runs outside the sandbox; the command chooses its refusals: "

// execRules answers why for one Decide: HOME as it is then, and
// one jail.Workspace per directory asked about (HOME, each repository's
// top), closed by close.
type execRules struct {
	home string // canonical; "" when unknown
	// homes are every other user's home directory (passwdHomes),
	// canonical: their start-up files run as that user, and a --user
	// run's is another's (red team round 27, R27f-1).
	homes []string
	sys   []sysLoc // system code locations, as named and canonical: systemLocations
	ws    map[string]*jail.Workspace
	errs  map[string]error
}

func newExecRules() *execRules {
	e := &execRules{ws: map[string]*jail.Workspace{}, errs: map[string]error{}, sys: systemLocations()}
	if h := jail.HomeDir(); h != "" {
		if c, err := filepath.EvalSymlinks(h); err == nil {
			e.home = c
		}
	}
	for _, h := range passwdHomes("/etc/passwd") {
		if h != e.home {
			e.homes = append(e.homes, h)
		}
	}
	return e
}

// passwdHomes returns the home directories passwd (passwd(5): the sixth
// field) names that exist as directories, canonical, "/" left out: every
// user's, not only the caller's (red team round 27, R27f-1: root's
// `--user 1000 --learn` learned rw of /home and of /home/USER/.bashrc).
func passwdHomes(passwd string) []string {
	b, err := os.ReadFile(passwd)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 7 || !filepath.IsAbs(f[5]) {
			continue
		}
		c, err := filepath.EvalSymlinks(f[5])
		if err != nil || c == "/" || seen[c] {
			continue
		}
		if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out
}

func (e *execRules) close() {
	for _, w := range e.ws {
		w.Close()
	}
}

// why returns the reason an rw grant of target (canonical; dir: a
// directory, granted for a create refused in it) is refused by design, ""
// when it may be learned.
func (e *execRules) why(target string, dir bool) string {
	if slices.Contains(strings.Split(target, "/"), ".git") {
		return execPrefix + "inside a .git directory"
	}
	if e.home != "" {
		if holds(target, e.home) {
			return execPrefix + "the user's HOME or a directory above it (its start-up files)"
		}
		if holds(e.home, target) {
			if w := e.agentConfig(e.home, target, dir); w != "" {
				return execPrefix + w + " in the user's HOME"
			}
			if w := appProfile(e.home, target); w != "" {
				return execPrefix + w
			}
		}
	}
	if why := e.system(target); why != "" {
		return execPrefix + why
	}
	for _, h := range e.homes {
		if holds(target, h) {
			return execPrefix + "the home directory of another user (" + h + ") or a directory above it (its start-up files)"
		}
		if holds(h, target) {
			if w := e.agentConfig(h, target, dir); w != "" {
				return execPrefix + w + " in " + h + ", another user's home directory"
			}
			if w := appProfile(h, target); w != "" {
				return execPrefix + w
			}
		}
	}
	for d := target; ; d = filepath.Dir(d) {
		if isGitDir(d) {
			// A bare repository (~/.cfg of a bare dotfiles set-up, a
			// served proj.git): its hooks and config run on the user's
			// next git command there (red team round 13, R13-4).
			return execPrefix + "inside the git directory " + d
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if dir {
				return execPrefix + "a directory of the git repository " + d + " (agent configuration or a repository could be made below it)"
			}
			if w := e.agentConfig(d, target, false); w != "" {
				return execPrefix + w + " of the git repository " + d
			}
		}
		if d == "/" || d == "." {
			break
		}
	}
	if dir {
		if why := repositoryBelow(target); why != "" {
			return execPrefix + why
		}
		if why := agentConfigBelow(target); why != "" {
			return execPrefix + why
		}
	}
	return ""
}

// appProfiles are the directories of HOME where desktop applications
// keep their profiles: preferences (Firefox's user.js), extensions and
// their state, which the unconfined application loads at its next start
// (red team round 31, R31b-2: a create refused in a Firefox profile was
// learned as rw of the profile, and the next run wrote user.js there).
// Flatpak applications keep theirs under ~/.var/app.
var appProfiles = []string{
	".mozilla", ".thunderbird", ".librewolf", ".waterfox", ".var/app",
	".config/google-chrome", ".config/google-chrome-beta", ".config/chromium", ".config/BraveSoftware",
	".config/microsoft-edge", ".config/vivaldi", ".config/opera",
	// Snap applications keep HOME-like trees of their own there:
	// ~/snap/firefox/common/.mozilla, ~/snap/chromium/common/chromium
	// (red team round 32, R32c-14).
	"snap",
	// Settings and trust databases that run or pre-approve code: GNOME's
	// custom key-binding commands, direnv's allow list, Neovim's trust
	// database, SQLite's and ptpython's start-up files, a zsh framework
	// (red team round 32, R32c-6).
	".config/dconf", ".local/share/direnv", ".local/state/nvim", ".config/sqlite3", ".config/ptpython", ".zim",
}

// appProfile says why target, in or above an application's profile
// directory of home (appProfiles), is not learned as rw; "" when it is
// in none.
func appProfile(home, target string) string {
	for _, a := range appProfiles {
		d := filepath.Join(home, a)
		if holds(d, target) || holds(target, d) {
			return "an application's profile (" + d + "): preferences and extensions its unconfined application loads at its next start"
		}
	}
	return ""
}

// agentConfigBelow names an existing file or directory below dir (dir
// included) that --protect-agent-config protects with dir as the
// workspace: the project's names (.claude/settings.json, .mcp.json,
// .vscode/tasks.json, mise.toml) in a directory that is no repository,
// and what HOME's start-up files and agent configuration link to there
// (~/.bashrc -> dotfiles/bash/.bashrc in a dotfiles folder without
// .git); "" for none (red team round 15, R15a-9, R15a-14: such a
// directory was learned as an rw grant).
func agentConfigBelow(dir string) string {
	ws, err := jail.New(dir, jail.WithProtectedAgentConfig())
	if err != nil {
		return "cannot check for agent configuration below it (" + err.Error() + ")"
	}
	defer ws.Close()
	for _, p := range ws.AgentConfigProtected() {
		if !holds(dir, p) {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			return "agent configuration, a start-up file or a script git runs lies below it (" + p + ")"
		}
	}
	return ""
}

// isGitDir reports whether dir is laid out as a git directory by git's
// own test (setup.c is_git_directory): a HEAD, and objects/ and refs/
// or a commondir.
func isGitDir(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, "HEAD")); err != nil || fi.IsDir() {
		return false
	}
	if _, err := os.Lstat(filepath.Join(dir, "commondir")); err == nil {
		return true
	}
	o, err1 := os.Stat(filepath.Join(dir, "objects"))
	r, err2 := os.Stat(filepath.Join(dir, "refs"))
	return err1 == nil && err2 == nil && o.IsDir() && r.IsDir()
}

// systemRoots are the system's code and configuration locations: what
// runs as root or as every user without being asked (cron and at jobs,
// systemd units and generators, login-shell scripts, sudoers, the
// loader's configuration, package scripts under /var/lib/dpkg), the
// programs and libraries found by default, and root's own start-up files
// (/root, when HOME is another directory: sudo -E).
var systemRoots = []string{
	"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/boot", "/opt", "/root", "/var/lib", "/var/spool",
	// Web roots, served repositories and service data (red team round
	// 32, R32c-11).
	"/srv",
	// What root's own tools read back as trusted state, and the system's
	// records: apt's and debconf's caches (package maintainer scripts run
	// as root read debconf's database), the logs (wtmp, auth.log, the
	// journal), mail spools, backups, /var/opt and /var/local; and the
	// mount points of other file systems (red team round 27, R27f-4: one
	// refused create in each had learned rw of the whole directory).
	"/var/cache", "/var/log", "/var/mail", "/var/backups", "/var/opt", "/var/local", "/mnt", "/media",
	// What root's daemons run or load from /var (NIS maps' Makefile,
	// the KDC's configuration and plugins, BIND's and qmail's
	// configuration, sudo's state, Guix profiles, web roots), the other
	// EFI system partition mount point and package stores, lost+found
	// (red team round 30, R30d-5).
	"/var/yp", "/var/kerberos", "/var/named", "/var/qmail", "/var/db", "/var/guix", "/var/www",
	"/efi", "/nix", "/gnu", "/snap", "/lost+found",
	// All of /run: systemd's runtime units, and a user's transient units
	// under /run/user/UID/systemd (red team round 9, R9-6).
	"/run",
}

// maxLdConf bounds the files systemLocations reads for /etc/ld.so.conf
// and its includes (Debian ships 3; a loop of includes must end).
const maxLdConf = 64

// sysLoc is one system location and what it is, for the reason.
type sysLoc struct{ path, what string }

// systemLocations returns systemRoots, the absolute entries of PATH and
// LD_LIBRARY_PATH, and the directories /etc/ld.so.conf lists (its
// includes followed up to maxLdConf files), each cleaned and, where it
// exists, also with its symbolic links resolved (/bin is /usr/bin on a
// merged /usr; a grant names the real path). Sorted by path; the first
// class named keeps a path listed twice.
func systemLocations() []sysLoc {
	var locs []sysLoc
	add := func(what string, paths ...string) {
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				continue // "." or "": relative to whatever directory a shell is in
			}
			p = filepath.Clean(p)
			locs = append(locs, sysLoc{p, what})
			if c, err := filepath.EvalSymlinks(p); err == nil && c != p {
				locs = append(locs, sysLoc{c, what})
			}
		}
	}
	add("the system's code and configuration", systemRoots...)
	// Devices and kernel interfaces the host's processes share: a named
	// semaphore or shared memory in /dev/shm, a terminal, a sysfs or
	// procfs knob (red team round 11, R11a-11: rw /dev/shm let a later
	// run stall a host process's semaphore).
	add("devices and kernel interfaces shared with the host", "/dev", "/proc", "/sys")
	add("a directory on PATH", filepath.SplitList(os.Getenv("PATH"))...)
	// The links on a PATH entry's way (Nix's and Guix's profile links,
	// re-pointed by whoever may write their directory: red team round
	// 20, R20b-3).
	var chain []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			chain = append(chain, jail.LinkChain(filepath.Clean(d))...)
		}
	}
	add("a symbolic link on the way to a directory on PATH", chain...)
	add("a directory on LD_LIBRARY_PATH", filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))...)
	add("a directory of the loader's search (/etc/ld.so.conf)", ldSoConf("/etc/ld.so.conf", new(int))...)
	slices.SortStableFunc(locs, func(a, b sysLoc) int { return strings.Compare(a.path, b.path) })
	return slices.CompactFunc(locs, func(a, b sysLoc) bool { return a.path == b.path })
}

// ldSoConf returns the directories the ld.so.conf file at name lists,
// following "include GLOB" lines (a relative GLOB from name's
// directory); n counts the files read, bounded by maxLdConf. An
// unreadable file lists nothing (/etc itself is refused anyway).
func ldSoConf(name string, n *int) []string {
	if *n++; *n > maxLdConf {
		return nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	var dirs []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "include"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			for _, g := range strings.Fields(rest) {
				if !filepath.IsAbs(g) {
					g = filepath.Join(filepath.Dir(name), g)
				}
				files, _ := filepath.Glob(g)
				for _, f := range files {
					dirs = append(dirs, ldSoConf(f, n)...)
				}
			}
			continue
		}
		if strings.HasPrefix(line, "/") {
			dirs = append(dirs, strings.Fields(line)...)
		}
	}
	return dirs
}

// system names the system location target (canonical) is, lies below or
// holds, "" for none.
func (e *execRules) system(target string) string {
	for _, l := range e.sys {
		switch {
		case holds(l.path, target):
			return "in " + l.path + ", " + l.what
		case holds(target, l.path):
			return "a directory above " + l.path + ", " + l.what
		}
	}
	return ""
}

// maxRepoScan bounds the entries repositoryBelow visits: a directory
// grant covers everything below it, so the search for a repository there
// must finish, and a larger tree is refused rather than half searched
// (BenchmarkRepositoryBelow: 61-67 ms for 99,001 entries, warm cache,
// 2-core VM under load).
var maxRepoScan = 100_000

// repositoryBelow names a git repository (an entry named .git) anywhere
// below dir, or says that dir holds more than maxRepoScan entries; ""
// when neither. Symbolic links are not followed (a link to a repository
// is not the repository: a grant of dir does not reach through it).
func repositoryBelow(dir string) string {
	n := 0
	var found, why, project string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				why = "cannot be searched for a git repository below it (" + err.Error() + ")"
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			why = "a directory below it cannot be searched for a git repository (" + err.Error() + ")"
			return fs.SkipAll
		}
		if n++; n > maxRepoScan {
			why = fmt.Sprintf("more than %d entries below it were not searched for a git repository; grant it by hand if it is meant", maxRepoScan)
			return fs.SkipAll
		}
		if p != dir && d.Name() == ".git" {
			found = filepath.Dir(p)
			return fs.SkipAll
		}
		if d.IsDir() && isGitDir(p) {
			// A bare repository (/srv/git/proj.git): its hooks run on
			// the next push to it (red team round 32, R32c-15).
			found = p
			return fs.SkipAll
		}
		if !d.IsDir() && projectMarkers[d.Name()] {
			// A project's own directory without git (cargo new --vcs
			// none, an unpacked source tree): .cargo/config.toml,
			// .npmrc or a Makefile planted there runs at the user's
			// next build in it (red team round 32, R32c-11).
			found, project = filepath.Dir(p), d.Name()
			return fs.SkipAll
		}
		return nil
	})
	switch {
	case project != "":
		return "the project " + found + " (" + project + ") lies at or below it: its build runs what is planted there (.cargo/config.toml, .npmrc, a Makefile)"
	case found != "":
		return "the git repository " + found + " lies below it (its .git, hooks and agent configuration)"
	}
	return why
}

// projectMarkers are the files that make a directory a project whose
// build tool reads configuration (and runs code) from it and the
// directories above it.
var projectMarkers = map[string]bool{
	"Cargo.toml": true, "package.json": true, "go.mod": true, "pyproject.toml": true, "setup.py": true,
	"setup.cfg": true, "Makefile": true, "makefile": true, "GNUmakefile": true, "CMakeLists.txt": true,
	"meson.build": true, "build.gradle": true, "build.gradle.kts": true, "pom.xml": true, "Gemfile": true,
	"composer.json": true, "mix.exs": true, "deno.json": true, "build.sbt": true, "Rakefile": true,
}

// agentConfig names what --protect-agent-config protects at target
// relative to root (or, for a directory, below it), "" for nothing.
func (e *execRules) agentConfig(root, target string, dir bool) string {
	const what = "agent configuration, a start-up file or a script git runs"
	ws, ok := e.ws[root]
	if !ok && e.errs[root] == nil {
		var err error
		if ws, err = jail.New(root, jail.WithProtectedAgentConfig()); err != nil {
			e.errs[root] = err
		} else {
			e.ws[root] = ws
		}
	}
	if ws == nil {
		return "cannot check for agent configuration (" + e.errs[root].Error() + ")"
	}
	if _, err := ws.Check(target, jail.Write); errors.Is(err, jail.ErrReadOnly) || errors.Is(err, jail.ErrDenied) {
		return what
	}
	if dir {
		for _, p := range jail.AgentConfigPaths {
			if strings.ContainsAny(p, "*?[") {
				continue // a pattern of names in one directory: matched by Check above
			}
			if holds(target, filepath.Join(root, p)) {
				return what + " below it"
			}
		}
	}
	return ""
}

// holds reports whether p is dir or below it, on whole components
// (dir "/" holds every absolute path).
func holds(dir, p string) bool {
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}
