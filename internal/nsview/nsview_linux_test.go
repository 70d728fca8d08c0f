package nsview_test

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/internal/osthread"
)

// requireViews skips (or, with LANDJAIL_REQUIRE_KERNEL=1, fails) the test
// when this process cannot build namespace views, and checks at cleanup
// that the host's mount table did not change. Under
// LANDJAIL_EMULATE=ns=EPERM or ns=ENOSYS the test cannot exist and skips
// (kerneltest.RequireNamespaces); what Enter does there is
// TestEnterUnavailable's and TestEnterErrors' fallback rows.
func requireViews(t *testing.T) {
	t.Helper()
	kerneltest.RequireNamespaces(t, nsview.Probe())
	checkHostMounts(t)
}

// checkHostMounts checks at cleanup that the host's mount table did not
// change.
func checkHostMounts(t *testing.T) {
	t.Helper()
	before := mountinfo(t)
	t.Cleanup(func() { checkMounts(t, before, mountinfo(t)) })
}

// checkMounts fails the test when a mount appeared or disappeared in the
// host's table on a mount point a view touches ("/", /tmp, /dev/shm, the
// test's scratch trees under os.TempDir()). Other changes are logged
// only: other processes on this machine mount things too.
func checkMounts(t *testing.T, before, after string) {
	t.Helper()
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	b, a := set(before), set(after)
	for _, d := range []struct {
		what     string
		in, from map[string]bool
	}{{"appeared", a, b}, {"disappeared", b, a}} {
		for l := range d.in {
			if d.from[l] || l == "" {
				continue
			}
			f := strings.Fields(l)
			mp := ""
			if len(f) > 4 {
				mp = f[4]
			}
			if mp == "/" || mp == "/dev/shm" || mp == os.TempDir() || strings.HasPrefix(mp, os.TempDir()+"/") {
				t.Errorf("host mount table: %s: %s", d.what, l)
			} else {
				t.Logf("host mount table (another process?): %s: %s", d.what, l)
			}
		}
	}
}

func mountinfo(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	return string(b)
}

// inView runs fn on a fresh locked thread that entered v; the thread dies
// afterwards. Enter's error is returned as is, fn's too.
func inView(v nsview.View, fn func() error) error {
	return osthread.Run(func() error {
		if err := v.Enter(); err != nil {
			return err
		}
		return fn()
	})
}

// tree is the scratch layout every view test builds: a workspace with
// secrets to mask, and an "outside" root-owned tree that stands in for
// system files (tests never touch real ones).
type tree struct {
	base, ws, out string
}

