package jail

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// gitList is the oracle: what `git config --file F --list -z` reads from
// b, as "key=value" lines ("key" alone for a value-less boolean), and
// whether git accepted the file.
func gitList(t testing.TB, b []byte) ([]string, bool) {
	f := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(f, b, 0o644))
	cmd := exec.Command("git", "config", "--file", f, "--list", "-z", "--no-includes")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent")
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var lines []string
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(rec, []byte{'\n'})
		if !ok {
			v = []byte("true")
		}
		lines = append(lines, string(k)+"="+string(v))
	}
	return lines, true
}

func ourList(b []byte) []string {
	var lines []string
	for _, e := range parseGitConfig(b, "f") {
		lines = append(lines, e.key+"="+e.value)
	}
	return lines
}

var gitConfigCorpus = []string{
	"[core]\n\tbare = false\n\thooksPath = .hooks\n",
	"[core] editor = vim\n",
	"[Core]\n\tHooksPath=x\n",
	"[diff \"Foo\"]\n\ttextconv = ./tools/conv --flag\n",
	"[diff \"a\\\"b\"]\n\tx = 1\n",
	"[branch.Main]\n\tremote = origin\n",
	"[include]\n\tpath = ../tools/gitconfig ; comment\n",
	"# c\n; c\n[a]\nb\nc = \"quoted # not a comment\" # comment\n",
	"[a]\n\tb = one \\\n two\n",
	"[a]\n\tb = tab\\there \"  spaced  \"  end  \n",
	"[a]\n\tb = \\n\\b\\\\\\\"\n",
	"[a]\r\n\tb = crlf\r\n",
	"\xef\xbb\xbf[a]\n\tb = bom\n",
	"[a]\n\tb = trailing backslash \\",
	"[a]\n\tb = \"unterminated\n[c]\n\td = e\n",
	"[a]\n\tb = bad \\q escape\n[c]\n\td = e\n",
	"[a]\n\tb # comment\n",
	"c = no section\n",
	"[a \"sub\" ]\n\tb = x\n",
	"[a \"sub\"] b = x\n",
	"[a-b.c-d]\n\tx-y = z\n",
	"[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n\tprocess = ./bin/filter\n",
	"[a]\n\tb=\n\tc =\"\"\n",
}

// TestParseGitConfigOracle: the parser reads what git reads, entry for
// entry, on the corpus (git itself is the oracle); where git refuses a
// file, ours returns a prefix of the entries (git stops there too).
func TestParseGitConfigOracle(t *testing.T) {
	requireGit(t)
	for _, c := range gitConfigCorpus {
		want, ok := gitList(t, []byte(c))
		got := ourList([]byte(c))
		if ok {
			assert.Equal(t, want, got, "%q", c)
		}
	}
}

func requireGit(t testing.TB) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("LANDJAIL_REQUIRE_KERNEL") != "" {
			t.Fatal("git is required (the oracle)")
		}
		t.Skip("git not installed")
	}
}

// FuzzParseGitConfig: on any input the parser neither panics nor
// loops, answers the same twice, and returns keys in git's canonical
// form (a lower-case section and name; a subsection as written). The
// comparison with git itself is TestParseGitConfigOracle and
// TestParseGitConfigOracleRandom: a git exec per input made the fuzzer's
// workers miss its deadline in CI ("context deadline exceeded").
func FuzzParseGitConfig(f *testing.F) {
	for _, c := range gitConfigCorpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		got, again := ourList(b), ourList(b)
		if !assert.ObjectsAreEqual(got, again) {
			t.Fatalf("%q: not deterministic: %q, %q", b, got, again)
		}
		for _, e := range parseGitConfig(b, "f") {
			first, rest, _ := strings.Cut(e.key, ".")
			name := rest
			if i := strings.LastIndexByte(rest, '.'); i >= 0 {
				name = rest[i+1:]
			}
			if name == "" && first == "" || first != strings.ToLower(first) || name != strings.ToLower(name) {
				t.Fatalf("%q: key %q is not canonical", b, e.key)
			}
		}
	})
}

