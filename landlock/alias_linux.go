package landlock

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/mountinfo"
)

// mountEntry is one line of /proc/self/mountinfo (proc(5)): the device
// (major:minor), the root of the mount within its file system, and where
// it is mounted.
type mountEntry struct {
	dev        string
	root, path string
}

// readMountinfo reads /proc/self/mountinfo, in its order (a later mount on
// the same point is above an earlier one).
func readMountinfo() ([]mountEntry, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var out []mountEntry
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		out = append(out, mountEntry{dev: f[2], root: mountinfo.Unescape(f[3]), path: mountinfo.Unescape(f[4])})
	}
	return out, sc.Err()
}

// under returns p's path below dir ("" for dir itself) and whether p is
// dir or lies below it (whole components).
func under(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	if dir == "/" {
		if !strings.HasPrefix(p, "/") {
			return "", false
		}
		return p[1:], true
	}
	if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
		return rest, true
	}
	return "", false
}

// maskAliases returns the other places where the view shows each masked
// path: the same file through another mount of its file system whose
// root holds it (a bind mount of the workspace elsewhere, toolbox's
// /run/host, a volume mounted twice). Landlock's rules are on inodes,
// so the workspace's rule grants the file there too, while a mask is a
// mount on one path (red team round 23, R23a-9: `.env` masked in the
// workspace was read at the bind mount's path). Each alias is checked to
// be the same file (device and inode, by lstat) and returned once;
// mountinfo unreadable: none (Compile's caller sees the masks as
// before).
func maskAliases(masks []string) []string {
	var out []string
	for _, a := range aliases(masks) {
		out = append(out, a.alias)
	}
	return out
}

// carveAliases gives each existing denied or read-only carve's other
// places (as maskAliases finds them) a carve of their own: under
// Landlock alone a rule granted outside the policy (the system preset's
// /usr) reached the workspace's denied .env through a bind mount of the
// workspace below it (red team round 26, R26a-4). mountinfo is read
// only when there is such a carve.
func carveAliases(carves []carve) []carve {
	var paths []string
	byPath := map[string]carve{}
	for _, c := range carves {
		if c.exists && (deniedSource(c.source) || readOnlySource(c.source)) {
			if _, dup := byPath[c.path]; !dup || deniedSource(c.source) {
				byPath[c.path] = c
			}
			paths = append(paths, c.path)
		}
	}
	var out []carve
	for _, a := range aliases(paths) {
		c := byPath[a.of]
		out = append(out, carve{path: a.alias, access: c.access, source: c.source, exists: true})
	}
	return out
}

// alias is one other place (alias) of the path of.
type alias struct{ alias, of string }

// aliases returns the other places where each of paths shows through
// another mount of its file system (maskAliases).
func aliases(paths []string) []alias {
	if len(paths) == 0 {
		return nil
	}
	mounts, err := readMountinfo()
	if err != nil || len(mounts) < 2 {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range paths {
		seen[m] = true
	}
	var out []alias
	for _, p := range paths {
		// The mount p is on: the last of those with the longest
		// mount point holding it.
		hold := -1
		for i, e := range mounts {
			if _, ok := under(p, e.path); ok && (hold < 0 || len(e.path) >= len(mounts[hold].path)) {
				hold = i
			}
		}
		if hold < 0 {
			continue
		}
		rel, _ := under(p, mounts[hold].path)
		fsPath := filepath.Join(mounts[hold].root, rel)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil {
			continue
		}
		for i, e := range mounts {
			if i == hold || e.dev != mounts[hold].dev {
				continue
			}
			below, ok := under(fsPath, e.root)
			if !ok {
				continue
			}
			a := filepath.Join(e.path, below)
			if seen[a] {
				continue
			}
			var ast unix.Stat_t
			if unix.Lstat(a, &ast) != nil || ast.Dev != st.Dev || ast.Ino != st.Ino {
				continue
			}
			seen[a] = true
			out = append(out, alias{a, p})
		}
	}
	return out
}