func newTree(t *testing.T) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{base: base, ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside")}
	for name, data := range map[string]string{
		"ws/.env":              "SECRET",
		"ws/a.txt":             "a",
		"ws/prog":              "#!/bin/sh\n",
		"ws/sub/.env":          "SUBSECRET",
		"ws/sub/code.go":       "package sub\n",
		"ws/secrets/key":       "KEY",
		"ws/deep/.kube/config": "KUBE",
		"ws/lib/vendor/x":      "V",
		"ws/free/f":            "F",
		"outside/prog":         "OUT",
		"outside/data.db":      "DB",
	} {
		p := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	require.NoError(t, os.Chmod(filepath.Join(base, "outside/prog"), 0o755))
	require.NoError(t, os.Chmod(filepath.Join(base, "ws/prog"), 0o755))
	return tr
}

func (tr tree) view() nsview.View {
	return nsview.New().Writable(tr.ws).Mask(tr.ws+"/.env", tr.ws+"/sub/.env", tr.ws+"/secrets")
}

// run runs one check as a child of the calling thread, in the workspace:
// argv[0] "sh" runs a shell script, anything else is a helperOp.
func (tr tree) run(argv []string, vars map[string]string) (string, error) {
	args := make([]string, len(argv))
	for i, a := range argv {
		for k, v := range vars {
			a = strings.ReplaceAll(a, k, v)
		}
		a = strings.ReplaceAll(a, "$WS", tr.ws)
		a = strings.ReplaceAll(a, "$OUT", tr.out)
		args[i] = a
	}
	var cmd *osexec.Cmd
	if args[0] == "sh" {
		cmd = osexec.Command("/bin/sh", "-c", args[1])
	} else {
		cmd = osexec.Command("/proc/self/fd/3", args...)
		cmd.ExtraFiles = []*os.File{helperBin}
		cmd.Env = append(os.Environ(), envHelper+"=1")
	}
	cmd.Dir = tr.ws
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// checkHost asserts that the host still sees every secret and the outside
// tree unchanged.
func (tr tree) checkHost(t *testing.T) {
	t.Helper()
	for name, want := range map[string]string{
		"ws/.env": "SECRET", "ws/sub/.env": "SUBSECRET", "ws/secrets/key": "KEY",
		"outside/prog": "OUT", "outside/data.db": "DB",
	} {
		b, err := os.ReadFile(filepath.Join(tr.base, name))
		if assert.NoError(t, err, "host: %s", name) {
			assert.Equal(t, want, string(b), "host: %s", name)
		}
	}
	var st unix.Stat_t
	require.NoError(t, unix.Stat(tr.out+"/prog", &st))
	assert.Equal(t, uint32(0o755), st.Mode&0o7777, "host: outside/prog mode")
	assert.NotEqual(t, int64(1), st.Mtim.Sec, "host: outside/prog mtime")
	_, err := unix.Lgetxattr(tr.out+"/prog", "user.nsview", nil)
	assert.ErrorIs(t, err, unix.ENODATA, "host: outside/prog xattr")
}

type viewCase struct {
	name    string
	argv    []string
	view    string // expected output (helperOp result) inside the view
	control string // expected output from a plain child: the attack works unconfined
	host    func(t *testing.T, tr tree)
}

func hostHas(rel, want string) func(t *testing.T, tr tree) {
	return func(t *testing.T, tr tree) {
		b, err := os.ReadFile(filepath.Join(tr.ws, rel))
		if assert.NoError(t, err, "host: %s", rel) {
			assert.Equal(t, want, string(b), "host: %s", rel)
		}
	}
}

// check runs tc in a fresh tree from a thread in view(tree), checks the
// output and the host side, then runs it again (the control) in another
// fresh tree from a plain locked thread: the attack works unconfined.
func (tc viewCase) check(t *testing.T, view func(tree) nsview.View) {
	t.Helper()
	tr := newTree(t)
	var got string
	require.NoError(t, inView(view(tr), func() (err error) {
		got, err = tr.run(tc.argv, nil)
		return err
	}))
	assert.Equal(t, tc.view, got, "in the view")
	tr.checkHost(t)
	if tc.host != nil {
		tc.host(t, tr)
	}
	ctl := newTree(t)
	got, err := ctl.run(tc.argv, nil)
	require.NoError(t, err)
	assert.Equal(t, tc.control, got, "control (no view)")
}

// TestViewFileSystem: masks, the unfrozen workspace root, and read-only
// metadata outside the writable roots. Each case runs in a fresh tree,
// once from a thread in the view and once (the control) from a plain
// locked thread.
func TestViewFileSystem(t *testing.T) {
	requireViews(t)
	for _, tc := range []viewCase{
		{name: "masked file refused", argv: []string{"nocaps-read", ".env"}, view: "EACCES", control: "SECRET"},
		{name: "masked nested file refused", argv: []string{"nocaps-read", "sub/.env"}, view: "EACCES", control: "SUBSECRET"},
		{name: "masked directory refused", argv: []string{"nocaps-readdir", "secrets"}, view: "EACCES", control: "key"},
		{name: "file in masked directory refused", argv: []string{"nocaps-read", "secrets/key"}, view: "EACCES", control: "KEY"},
		{name: "masked file mode", argv: []string{"mode", ".env"}, view: "0", control: "644"},
		{name: "masked directory mode", argv: []string{"mode", "secrets"}, view: "0", control: "755"},
		{name: "touch NEW at workspace root", argv: []string{"sh", "touch NEW && echo ok"}, view: "ok", control: "ok",
			host: hostHas("NEW", "")},
		{name: "sed -i at workspace root", argv: []string{"sh", "sed -i s/a/b/ a.txt && cat a.txt"}, view: "b", control: "b",
			host: hostHas("a.txt", "b")},
		{name: "mkdir and rm -r at workspace root", argv: []string{"sh", "mkdir -p d/e && touch d/e/f && rm -r d && echo ok"}, view: "ok", control: "ok"},
		{name: "rename masked file", argv: []string{"rename", ".env", "x"}, view: "EBUSY", control: "ok"},
		{name: "rename masked directory", argv: []string{"rename", "secrets", "x"}, view: "EBUSY", control: "ok"},
		{name: "rename over masked file", argv: []string{"rename", "a.txt", ".env"}, view: "EBUSY", control: "ok"},
		{name: "unlink masked file", argv: []string{"unlink", ".env"}, view: "EBUSY", control: "ok"},
		{name: "hard link masked file", argv: []string{"link", ".env", "hl"}, view: "EXDEV", control: "ok"},
		{name: "write masked file", argv: []string{"write", ".env"}, view: "EROFS", control: "ok"},
		{name: "chmod masked file", argv: []string{"chmod4755", ".env"}, view: "EROFS", control: "ok"},
		{name: "create in masked directory", argv: []string{"create", "secrets/new"}, view: "EROFS", control: "ok"},
		{name: "cp -r of the parent fails loudly", argv: []string{"sh", "setpriv --inh-caps=-all --bounding-set=-all -- cp -r sub sub2 2>/dev/null || echo refused"}, view: "refused", control: ""},
		{name: "write in workspace", argv: []string{"write", "a.txt"}, view: "ok", control: "ok", host: hostHas("a.txt", "ax")},
		{name: "chmod in workspace", argv: []string{"chmod4755", "prog"}, view: "ok", control: "ok"},
		{name: "chmod 04755 outside", argv: []string{"chmod4755", "$OUT/prog"}, view: "EROFS", control: "ok"},
		{name: "chown outside", argv: []string{"chown", "$OUT/prog"}, view: "EROFS", control: "ok"},
		{name: "utime outside", argv: []string{"utime", "$OUT/prog"}, view: "EROFS", control: "ok"},
		{name: "setxattr outside", argv: []string{"setxattr", "$OUT/prog"}, view: "EROFS", control: "ok"},
		{name: "truncate outside", argv: []string{"truncate", "$OUT/data.db"}, view: "EROFS", control: "ok"},
		{name: "write outside", argv: []string{"write", "$OUT/data.db"}, view: "EROFS", control: "ok"},
		{name: "create outside", argv: []string{"create", "$OUT/new"}, view: "EROFS", control: "ok"},
		{name: "chmod outside through ..", argv: []string{"chmod4755", "../outside/prog"}, view: "EROFS", control: "ok"},
		{name: "outside stays readable", argv: []string{"read", "$OUT/prog"}, view: "OUT", control: "OUT"},
		{name: "host /dev/null writable", argv: []string{"write", "/dev/null"}, view: "ok", control: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, tree.view) })
	}
}

