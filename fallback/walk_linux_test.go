package fallback

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// A tree spec line is "d/" (directory), "f" (file whose content is its
// name), or "l => target" (symlink). "$ROOT" in a target is replaced by
// the root's absolute path. Paths are relative to the parent of the root,
// so "root/..." is inside and "outside/..." is not.
var walkTree = []string{
	"root/",
	"root/f",
	"root/d/",
	"root/d/f",
	"root/d/e/",
	"root/d/e/g",
	"root/empty/",
	"root/lrel => d/f",
	"root/lreldir => d",
	"root/labs => $ROOT/f",
	"root/lout => ../outside/secret",
	"root/loutdir => ../outside",
	"root/ldangle => nonexistent",
	"root/ldangleout => ../outside/new",
	"root/lloop => lloop",
	"root/la => lb",
	"root/lb => la",
	"root/lproc => /proc/self/root",
	"root/d/lup => ../f",
	"root/d/ldot => .",
	"root/d/lupdir => ..",
	"outside/",
	"outside/secret",
}

func walkBuildTree(t testing.TB, parent string, spec []string) {
	t.Helper()
	root := filepath.Join(parent, "root")
	for _, line := range spec {
		if name, target, ok := strings.Cut(line, " => "); ok {
			target = strings.ReplaceAll(target, "$ROOT", root)
			require.NoError(t, os.Symlink(target, filepath.Join(parent, name)))
		} else if strings.HasSuffix(line, "/") {
			require.NoError(t, os.Mkdir(filepath.Join(parent, line), 0o755))
		} else {
			require.NoError(t, os.WriteFile(filepath.Join(parent, line), []byte(line), 0o644))
		}
	}
}

// walkPaths are the unsafePaths of the differential table: ".." in every
// position, symlinks of every kind in every position, trailing slashes.
var walkPaths = []string{
	"f", "d", "d/f", "d/e/g", "d/./f", "./f", ".", "./", "..", "../", "./..",
	"../outside/secret", "../root/f", "d/..", "d/../", "d/../f", "d/../..", "d/../../outside/secret",
	"d/e/../../f", "d/e/../..", "d/e/../../..", "d/e/..", "d/e/../g", "d/e/g/..", "d/e/g/.",
	"empty/..", "empty/../d/e/../f", "d//f", "d///e//g", "d/./e/./g", ".//d",
	"missing", "missing/../f", "missing/x", "d/missing/..", "f/../f", "f/..", "f/.", "f/x",
	"f/", "f//", "d/", "d//", "d/f/", "d/e/", "d/e/g/",
	"lrel", "lrel/", "lreldir", "lreldir/", "lreldir/f", "lreldir/..", "labs", "lout", "loutdir", "loutdir/secret",
	"ldangle", "ldangle/", "ldangleout", "lloop", "lloop/x", "la", "lproc", "lproc/etc",
	"d/lup", "d/ldot", "d/ldot/f", "d/lupdir", "d/lupdir/f", "d/lup/..",
	"new", "new/", "d/new", "d/e/../new", "missing/new", "f/new", "lreldir/new",
	"", "/", "/etc", "/" + "f", "a\x00b",
	strings.Repeat("d/../", 820) + "f", // 4101 bytes: ENAMETOOLONG
	strings.Repeat("d/../", 818) + "f", // 4091 bytes: fine
	strings.Repeat("x", 256), "d/" + strings.Repeat("x", 256) + "/..",
}

type walkFlags struct {
	name  string
	flags int
	mode  uint32
}

var walkFlagSets = []walkFlags{
	{"RDONLY", unix.O_RDONLY, 0},
	{"PATH", unix.O_PATH, 0},
	{"PATH|NOFOLLOW", unix.O_PATH | unix.O_NOFOLLOW, 0},
	{"PATH|DIRECTORY", unix.O_PATH | unix.O_DIRECTORY, 0},
	{"PATH|DIRECTORY|NOFOLLOW", unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW, 0},
	{"DIRECTORY", unix.O_DIRECTORY, 0},
	{"NOFOLLOW", unix.O_NOFOLLOW, 0},
	{"WRONLY", unix.O_WRONLY, 0},
	{"RDWR|APPEND", unix.O_RDWR | unix.O_APPEND, 0},
	{"CREAT|WRONLY", unix.O_CREAT | unix.O_WRONLY, 0o644},
	{"CREAT|RDONLY|NOFOLLOW", unix.O_CREAT | unix.O_NOFOLLOW, 0o600},
	{"CREAT|EXCL|WRONLY", unix.O_CREAT | unix.O_EXCL | unix.O_WRONLY, 0o600},
	{"RDWR|TRUNC", unix.O_RDWR | unix.O_TRUNC, 0},
	{"TMPFILE|RDWR", unix.O_TMPFILE | unix.O_RDWR, 0o600},
	{"EINVAL:CREAT|DIRECTORY", unix.O_CREAT | unix.O_DIRECTORY, 0o644},
	{"EINVAL:RDONLY+mode", unix.O_RDONLY, 0o644},
	{"EINVAL:CREAT+badmode", unix.O_CREAT | unix.O_WRONLY, 0o10000},
	{"EINVAL:PATH|RDWR", unix.O_PATH | unix.O_RDWR, 0},
	{"EINVAL:TMPFILE|RDONLY", unix.O_TMPFILE, 0o600},
	{"EINVAL:unknown", 1 << 30, 0},
}

