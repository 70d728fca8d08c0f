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
	if len(masks) == 0 {
		return nil
	}
	mounts, err := readMountinfo()
	if err != nil || len(mounts) < 2 {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range masks {
		seen[m] = true
	}
	var out []string
	for _, p := range masks {
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
			alias := filepath.Join(e.path, below)
			if seen[alias] {
				continue
			}
			var ast unix.Stat_t
			if unix.Lstat(alias, &ast) != nil || ast.Dev != st.Dev || ast.Ino != st.Ino {
				continue
			}
			seen[alias] = true
			out = append(out, alias)
		}
	}
	return out
}