// TestViewReadOnly: a read-only path inside a writable root refuses
// writes, chmod and creation (EROFS) and cannot be renamed away (EBUSY),
// while its parent, the workspace root, stays writable and a mask below
// it still holds.
func TestViewReadOnly(t *testing.T) {
	requireViews(t)
	for _, tc := range []viewCase{
		{name: "write read-only file", argv: []string{"write", "a.txt"}, view: "EROFS", control: "ok"},
		{name: "chmod read-only file", argv: []string{"chmod4755", "a.txt"}, view: "EROFS", control: "ok"},
		{name: "rename read-only file", argv: []string{"rename", "a.txt", "x"}, view: "EBUSY", control: "ok"},
		{name: "create in read-only directory", argv: []string{"create", "sub/new"}, view: "EROFS", control: "ok"},
		{name: "write in read-only directory", argv: []string{"write", "sub/code.go"}, view: "EROFS", control: "ok"},
		{name: "mask below read-only directory", argv: []string{"read", "sub/.env"}, view: "", control: "SUBSECRET"},
		{name: "read-only file stays readable", argv: []string{"read", "a.txt"}, view: "a", control: "a"},
		{name: "workspace root stays writable", argv: []string{"sh", "touch NEW && echo ok"}, view: "ok", control: "ok",
			host: hostHas("NEW", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, func(tr tree) nsview.View { return tr.view().ReadOnly(tr.ws+"/a.txt", tr.ws+"/sub") })
		})
	}
}

