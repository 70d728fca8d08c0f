package cmdcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// Stand-ins for the jail sentinels: the fake policy below returns them.
var (
	errOutside  = errors.New("fake: outside the workspace")
	errReadOnly = errors.New("fake: read-only root")
)

type checkCall struct {
	path string
	a    Access
}

// fakePolicy allows root read-write and /usr read+execute, lexically (the
// real policy resolves symlinks; the command check only has to ask).
type fakePolicy struct {
	root  string
	calls []checkCall
}

func (p *fakePolicy) check(unsafePath string, a Access) error {
	p.calls = append(p.calls, checkCall{unsafePath, a})
	if !filepath.IsAbs(unsafePath) {
		return errors.New("fake: Check passed a relative path")
	}
	c := filepath.Clean(unsafePath)
	switch {
	case within(c, p.root):
		return nil
	case within(c, "/usr"):
		if a == AccessWrite {
			return errReadOnly
		}
		return nil
	}
	return errOutside
}

func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

func (p *fakePolicy) asked(path string, a Access) bool {
	for _, c := range p.calls {
		if c.path == path && c.a == a {
			return true
		}
	}
	return false
}

func TestCheck(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", "/home/tester") // outside the workspace
	sh := func(script string) []string { return []string{"bash", "-c", script} }

	tests := []struct {
		name string
		argv []string
		want error // nil, errOutside, errReadOnly or ErrUnverifiable
		// asked, when set, must have been passed to the check.
		asked *checkCall
	}{
		{"plain absolute path", []string{"cat", "/etc/passwd"}, errOutside, nil},
		{"dot-dot escapes", []string{"cat", "./a/../../x"}, errOutside, nil},
		{"no paths", []string{"ls"}, nil, nil},
		{"ls -la", []string{"ls", "-la", "sub"}, nil, nil},
		{"argv0 with slash outside", []string{"/opt/evil/bin", "x"}, errOutside, nil},
		{"argv0 with slash allowed", []string{"/usr/bin/ls", "x"}, nil, &checkCall{"/usr/bin/ls", AccessExecute}},
		{"git -C then token", []string{"git", "-C", "/etc", "status"}, errOutside, nil},
		{"long option value", []string{"tool", "--file=/etc/x"}, errOutside, nil},
		{"option value list", []string{"tool", "--path=/usr/lib:/etc"}, errOutside, nil},
		{"dd operand", []string{"dd", "if=/etc/shadow", "of=x"}, errOutside, nil},
		{"short option attached", []string{"cc", "-I/usr/include", "x.c"}, nil, &checkCall{"/usr/include", AccessRead}},
		{"short option attached outside", []string{"cc", "-L../lib"}, errOutside, nil},
		{"linker comma list", []string{"cc", "-Wl,-rpath,/etc", "x.c"}, errOutside, nil},
		{"tilde is caller's home", []string{"cat", "~/.ssh/id_rsa"}, errOutside, &checkCall{"/home/tester/.ssh/id_rsa", AccessRead}},
		{"tilde user", []string{"cat", "~root/x"}, ErrUnverifiable, nil},
		{"url is not a path", []string{"curl", "https://example.com/etc/passwd"}, nil, nil},
		{"scp-like remote", []string{"git", "clone", "git@github.com:x/y.git"}, nil, nil},
		{"file url is a path", []string{"curl", "file:///etc/passwd"}, errOutside, nil},
		{"file url with host", []string{"curl", "file://localhost/etc/passwd"}, errOutside, nil},
		{"url-like name with dot-dot", []string{"cat", "x@y:/../../../etc/passwd"}, errOutside, nil},
		{"colon value checked whole", []string{"tool", "--file=/usr/x:y"}, nil, &checkCall{"/usr/x:y", AccessRead}},
		{"devices skip the check", []string{"cp", "/dev/null", "/dev/stdout"}, nil, nil},
		{"device by another name", []string{"cat", "/dev/../etc/passwd"}, errOutside, nil},
		{"inside workspace", []string{"cat", root + "/a/b"}, nil, &checkCall{root + "/a/b", AccessRead}},
		{"empty argv", []string{}, ErrUnverifiable, nil},

		{"bash -c", sh("cat /etc/shadow"), errOutside, nil},
		{"sh -c redirect is write", []string{"sh", "-c", "echo hi > /tmp/x"}, errOutside, &checkCall{"/tmp/x", AccessWrite}},
		{"redirect into read-only root", sh("echo hi > /usr/x"), errReadOnly, nil},
		{"input redirect is read", sh("wc -l < /etc/passwd"), errOutside, &checkCall{"/etc/passwd", AccessRead}},
		{"exec fd redirect", sh("exec 3>/etc/x"), errOutside, nil},
		{"dup to a file", sh("make >& /etc/log"), errOutside, nil},
		{"dup to a descriptor", sh("echo hi >&2; cat x 2>/dev/null 1>&-"), nil, nil},
		{"parameter expansion", sh("cat $HOME/.ssh/id_rsa"), ErrUnverifiable, nil},
		{"quoted parameter expansion", sh(`cat "$1"`), ErrUnverifiable, nil},
		{"command substitution script", sh("$(curl x)"), ErrUnverifiable, nil},
		{"backquotes", sh("cat `echo /etc/passwd`"), ErrUnverifiable, nil},
		{"process substitution", sh("diff <(ls) x"), ErrUnverifiable, nil},
		{"arithmetic", sh("echo $((1+2))"), ErrUnverifiable, nil},
		{"ansi-c quote with escapes", sh(`cat $'\x2fetc/passwd'`), ErrUnverifiable, nil},
		{"cd outside", sh("cd /etc && ls"), errOutside, nil},
		{"cd inside", sh("cd " + root + "/sub && ls"), nil, &checkCall{root + "/sub", AccessExecute}},
		{"cd inside then dot-dot", sh("cd sub && cat ../../x"), errOutside, nil},
		{"cd in subshell does not hide its parent", sh("(cd sub/deeper); cat ../x"), errOutside, nil},
		{"cd in a loop", sh("for i in 1 2; do cd sub; done"), ErrUnverifiable, nil},
		{"cd minus", sh("cd -"), ErrUnverifiable, nil},
		{"cd home", sh("cd; ls"), errOutside, &checkCall{"/home/tester", AccessExecute}},
		{"CDPATH", sh("CDPATH=sub; cd x"), ErrUnverifiable, nil},
		{"env bash -c", []string{"env", "bash", "-c", "cat /etc/x"}, errOutside, nil},
		{"/usr/bin/env bash -c", []string{"/usr/bin/env", "-i", "X=1", "bash", "-c", "cat /etc/x"}, errOutside, nil},
		{"env -S", []string{"env", "-S", `bash -c "cat /etc/x"`}, errOutside, nil},
		{"bash -lc", []string{"bash", "-lc", "cat /etc/x"}, errOutside, nil},
		{"bash -o pipefail -c", []string{"bash", "-o", "pipefail", "-ec", "cat /etc/x"}, errOutside, nil},
		{"timeout sh -c", []string{"timeout", "5", "/usr/bin/sh", "-c", "cat /etc/x"}, errOutside, nil},
		{"bash script file is not inspected", []string{"bash", "build.sh"}, nil, nil},
		{"nested", sh(`sh -c 'cat /etc/x'`), errOutside, nil},
		{"nested twice", sh(`sh -c "dash -c 'cat /etc/x'"`), errOutside, nil},
		{"nesting at the limit", nest(maxScriptDepth, "cat /etc/x"), errOutside, nil},
		{"nesting too deep", nest(maxScriptDepth+1, "ls"), ErrUnverifiable, nil},
		{"heredoc is data", sh("cat <<'EOF'\n/etc/passwd $(x)\nEOF\n"), nil, nil},
		{"unquoted heredoc runs substitutions", sh("cat <<EOF\n$(cat /etc/x)\nEOF\n"), ErrUnverifiable, nil},
		{"heredoc feeding a shell", sh("bash <<'EOF'\ncat /etc/shadow\nEOF\n"), errOutside, nil},
		{"here-string feeding a shell", sh("sh <<< 'cat /etc/shadow'"), errOutside, nil},
		{"heredoc into a shell's -c script", sh("bash -c 'bash' <<'EOF'\ncat /etc/shadow\nEOF\n"), ErrUnverifiable, nil},
		{"glob as command name", sh("ba?h -c 'cat /etc/shadow'"), ErrUnverifiable, nil},
		{"subscript evaluated as code", sh("printf -v 'a[$(cat /etc/shadow)]' x"), ErrUnverifiable, nil},
		{"pipe into a shell", sh("echo 'cat /etc/shadow' | bash"), ErrUnverifiable, nil},
		{"grep for bash in a pipe", sh("ps aux | grep bash"), nil, nil},
		{"does not parse", sh("if then fi ("), ErrUnverifiable, nil},
		{"brace expansion", sh("cat /e{tc,x}/passwd"), errOutside, nil},
		{"quotes and escapes", sh(`cat "/etc/"'pass'\wd`), errOutside, &checkCall{"/etc/passwd", AccessRead}},
		{"escaped slash", sh(`cat \/etc/passwd`), errOutside, nil},
		{"glob outside", sh("cat /etc/*"), errOutside, &checkCall{"/etc/", AccessRead}},
		{"unquoted backslash escapes a space", sh(`cat /usr/a\ b`), nil, &checkCall{"/usr/a b", AccessRead}},
		{"backslash-newline joins", sh("cat /usr/a\\\nb"), nil, &checkCall{"/usr/ab", AccessRead}},
		{"double quotes drop the escapes of $ \" \\ only", sh(`cat "/usr/a\$b\"c\\d\e"`), nil, &checkCall{`/usr/a$b"c\d\e`, AccessRead}},
		{"single quotes keep backslashes", sh(`cat '/usr/a\b'`), nil, &checkCall{`/usr/a\b`, AccessRead}},
		{"quoted star is not a glob", sh(`cat '/etc/*'x`), errOutside, &checkCall{"/etc/*x", AccessRead}},
		{"unquoted heredoc script drops escapes", sh("bash <<EOF\ncat /usr/a\\\\b\nEOF\n"), nil, &checkCall{"/usr/ab", AccessRead}},
		{"quoted heredoc script keeps them", sh("bash <<'EOF'\ncat /usr/a\\\\b\nEOF\n"), nil, &checkCall{`/usr/a\b`, AccessRead}},
		{"glob may match dot-dot", sh("cat .*/passwd"), ErrUnverifiable, nil},
		{"relative glob", sh("gofmt -l *.go"), nil, nil},
		{"eval", sh("eval ls"), ErrUnverifiable, nil},
		{"alias", sh("alias l=ls"), ErrUnverifiable, nil},
		{"source outside", sh("source /etc/profile"), errOutside, nil},
		{"dot inside", sh(". ./env.sh && make"), nil, nil},
		{"assignment", sh("X=/etc/x; ls"), errOutside, nil},
		{"env assignment", sh("LD_PRELOAD=/tmp/e.so ls"), errOutside, nil},
		{"export", sh("export P=/usr/bin:/etc"), errOutside, nil},
		{"trap", sh("trap 'cat /etc/x' EXIT; ls"), errOutside, nil},
		{"function body sees later cd", sh("f() { cat ../x; }\ncd " + root + "\nf"), errOutside, nil},
		{"test clause", sh("[[ -f /etc/shadow ]] && echo y"), errOutside, nil},
		{"for items", sh("for f in /etc/a b; do echo x; done"), errOutside, nil},
		{"safe multi-command script", sh(`set -euo pipefail
cd sub && make -j4 > build.log 2>&1 || true
go test ./... -run 'Test[A-Z]' | tee out.txt
for f in *.go; do echo "file"; done
git commit -m "fix: a/b" --author='x <x@y>'
echo done >> log.txt; cat <<EOF > notes.md
# notes about /etc/passwd
EOF
`), nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &fakePolicy{root: root}
			dir := root
			if strings.Contains(tc.name, "later cd") {
				dir = root + "/a"
			}
			err := Check(tc.argv, dir, p.check)
			if tc.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.want)
				var ce *Error
				assert.ErrorAs(t, err, &ce)
			}
			if tc.asked != nil {
				assert.True(t, p.asked(tc.asked.path, tc.asked.a), "check(%q, %v) not called; calls: %v", tc.asked.path, tc.asked.a, p.calls)
			}
		})
	}
}