// TestParseGitConfigOracleRandom: the parser reads what git reads on 300
// inputs made by mutating the corpus with a fixed seed (byte flips,
// insertions of the syntax's special characters, splices), git being the
// oracle; where git refuses a file there is nothing to compare.
func TestParseGitConfigOracleRandom(t *testing.T) {
	requireGit(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(20261127, 25))
	special := []byte("[]\"#;=\\ \t\n\r.-abcXYZ01")
	for i := range 300 {
		b := []byte(gitConfigCorpus[rng.IntN(len(gitConfigCorpus))])
		for range 1 + rng.IntN(4) {
			switch pos := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0:
				if pos < len(b) {
					b[pos] = special[rng.IntN(len(special))]
				}
			case 1:
				b = append(b[:pos], append([]byte{special[rng.IntN(len(special))]}, b[pos:]...)...)
			case 2:
				o := []byte(gitConfigCorpus[rng.IntN(len(gitConfigCorpus))])
				b = append(b[:pos], o[rng.IntN(len(o)):]...)
			}
		}
		if want, ok := gitList(t, b); ok {
			assert.Equal(t, want, ourList(b), "input %d: %q", i, b)
		}
	}
}

// TestGitConfigReferences: the paths a configuration points git at,
// includes followed; controls: a boolean core.fsmonitor, an alias, a
// non-path word, an unrelated key name nothing.
func TestGitConfigReferences(t *testing.T) {
	dir := t.TempDir()
	wt := filepath.Join(dir, "wt")
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(wt, ".git"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, "tools"), 0o755))
	cfg := filepath.Join(wt, ".git", "config")
	require.NoError(t, os.WriteFile(cfg, []byte(`[core]
	hooksPath = .hooks
	fsmonitor = true
	pager = less -R
[include]
	path = ../tools/gitconfig
[includeIf "gitdir:~/w/"]
	path = ~/inc.cfg
[filter "x"]
	clean = ./scripts/clean.sh --in %f
	smudge = cat
[diff "img"]
	textconv = "sh tools/conv.sh"
[alias]
	b = !./build.sh
[remote "origin"]
	url = ../other
[credential]
	helper = !/abs/helper get
`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "tools", "gitconfig"), []byte("[core]\n\teditor = ./ed.sh\n[include]\n\tpath = more.cfg\n"), 0o644))
	got := gitConfigReferences([]string{cfg, filepath.Join(dir, "missing")}, wt, home)
	want := []string{
		filepath.Join(wt, ".hooks"),
		filepath.Join(wt, "tools/gitconfig"),
		filepath.Join(wt, "ed.sh"),
		filepath.Join(wt, "tools/more.cfg"), // relative to the including file
		filepath.Join(home, "inc.cfg"),
		filepath.Join(wt, "scripts/clean.sh"),
		filepath.Join(wt, "tools/conv.sh"),
		"/abs/helper",
	}
	assert.ElementsMatch(t, want, got)
	for _, p := range got {
		assert.False(t, strings.HasSuffix(p, "build.sh") || strings.HasSuffix(p, "other") || strings.HasSuffix(p, "less"), p)
	}
}

// TestGitConfigReferencesFIFO: an include.path naming a FIFO (or a
// device) is skipped, never read: the control, a plain open, would block.
func TestGitConfigReferencesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	cfg := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(cfg, []byte("[include]\n\tpath = fifo\n[core]\n\thooksPath = h\n"), 0o644))
	done := make(chan []string, 1)
	go func() { done <- gitConfigReferences([]string{cfg, "/dev/zero"}, dir, "") }()
	select {
	case got := <-done:
		assert.ElementsMatch(t, []string{fifo, filepath.Join(dir, "h")}, got)
	case <-time.After(10 * time.Second):
		t.Fatal("reading the configuration blocked on a FIFO")
	}
}

