package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/landjail/landjail/internal/cliopts"
)

// commandHome is the command's HOME and whether it must be granted
// read-write (cliopts.Options.CommandHome). When the default, a private
// directory under the caller's cache directory, cannot be made because
// the caller's HOME is not writable (`docker run --user 1000` with
// HOME=/, setpriv keeping root's HOME), the HOME is a private directory
// inside the private TMPDIR instead (granted with it), said in one line
// on stderr: caches then last as long as that TMPDIR. So it is when the
// default's name is taken by what is not that user's directory
// (cliopts.ErrForeignDir: with --user, another local user made it first
// in /tmp; red team round 27, R27b-1). A --home DIR that
// cannot be made stays an error: the user chose it.
func (p *Plan) commandHome() (string, bool, error) {
	home, grant, err := p.Options.CommandHome(p.WS.Root(), p.set.Credential)
	if err == nil || p.Options.Home != "" || p.tmp == nil || !(errors.Is(err, fs.ErrPermission) || errors.Is(err, cliopts.ErrForeignDir)) {
		return home, grant, err
	}
	dir := filepath.Join(p.tmp.path(), "home")
	r, err2 := os.OpenRoot(p.tmp.path())
	if err2 != nil {
		return "", false, fmt.Errorf("private HOME: %w", err2)
	}
	defer r.Close()
	// The TMPDIR is kept between runs and the command's: a "home" that
	// is not a directory (a link an earlier run planted) is removed, the
	// link itself, not what it names, and made again (red team round 20,
	// R20b-7: every later run stopped with "path escapes from parent").
	if fi, err := r.Lstat("home"); err == nil && !fi.IsDir() {
		if err := r.Remove("home"); err != nil {
			return "", false, fmt.Errorf("private HOME: %w", err)
		}
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if c := p.set.Credential; c != nil {
		uid, gid = int(c.Uid), int(c.Gid)
	}
	// One this call did not make is used only if it is already that
	// user's: a directory of another user moved there (the TMPDIR is the
	// command's user's) was handed to the command's user (red team round
	// 30, R30d-4).
	if err := cliopts.EnsureOwnDir(p.tmp.path(), "home", uid, gid); err != nil {
		return "", false, fmt.Errorf("private HOME: %w", err)
	}
	fmt.Fprintf(p.set.Stderr, "landjail: no private HOME at its usual place (%s); the command's HOME is %s, inside its private TMPDIR\n", strings.TrimPrefix(err.Error(), "--home: "), dir)
	return dir, true, nil
}
