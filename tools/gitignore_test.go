package tools_test

import (
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// TestGrepNestedGitignore: grep skips exactly what git ignores
// (git ls-files --others --exclude-standard is the oracle) with nested
// .gitignore files: patterns relative to their directory, anchored ones
// to it alone, a deeper negation re-including what a shallower file
// excludes, a deeper exclusion overriding a shallower negation, and a
// file below an excluded directory never re-included.
func TestGrepNestedGitignore(t *testing.T) {
	cases := []struct {
		name string
		tree []string
	}{
		{"deeper negation re-includes", []string{".gitignore=*.log\n", "a.log=n\n", "s/.gitignore=!keep.log\n", "s/keep.log=n\n", "s/other.log=n\n"}},
		{"deeper exclusion overrides", []string{".gitignore=!*.txt\n", "s/.gitignore=*.txt\n", "a.txt=n\n", "s/b.txt=n\n", "s/t/c.txt=n\n"}},
		{"anchored to its directory", []string{"s/.gitignore=/gen\n", "gen=n\n", "s/gen=n\n", "s/t/gen=n\n"}},
		{"middle slash anchors", []string{"s/.gitignore=t/g\n", "t/g=n\n", "s/t/g=n\n", "s/u/t/g=n\n"}},
		{"not outside its directory", []string{"s/.gitignore=f\n", "f=n\n", "s/f=n\n", "u/f=n\n"}},
		{"parent excluded, no re-include", []string{".gitignore=d/\n", "d/.gitignore=!f\n", "d/f=n\n", "e=n\n"}},
		{"double star", []string{"s/.gitignore=**/x/*.go\n", "s/x/a.go=n\n", "s/t/x/b.go=n\n", "x/c.go=n\n"}},
		{"dir-only", []string{"s/.gitignore=b/\n", "s/b/f=n\n", "s/t/b=n\n"}},
		{"git's a**/ quirk", []string{".gitignore=a**/b\n", "ab=n\n", "ax/b=n\n", "ax/y/b=n\n", "c/b=n\n"}},
		{"bracket negation", []string{".gitignore=[!a]b\n", "ab=n\n", "cb=n\n"}},
		{"trailing spaces", []string{".gitignore=f  \ng\\ \n", "f=n\n", "g =n\n", "g=n\n"}},
		{"escapes", []string{".gitignore=\\!x\n\\#y\n", "!x=n\n", "#y=n\n", "z=n\n"}},
	}
	if _, err := osexec.LookPath("git"); err != nil {
		t.Skipf("git, the oracle, is not installed: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.tree)
			git := osexec.Command("git", "init", "-q", e.root)
			git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+e.root)
			out, err := git.CombinedOutput()
			require.NoError(t, err, "%s", out)
			git = osexec.Command("git", "-C", e.root, "ls-files", "--others", "--exclude-standard")
			git.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+e.root)
			out, err = git.Output()
			require.NoError(t, err)
			var want []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if l != "" && !strings.HasSuffix(l, ".gitignore") {
					want = append(want, l)
				}
			}
			r, err := e.k.Grep(tools.GrepArgs{Pattern: "^n$"})
			require.NoError(t, err)
			var got []string
			for _, m := range r.Matches {
				got = append(got, m.Path)
			}
			slices.Sort(want)
			slices.Sort(got)
			assert.Equal(t, want, got)
		})
	}
}

// BenchmarkGrepGitignore: the .gitignore matching itself: 2000 one-line
// files in 100 directories, a 20-pattern .gitignore at the top and a
// 5-pattern one in every directory; 1000 files are ignored.
func BenchmarkGrepGitignore(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	require.NoError(b, err)
	top := "*.o\n*.a\n/build\nnode_modules/\n*.tmp\n.cache/\n**/gen/*.pb.go\n!keep.o\ndist/\n*.swp\n"
	top += "*.pyc\n__pycache__/\ncoverage/\n*.out\n/vendor\n*.log\n!important.log\ntarget/\n*.class\n*.skip\n"
	require.NoError(b, os.WriteFile(filepath.Join(root, ".gitignore"), []byte(top), 0o644))
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("d%d", d))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.bak\n/local\n!x.bak\ntmp*/\n*.gen.go\n"), 0o644))
		for f := range 20 {
			name := fmt.Sprintf("f%d.go", f)
			if f%2 == 1 {
				name = fmt.Sprintf("f%d.skip", f)
			}
			require.NoError(b, os.WriteFile(filepath.Join(dir, name), []byte("needle\n"), 0o644))
		}
	}
	ws, err := jail.New(root)
	require.NoError(b, err)
	b.Cleanup(func() { ws.Close() })
	k := &tools.Toolkit{WS: ws, Limits: tools.Limits{GrepMatches: 5000}}
	for b.Loop() {
		r, err := k.Grep(tools.GrepArgs{Pattern: "needle"})
		if err != nil || len(r.Matches) != 1000 {
			b.Fatal(err, len(r.Matches))
		}
	}
}
