package jail_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/openat"
)

// benchTree makes root/d1/d2/.../file with depth-1 directories, so the
// name has depth components, and returns the root and the name.
func benchTree(b *testing.B, depth int) (string, string) {
	root := b.TempDir()
	parts := make([]string, 0, depth)
	for i := 1; i < depth; i++ {
		parts = append(parts, "d"+strconv.Itoa(i))
	}
	dir := filepath.Join(append([]string{root}, parts...)...)
	require.NoError(b, os.MkdirAll(dir, 0o755))
	require.NoError(b, os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644))
	name := strings.Join(append(parts, "file"), "/")
	root, err := filepath.EvalSymlinks(root)
	require.NoError(b, err)
	return root, name
}

// BenchmarkOpen compares opening one file at depth 1, 4 and 16 through
// landjail and its peers. Each iteration opens and closes the file.
func BenchmarkOpen(b *testing.B) {
	for _, depth := range []int{1, 4, 16} {
		root, name := benchTree(b, depth)
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			b.Run("impl=raw-openat2", func(b *testing.B) {
				rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
				require.NoError(b, err)
				defer unix.Close(rootfd)
				how := &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
				b.ReportAllocs()
				for b.Loop() {
					fd, err := unix.Openat2(rootfd, name, how)
					if err != nil {
						b.Fatal(err)
					}
					os.NewFile(uintptr(fd), name).Close()
				}
			})
			ws, err := jail.New(root)
			require.NoError(b, err)
			defer ws.Close()
			wsDeny, err := jail.New(root, jail.WithDeny(jail.SecretPatterns...))
			require.NoError(b, err)
			defer wsDeny.Close()
			r, err := openat.OpenRoot(root)
			require.NoError(b, err)
			defer r.Close()
			osr, err := os.OpenRoot(root)
			require.NoError(b, err)
			defer osr.Close()
			rf, err := os.Open(root)
			require.NoError(b, err)
			defer rf.Close()
			for _, impl := range []struct {
				name string
				open func(string) (*os.File, error)
			}{
				{"landjail-Workspace", ws.Open},
				{"landjail-Workspace+SecretPatterns", wsDeny.Open},
				{"landjail-openat.Root", r.Open},
				{"os.Root", osr.Open},
				{"securejoin-OpenatInRoot", func(n string) (*os.File, error) { return pathrs.OpenatInRoot(rf, n) }},
			} {
				b.Run("impl="+impl.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						f, err := impl.open(name)
						if err != nil {
							b.Fatal(err)
						}
						f.Close()
					}
				})
			}
			b.Run("impl=naive-EvalSymlinks+Open", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p, err := filepath.EvalSymlinks(filepath.Join(root, name))
					if err != nil || !strings.HasPrefix(p, root+"/") {
						b.Fatal(err)
					}
					f, err := os.Open(p)
					if err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			})
		})
	}
}

// BenchmarkResolve measures the userspace choke point alone.
func BenchmarkResolve(b *testing.B) {
	for _, depth := range []int{1, 4, 16} {
		root, name := benchTree(b, depth)
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			ws, err := jail.New(root)
			require.NoError(b, err)
			defer ws.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ws.Resolve(name); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckWriteAgentConfig measures Check(name, Write) with the
// agent defaults (--deny-secrets --protect-agent-config): the read-only
// patterns, matched against every component of the path, are the
// write path's hot spot.
func BenchmarkCheckWriteAgentConfig(b *testing.B) {
	for _, depth := range []int{1, 4, 16} {
		root, name := benchTree(b, depth)
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			ws, err := jail.New(root, jail.WithDenySecrets(), jail.WithProtectedAgentConfig())
			require.NoError(b, err)
			defer ws.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ws.Check(name, jail.Write); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