// nest wraps script in n levels of bash -c.
func nest(n int, script string) []string {
	for range n - 1 {
		q, err := syntax.Quote(script, syntax.LangBash)
		if err != nil {
			panic(err)
		}
		script = "bash -c " + q
	}
	return []string{"bash", "-c", script}
}

func TestCheckRelativeToDir(t *testing.T) {
	// root/a/b/../.. is root itself, but root/a/b/../../.. is outside.
	root := t.TempDir()
	p := &fakePolicy{root: root}
	require.NoError(t, Check([]string{"cat", "../../x"}, root+"/a/b", p.check))
	assert.True(t, p.asked(root+"/a/b/../../x", AccessRead), "calls: %v", p.calls)
	assert.ErrorIs(t, Check([]string{"cat", "../../../x"}, root+"/a/b", p.check), errOutside)
}

func TestCheckError(t *testing.T) {
	root := t.TempDir()
	p := &fakePolicy{root: root}

	err := Check([]string{"ls"}, "/etc", p.check)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, -1, ce.Arg)
	assert.Equal(t, "/etc", ce.Token)
	assert.ErrorIs(t, err, errOutside)
	assert.True(t, p.asked("/etc", AccessExecute))

	err = Check([]string{"cp", "a", "--target=/etc/x"}, root, p.check)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Arg)
	assert.Equal(t, "--target=/etc/x", ce.Token)
	assert.Contains(t, err.Error(), "argument 2")

	// A script word: Arg is the script's index, Token the word as written.
	err = Check([]string{"bash", "-c", `ls; cat "/etc/"x`}, root, p.check)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Arg)
	assert.Equal(t, `"/etc/"x`, ce.Token)

	err = Check([]string{"bash", "-c", `cat $X`}, root, p.check)
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, ErrUnverifiable)
	assert.Equal(t, "$X", ce.Token)
}