func walkMutates(flags int) bool { return flags&(unix.O_CREAT|unix.O_TRUNC|oTmpfileBit) != 0 }

// walkOpened describes the result of an open, for comparison.
type walkOpened struct {
	errno  unix.Errno
	dev    uint64
	ino    uint64
	typ    uint32
	acc    int    // F_GETFL & (O_ACCMODE|O_PATH|O_APPEND)
	path   string // readlink of the fd, relative to parent, "#N" for tmpfiles
	dirent string
}

var walkTmpfileRe = regexp.MustCompile(`#[0-9]+`)

func walkDescribe(t testing.TB, parent string, fd int, err error) walkOpened {
	t.Helper()
	if err != nil {
		errno, ok := err.(unix.Errno)
		require.True(t, ok, "not a bare unix.Errno: %#v", err)
		return walkOpened{errno: errno}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	require.NoError(t, unix.Fstat(fd, &st))
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	require.NoError(t, err)
	rel, err := filepath.Rel(parent, link)
	require.NoError(t, err)
	return walkOpened{
		dev: st.Dev, ino: st.Ino, typ: st.Mode & unix.S_IFMT,
		acc:  fl & (unix.O_ACCMODE | unix.O_PATH | unix.O_APPEND),
		path: walkTmpfileRe.ReplaceAllString(rel, "#N"),
	}
}

// snapshot lists every entry under parent with its type, size and mode, to
// compare the side effects of two opens.
func walkSnapshot(t testing.TB, parent string) string {
	t.Helper()
	var lines []string
	require.NoError(t, filepath.WalkDir(parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(parent, p)
		size := info.Size()
		if info.IsDir() {
			size = 0
		}
		lines = append(lines, fmt.Sprintf("%s %v %d", rel, info.Mode(), size))
		return nil
	}))
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func walkKernelOpen(dirfd int, unsafePath string, flags int, mode uint32, resolve uint64) (int, error) {
	return unix.Openat2(dirfd, unsafePath, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Mode:    uint64(mode),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | resolve&unix.RESOLVE_NO_XDEV,
	})
}

func walkOpenDir(t testing.TB, path string) int {
	t.Helper()
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	return fd
}

// TestOpenatBeneathDifferential runs every path with every flag set and
// both resolve modes through the kernel's openat2 and OpenatBeneath: same
// errno, same file (dev, ino on the same tree), same side effects.
func TestOpenatBeneathDifferential(t *testing.T) {
	kerneltest.RequireOpenat2(t)
	parent := t.TempDir()
	walkBuildTree(t, parent, walkTree)
	root := filepath.Join(parent, "root")
	pristine := walkSnapshot(t, parent)
	rebuild := func() {
		require.NoError(t, os.RemoveAll(root))
		require.NoError(t, os.RemoveAll(filepath.Join(parent, "outside")))
		walkBuildTree(t, parent, walkTree)
	}
	cases, failures := 0, 0
	for _, resolve := range []uint64{0, unix.RESOLVE_NO_XDEV} {
		for _, fl := range walkFlagSets {
			for _, p := range walkPaths {
				name := fmt.Sprintf("%s/%q/xdev=%v", fl.name, p, resolve != 0)
				rootfd := walkOpenDir(t, root)
				fd, err := walkKernelOpen(rootfd, p, fl.flags, fl.mode, resolve)
				want := walkDescribe(t, parent, fd, err)
				wantSnap := ""
				if walkMutates(fl.flags) {
					wantSnap = walkSnapshot(t, parent)
					unix.Close(rootfd)
					rebuild()
					rootfd = walkOpenDir(t, root)
				}
				fd, err = OpenatBeneath(rootfd, p, fl.flags, fl.mode, resolve)
				got := walkDescribe(t, parent, fd, err)
				unix.Close(rootfd)
				cases++
				if walkMutates(fl.flags) {
					gotSnap := walkSnapshot(t, parent)
					assert.Equal(t, wantSnap, gotSnap, "side effects of %s", name)
					want.dev, want.ino, got.dev, got.ino = 0, 0, 0, 0
					if wantSnap != pristine || gotSnap != pristine {
						rebuild()
					}
				}
				if !assert.Equal(t, want, got, "%s: kernel %v, walk %v", name, want.errno, got.errno) {
					failures++
				}
			}
		}
	}
	t.Logf("%d cases, %d differ", cases, failures)
}