// TestViewPins: the directories between the workspace root and a mask or
// a read-only path are mount points of their own in the view, so they
// cannot be renamed or removed (EBUSY): a command cannot move a masked
// file's parent away (a renamed ".kube" takes ".kube/config" out of the
// pattern "**/.kube/config" for the next run) or a read-only directory's
// parent (leaving a decoy at its name). Directories holding nothing
// protected stay free (control rows), and so does the workspace root.
func TestViewPins(t *testing.T) {
	requireViews(t)
	for _, tc := range []viewCase{
		{name: "rename a mask's parent", argv: []string{"rename", "deep/.kube", "k"}, view: "EXDEV", control: "ok"}, // the mount point is on another mount than its new name
		{name: "rename a mask's grandparent", argv: []string{"rename", "deep", "d2"}, view: "EBUSY", control: "ok"},
		{name: "remove a mask's parent", argv: []string{"sh", "rm -rf deep 2>/dev/null; test -d deep/.kube && echo kept || echo gone"}, view: "kept", control: "gone"},
		{name: "rename a read-only path's parent", argv: []string{"rename", "lib", "lib2"}, view: "EBUSY", control: "ok"},
		{name: "the mask holds", argv: []string{"read", "deep/.kube/config"}, view: "", control: "KUBE"},
		{name: "a free directory can be renamed", argv: []string{"rename", "free", "free2"}, view: "ok", control: "ok"},
		{name: "the pinned directory stays writable", argv: []string{"sh", "touch deep/new && echo ok"}, view: "ok", control: "ok",
			host: hostHas("deep/new", "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, func(tr tree) nsview.View {
				return tr.view().Mask(tr.ws + "/deep/.kube/config").ReadOnly(tr.ws + "/lib/vendor")
			})
		})
	}
}

// TestViewWritableBelowReadOnly: a writable root nested in a read-only
// path (--ro DIR --rw DIR/sub) stays writable; the rest of DIR does not.
func TestViewWritableBelowReadOnly(t *testing.T) {
	requireViews(t)
	tr := newTree(t)
	v := nsview.New().Writable(tr.ws, tr.ws+"/sub").ReadOnly(tr.ws).PrivateTmp()
	var got, ctl string
	require.NoError(t, inView(v, func() (err error) {
		got, err = tr.run([]string{"sh", "touch sub/new && echo sub-ok; touch new 2>&1 | grep -o 'Read-only file system'; true"}, nil)
		return err
	}))
	assert.Equal(t, "sub-okRead-only file system", strings.ReplaceAll(got, "\n", ""))
	ctl, err := newTree(t).run([]string{"sh", "touch sub/new && echo sub-ok; touch new 2>&1 | grep -o 'Read-only file system'; true"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "sub-ok", strings.TrimSpace(ctl), "control")
}

// TestViewNodev: a device node left in a writable root (here /dev/null's
// numbers, made by the test) cannot be opened in the view (nodev:
// EACCES); from the host it can (control). A set-user-ID file there does
// not raise privileges either (nosuid; not exercised here).
func TestViewNodev(t *testing.T) {
	requireViews(t)
	tr := newTree(t)
	node := filepath.Join(tr.ws, "devnode")
	require.NoError(t, unix.Mknod(node, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	var got string
	require.NoError(t, inView(tr.view(), func() (err error) {
		got, err = tr.run([]string{"write", "devnode"}, nil)
		return err
	}))
	assert.Equal(t, "EACCES", got, "in the view")
	ctl, err := tr.run([]string{"write", "devnode"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", ctl, "control")
}

// TestViewNestedWritableInReadOnly (red team round 13, R13-8, R13-10): a
// writable root inside a read-only path (--ro ./lib --rw ./lib/vendor)
// stays writable, and a read-only path below it (--read-only
// lib/vendor/x) stays read-only: the root's fresh clone no longer covers
// the read-only mount made below it. Controls: the same writes
// unconfined; the writable root's other files.
func TestViewNestedWritableInReadOnly(t *testing.T) {
	requireViews(t)
	for _, tc := range []viewCase{
		{name: "a read-only file below the nested writable root", argv: []string{"write", "lib/vendor/x"}, view: "EROFS", control: "ok"},
		{name: "the nested writable root stays writable", argv: []string{"sh", "touch lib/vendor/new && echo ok"}, view: "ok", control: "ok",
			host: hostHas("lib/vendor/new", "")},
		{name: "the read-only path around it stays read-only", argv: []string{"create", "lib/other"}, view: "EROFS", control: "ok"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, func(tr tree) nsview.View {
				return nsview.New().Writable(tr.ws, tr.ws+"/lib/vendor").ReadOnly(tr.ws+"/lib", tr.ws+"/lib/vendor/x")
			})
		})
	}
}