func TestAccessString(t *testing.T) {
	assert.Equal(t, "read", AccessRead.String())
	assert.Equal(t, "write", AccessWrite.String())
	assert.Equal(t, "execute", AccessExecute.String())
	assert.Equal(t, "Access(9)", Access(9).String())
}

// TestCheckExistingRelative: a relative argument with no ".." is
// checked when it names an existing entry of the working directory,
// and a relative glob through each entry it matches (red team round 26,
// R26c-4: `cat .env` ran under the path-check layer, `cat /abs/.env`
// was refused). Controls: a name that does not exist, an option, a word
// the shell's * does not match (a leading dot), an allowed file.
func TestCheckExistingRelative(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	dir := filepath.Join(base, "w[s]") // a pattern character in its path (R27d-5)
	require.NoError(t, os.Mkdir(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prod.key"), []byte("KEY"), 0o600))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "link")))
	errDenied := errors.New("fake: denied")
	check := func(p string, a Access) error {
		if filepath.Base(p) == ".env" || strings.HasSuffix(p, ".key") {
			return errDenied
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && !within(r, dir) {
			return errOutside
		}
		return nil
	}
	for _, tc := range []struct {
		argv []string
		want error
	}{
		{[]string{"cat", ".env"}, errDenied},
		{[]string{"sh", "-c", "cat .env"}, errDenied},
		{[]string{"sh", "-c", "cat .e*"}, ErrUnverifiable}, // may match ..
		{[]string{"sh", "-c", "cat *.key"}, errDenied},
		{[]string{"cat", "link"}, errOutside},
		{[]string{"cat", "main.go"}, nil},
		{[]string{"cat", "*"}, nil},             // * skips .env, as the shell's
		{[]string{"sh", "-c", "cat *.go"}, nil}, // matches main.go only
		{[]string{"grep", "-r", "API_KEY", "."}, nil},
		{[]string{"touch", "new.txt"}, nil},
		{[]string{"echo", "-n"}, nil},
		// R27d-5: an option's value, dotglob.
		{[]string{"xargs", "-a.env", "echo"}, errDenied},
		{[]string{"xargs", "--arg-file=.env", "echo"}, errDenied},
		{[]string{"bash", "-c", "shopt -s dotglob; cat *env"}, errDenied},
		{[]string{"grep", "--color=auto", "-n", "x", "main.go"}, nil},
	} {
		err := Check(tc.argv, dir, check)
		if tc.want == nil {
			assert.NoError(t, err, "%q", tc.argv)
		} else {
			assert.ErrorIs(t, err, tc.want, "%q", tc.argv)
		}
	}
}