// TestCommandWords: the path words of driver commands, shell expansions
// and globs included (red team R2: "$(git rev-parse --show-toplevel)/x"
// protected nothing).
func TestCommandWords(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{`sh "$(git rev-parse --show-toplevel)/tools/clean.sh"`, []string{"./tools/clean.sh"}},
		{`$GIT_WORK_TREE/bin/x --flag`, []string{"./bin/x"}},
		{`${PWD}/a/b && ./c`, []string{"./a/b", "./c"}},
		{`sh tools/*.sh`, []string{"tools"}},
		{`!./build.sh arg`, []string{"./build.sh"}},
		{`foo$X/bar`, nil},
		{`$HOME`, nil},
		{`cat`, nil},
		{`~/bin/helper`, []string{"~/bin/helper"}},
		{`$(unterminated/x`, nil},
		// Red team S6: backticks, and scripts named without a "/".
		{"sh `git rev-parse --show-toplevel`/tools/clean.sh", []string{"./tools/clean.sh"}},
		{`sh clean.sh`, []string{"./clean.sh"}},
		{`cd tools && sh clean.sh`, []string{"./clean.sh", "tools/clean.sh"}},
		// Red team round 26, R26a-1: a module run with -m is read from
		// the working directory first.
		{`python3 -m nbstripout`, []string{"./nbstripout.py", "./nbstripout.pyc", "./nbstripout.so", "./nbstripout.abi3.so", "./__pycache__", "./nbstripout", "./nbstripout/__pycache__"}},
		{`python3 -u filter.py --x`, []string{"./filter.py"}},
		// Red team round 25, R25b-6: the quote around the expansion
		// alone, a path with a blank, an expansion inside a word, and a
		// cd to a quoted expansion.
		{`"$(git rev-parse --show-toplevel)"/scripts/x`, []string{"./scripts/x"}},
		{`"$PWD"/s/x`, []string{"./s/x"}},
		{`"${GIT_PREFIX:-.}"/s/x`, []string{"./s/x"}},
		{"`git rev-parse --show-toplevel`\"/s/x\"", []string{"./s/x"}},
		{`"\"my tools/ed.sh\""`, []string{"\"my tools/ed.sh\""}},
		{`"my tools/ed.sh" --wait`, []string{"my tools/ed.sh"}},
		{`my\ tools/p2.sh`, []string{"my tools/p2.sh"}},
		{`scripts/lint-$(uname).sh`, []string{"scripts"}},
		{`./bin/${TOOL:-fmt}`, []string{"./bin"}},
		{`cd "$(git rev-parse --show-toplevel)"/t && ./x.sh`, []string{"./t", "./x.sh", "t/x.sh"}},
		{`'$(not expanded)'/y`, []string{"./y"}},
		{`FOO=bar ./tool --file=conf/x.toml`, []string{"./tool", "conf/x.toml"}},
		// R25d-2: the program of sh -c and eval, --show-cdup and
		// --git-dir expansions.
		{`sh -c '"$(git rev-parse --show-toplevel)"/scripts/ed.sh "$@"' ed`, []string{"./scripts/ed.sh"}},
		{`sh -c 'scripts/ed.sh "$@"' ed`, []string{"scripts/ed.sh"}},
		{`bash -c "a/x.sh --fix"`, []string{"a/x.sh"}},
		{`bash -ec '"$(git rev-parse --show-toplevel)/a/x.sh"'`, []string{"./a/x.sh"}},
		{`!sh -c 'a/x.sh "$1"' -`, []string{"a/x.sh"}},
		{`eval 'a/x.sh --y'`, []string{"a/x.sh"}},
		{`"$(git rev-parse --show-cdup)"scripts/ed.sh`, []string{"./scripts/ed.sh"}},
		{`$(git rev-parse --show-cdup)a/x.sh`, []string{"./a/x.sh"}},
		{`exec "$(git rev-parse --show-cdup)a/x.sh"`, []string{"./a/x.sh"}},
		{`"$(git rev-parse --git-dir)"/../a/x.sh`, []string{"./.git/../a/x.sh"}},
		// R26a-1: every name of a -c program is a module it may import
		// from the working directory.
		{`python3 -c 'print(1)'`, []string{"./print.py", "./print.pyc", "./print.so", "./print.abi3.so", "./__pycache__", "./print", "./print/__pycache__"}},
	} {
		assert.Equal(t, tc.want, commandWords(tc.cmd), tc.cmd)
	}
}

// TestCommandWordsFailClosed: the spellings of red team round 26
// (R26a-1) that named nothing, or the wrong word, each with the script
// it runs; controls: the arguments after a known script or program are
// not taken (no), an option's argument is not the script.
func TestCommandWordsFailClosed(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		want    []string
		without []string
	}{
		{`bash -euo pipefail -c 'scripts/ed.sh "$@"' ed`, []string{"scripts/ed.sh"}, []string{"./pipefail", "./ed"}},
		{`sh -ce 'scripts/ed.sh "$@"' ed`, []string{"scripts/ed.sh"}, []string{"./ed"}},
		{`sh -c -- 'scripts/ed.sh "$@"' ed`, []string{"scripts/ed.sh"}, nil},
		{`sh -c -x 'scripts/ed.sh'`, []string{"scripts/ed.sh"}, nil},
		{`bash --norc -c 'scripts/ed.sh'`, []string{"scripts/ed.sh"}, nil},
		{`cd -P scripts && ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`cd -- scripts && ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`pushd -n scripts; ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`cd scripts; sh -c './ed.sh "$@"'`, []string{"scripts/ed.sh"}, nil},
		{`env -C scripts ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`env --chdir=scripts ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`env -iCscripts ./ed.sh`, []string{"scripts/ed.sh"}, nil},
		{`perl -e 'exec "scripts/ed.sh", @ARGV'`, []string{"scripts/ed.sh"}, nil},
		{`node -e 'require("child_process").execFileSync("scripts/ed.sh")'`, []string{"scripts/ed.sh"}, nil},
		{`ruby -e 'system "sh scripts/ed.sh"'`, []string{"scripts/ed.sh"}, nil},
		{`python3 -c 'import os; os.system("sh scripts/ed.sh")'`, []string{"scripts/ed.sh"}, nil},
		{`python3 -W ignore ed.py`, []string{"./ed.py"}, []string{"./ignore"}},
		{`python3 -Wignore ed.py`, []string{"./ed.py"}, nil},
		{`python3 -X dev ed.py`, []string{"./ed.py"}, []string{"./dev"}},
		{`/usr/bin/env python3.12 -u -X dev ed.py`, []string{"./ed.py"}, nil},
		{`bash -o errexit ed.sh`, []string{"./ed.sh"}, []string{"./errexit"}},
		{`bash --rcfile x.rc ed.sh`, []string{"./x.rc", "./ed.sh"}, nil},
		{`bash --no-such-option ed.sh`, []string{"./ed.sh"}, nil},
		{`sh ed.sh src`, []string{"./ed.sh"}, []string{"./src"}},
		{`node --require ./x ed.js`, []string{"./x", "./ed.js"}, nil},
		{`python3 -m tools.ed`, []string{"./tools/ed.py", "./tools/__init__.py", "./tools/ed", "./tools.py"}, []string{"./tools"}},
		// Red team round 31 (R31c-12): the bytecode caches of the module
		// and of its package's __init__.
		{`python3 -m tools.ed`, []string{"./tools/__pycache__", "./__pycache__", "./tools/ed/__pycache__"}, nil},
		{`python3 -mtools.ed`, []string{"./tools/ed.py"}, nil},
		{`python3 -c 'import sys, ed'`, []string{"./ed.py", "./ed", "./ed.abi3.so"}, []string{"./import.py"}},
		{`python3 -c '__import__("ed")'`, []string{"./ed.py"}, nil},
		{`python3 --no-such-option ed.py`, []string{"./ed.py"}, nil},
		{`env -S "sh scripts/ed.sh"`, []string{"scripts/ed.sh"}, nil},
		{`env -S'sh scripts/ed.sh'`, []string{"scripts/ed.sh"}, nil},
		{`ruby -rscripts/ed`, []string{"scripts/ed", "scripts/ed.rb"}, nil},
		{`ruby -r scripts/ed -e 1`, []string{"scripts/ed.rb"}, nil},
		{`perl -Iscripts -MEd`, []string{"./scripts", "./Ed.pm"}, nil},
		{`perl -MFoo::Bar=x -e 1`, []string{"Foo/Bar.pm"}, nil},
		{`make -s edit`, []string{"./Makefile", "./GNUmakefile"}, nil},
		{`cd tools && npm run edit`, []string{"./package.json", "tools/package.json"}, nil},
	} {
		got := commandWords(tc.cmd)
		assert.Subset(t, got, tc.want, tc.cmd)
		for _, w := range tc.without {
			assert.NotContains(t, got, w, tc.cmd)
		}
	}
}

// FuzzCommandWords: commandWords ends on any input, without a panic,
// and names no empty path, "." or "/" (the worktree's top, or the root).
func FuzzCommandWords(f *testing.F) {
	for _, s := range []string{
		`bash -euo pipefail -c 'scripts/ed.sh "$@"' ed`, `env -S "sh -c 'env -C d python3 -c \"import x\"'"`,
		`perl -e 'exec "a/b"'`, `cd -P d && ./x`, `python3 -m a.b.c`, "sh -c \"eval 'sh -c \\\"x/y\\\"'\"", `env -C`,
		`python3 -W`, `bash -o`, `fish -C 'a/b'`, `ruby -r`, `"$(x)"/y`, "`", `'`, `"`, `\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, w := range commandWords(cmd) {
			if w == "" || w == "." || w == "/" {
				t.Fatalf("%q names %q", cmd, w)
			}
		}
	})
}
