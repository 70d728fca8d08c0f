package fallback

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

// Stand-ins for the jail sentinels: the fake policy below returns them.
var (
	errCmdOutside  = errors.New("fake: outside the workspace")
	errCmdReadOnly = errors.New("fake: read-only root")
)

type cmdCall struct {
	path string
	a    Access
}

// cmdFakePolicy allows root read-write and /usr read+execute, lexically (the
// real policy resolves symlinks; the command check only has to ask).
type cmdFakePolicy struct {
	root  string
	calls []cmdCall
}

func (p *cmdFakePolicy) check(unsafePath string, a Access) error {
	p.calls = append(p.calls, cmdCall{unsafePath, a})
	if !filepath.IsAbs(unsafePath) {
		return errors.New("fake: CheckCommand passed a relative path")
	}
	c := filepath.Clean(unsafePath)
	switch {
	case cmdWithin(c, p.root):
		return nil
	case cmdWithin(c, "/usr"):
		if a == AccessWrite {
			return errCmdReadOnly
		}
		return nil
	}
	return errCmdOutside
}

func cmdWithin(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+"/")
}

func (p *cmdFakePolicy) asked(path string, a Access) bool {
	for _, c := range p.calls {
		if c.path == path && c.a == a {
			return true
		}
	}
	return false
}

func TestCheckCommand(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", "/home/tester") // outside the workspace
	sh := func(script string) []string { return []string{"bash", "-c", script} }

	tests := []struct {
		name string
		argv []string
		want error // nil, errCmdOutside, errCmdReadOnly or ErrUnverifiable
		// asked, when set, must have been passed to the check.
		asked *cmdCall
	}{
		{"plain absolute path", []string{"cat", "/etc/passwd"}, errCmdOutside, nil},
		{"dot-dot escapes", []string{"cat", "./a/../../x"}, errCmdOutside, nil},
		{"no paths", []string{"ls"}, nil, nil},
		{"ls -la", []string{"ls", "-la", "sub"}, nil, nil},
		{"argv0 with slash outside", []string{"/opt/evil/bin", "x"}, errCmdOutside, nil},
		{"argv0 with slash allowed", []string{"/usr/bin/ls", "x"}, nil, &cmdCall{"/usr/bin/ls", AccessExecute}},
		{"git -C then token", []string{"git", "-C", "/etc", "status"}, errCmdOutside, nil},
		{"long option value", []string{"tool", "--file=/etc/x"}, errCmdOutside, nil},
		{"option value list", []string{"tool", "--path=/usr/lib:/etc"}, errCmdOutside, nil},
		{"dd operand", []string{"dd", "if=/etc/shadow", "of=x"}, errCmdOutside, nil},
		{"short option attached", []string{"cc", "-I/usr/include", "x.c"}, nil, &cmdCall{"/usr/include", AccessRead}},
		{"short option attached outside", []string{"cc", "-L../lib"}, errCmdOutside, nil},
		{"linker comma list", []string{"cc", "-Wl,-rpath,/etc", "x.c"}, errCmdOutside, nil},
		{"tilde is caller's home", []string{"cat", "~/.ssh/id_rsa"}, errCmdOutside, &cmdCall{"/home/tester/.ssh/id_rsa", AccessRead}},
		{"tilde user", []string{"cat", "~root/x"}, ErrUnverifiable, nil},
		{"url is not a path", []string{"curl", "https://example.com/etc/passwd"}, nil, nil},
		{"scp-like remote", []string{"git", "clone", "git@github.com:x/y.git"}, nil, nil},
		{"file url is a path", []string{"curl", "file:///etc/passwd"}, errCmdOutside, nil},
		{"file url with host", []string{"curl", "file://localhost/etc/passwd"}, errCmdOutside, nil},
		{"url-like name with dot-dot", []string{"cat", "x@y:/../../../etc/passwd"}, errCmdOutside, nil},
		{"colon value checked whole", []string{"tool", "--file=/usr/x:y"}, nil, &cmdCall{"/usr/x:y", AccessRead}},
		{"devices skip the check", []string{"cp", "/dev/null", "/dev/stdout"}, nil, nil},
		{"device by another name", []string{"cat", "/dev/../etc/passwd"}, errCmdOutside, nil},
		{"inside workspace", []string{"cat", root + "/a/b"}, nil, &cmdCall{root + "/a/b", AccessRead}},
		{"empty argv", []string{}, ErrUnverifiable, nil},

		{"bash -c", sh("cat /etc/shadow"), errCmdOutside, nil},
		{"sh -c redirect is write", []string{"sh", "-c", "echo hi > /tmp/x"}, errCmdOutside, &cmdCall{"/tmp/x", AccessWrite}},
		{"redirect into read-only root", sh("echo hi > /usr/x"), errCmdReadOnly, nil},
		{"input redirect is read", sh("wc -l < /etc/passwd"), errCmdOutside, &cmdCall{"/etc/passwd", AccessRead}},
		{"exec fd redirect", sh("exec 3>/etc/x"), errCmdOutside, nil},
		{"dup to a file", sh("make >& /etc/log"), errCmdOutside, nil},
		{"dup to a descriptor", sh("echo hi >&2; cat x 2>/dev/null 1>&-"), nil, nil},
		{"parameter expansion", sh("cat $HOME/.ssh/id_rsa"), ErrUnverifiable, nil},
		{"quoted parameter expansion", sh(`cat "$1"`), ErrUnverifiable, nil},
		{"command substitution script", sh("$(curl x)"), ErrUnverifiable, nil},
		{"backquotes", sh("cat `echo /etc/passwd`"), ErrUnverifiable, nil},
		{"process substitution", sh("diff <(ls) x"), ErrUnverifiable, nil},
		{"arithmetic", sh("echo $((1+2))"), ErrUnverifiable, nil},
		{"ansi-c quote with escapes", sh(`cat $'\x2fetc/passwd'`), ErrUnverifiable, nil},
		{"cd outside", sh("cd /etc && ls"), errCmdOutside, nil},
		{"cd inside", sh("cd " + root + "/sub && ls"), nil, &cmdCall{root + "/sub", AccessExecute}},
		{"cd inside then dot-dot", sh("cd sub && cat ../../x"), errCmdOutside, nil},
		{"cd in subshell does not hide its parent", sh("(cd sub/deeper); cat ../x"), errCmdOutside, nil},
		{"cd in a loop", sh("for i in 1 2; do cd sub; done"), ErrUnverifiable, nil},
		{"cd minus", sh("cd -"), ErrUnverifiable, nil},
		{"cd home", sh("cd; ls"), errCmdOutside, &cmdCall{"/home/tester", AccessExecute}},
		{"CDPATH", sh("CDPATH=sub; cd x"), ErrUnverifiable, nil},
		{"env bash -c", []string{"env", "bash", "-c", "cat /etc/x"}, errCmdOutside, nil},
		{"/usr/bin/env bash -c", []string{"/usr/bin/env", "-i", "X=1", "bash", "-c", "cat /etc/x"}, errCmdOutside, nil},
		{"env -S", []string{"env", "-S", `bash -c "cat /etc/x"`}, errCmdOutside, nil},
		{"bash -lc", []string{"bash", "-lc", "cat /etc/x"}, errCmdOutside, nil},
		{"bash -o pipefail -c", []string{"bash", "-o", "pipefail", "-ec", "cat /etc/x"}, errCmdOutside, nil},
		{"timeout sh -c", []string{"timeout", "5", "/usr/bin/sh", "-c", "cat /etc/x"}, errCmdOutside, nil},
		{"bash script file is not inspected", []string{"bash", "build.sh"}, nil, nil},
		{"nested", sh(`sh -c 'cat /etc/x'`), errCmdOutside, nil},
		{"nested twice", sh(`sh -c "dash -c 'cat /etc/x'"`), errCmdOutside, nil},
		{"nesting at the limit", nest(cmdMaxScriptDepth, "cat /etc/x"), errCmdOutside, nil},
		{"nesting too deep", nest(cmdMaxScriptDepth+1, "ls"), ErrUnverifiable, nil},
		{"heredoc is data", sh("cat <<'EOF'\n/etc/passwd $(x)\nEOF\n"), nil, nil},
		{"unquoted heredoc runs substitutions", sh("cat <<EOF\n$(cat /etc/x)\nEOF\n"), ErrUnverifiable, nil},
		{"heredoc feeding a shell", sh("bash <<'EOF'\ncat /etc/shadow\nEOF\n"), errCmdOutside, nil},
		{"here-string feeding a shell", sh("sh <<< 'cat /etc/shadow'"), errCmdOutside, nil},
		{"heredoc into a shell's -c script", sh("bash -c 'bash' <<'EOF'\ncat /etc/shadow\nEOF\n"), ErrUnverifiable, nil},
		{"glob as command name", sh("ba?h -c 'cat /etc/shadow'"), ErrUnverifiable, nil},
		{"subscript evaluated as code", sh("printf -v 'a[$(cat /etc/shadow)]' x"), ErrUnverifiable, nil},
		{"pipe into a shell", sh("echo 'cat /etc/shadow' | bash"), ErrUnverifiable, nil},
		{"grep for bash in a pipe", sh("ps aux | grep bash"), nil, nil},
		{"does not parse", sh("if then fi ("), ErrUnverifiable, nil},
		{"brace expansion", sh("cat /e{tc,x}/passwd"), errCmdOutside, nil},
		{"quotes and escapes", sh(`cat "/etc/"'pass'\wd`), errCmdOutside, &cmdCall{"/etc/passwd", AccessRead}},
		{"escaped slash", sh(`cat \/etc/passwd`), errCmdOutside, nil},
		{"glob outside", sh("cat /etc/*"), errCmdOutside, &cmdCall{"/etc/", AccessRead}},
		{"glob may match dot-dot", sh("cat .*/passwd"), ErrUnverifiable, nil},
		{"relative glob", sh("gofmt -l *.go"), nil, nil},
		{"eval", sh("eval ls"), ErrUnverifiable, nil},
		{"alias", sh("alias l=ls"), ErrUnverifiable, nil},
		{"source outside", sh("source /etc/profile"), errCmdOutside, nil},
		{"dot inside", sh(". ./env.sh && make"), nil, nil},
		{"assignment", sh("X=/etc/x; ls"), errCmdOutside, nil},
		{"env assignment", sh("LD_PRELOAD=/tmp/e.so ls"), errCmdOutside, nil},
		{"export", sh("export P=/usr/bin:/etc"), errCmdOutside, nil},
		{"trap", sh("trap 'cat /etc/x' EXIT; ls"), errCmdOutside, nil},
		{"function body sees later cd", sh("f() { cat ../x; }\ncd " + root + "\nf"), errCmdOutside, nil},
		{"test clause", sh("[[ -f /etc/shadow ]] && echo y"), errCmdOutside, nil},
		{"for items", sh("for f in /etc/a b; do echo x; done"), errCmdOutside, nil},
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
			p := &cmdFakePolicy{root: root}
			dir := root
			if strings.Contains(tc.name, "later cd") {
				dir = root + "/a"
			}
			err := CheckCommand(tc.argv, dir, p.check)
			if tc.want == nil {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, tc.want)
				var ce *CommandError
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

func TestCheckCommandRelativeToDir(t *testing.T) {
	// root/a/b/../.. is root itself, but root/a/b/../../.. is outside.
	root := t.TempDir()
	p := &cmdFakePolicy{root: root}
	require.NoError(t, CheckCommand([]string{"cat", "../../x"}, root+"/a/b", p.check))
	assert.True(t, p.asked(root+"/a/b/../../x", AccessRead), "calls: %v", p.calls)
	assert.ErrorIs(t, CheckCommand([]string{"cat", "../../../x"}, root+"/a/b", p.check), errCmdOutside)
}

func TestCheckCommandError(t *testing.T) {
	root := t.TempDir()
	p := &cmdFakePolicy{root: root}

	err := CheckCommand([]string{"ls"}, "/etc", p.check)
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, -1, ce.Arg)
	assert.Equal(t, "/etc", ce.Token)
	assert.ErrorIs(t, err, errCmdOutside)
	assert.True(t, p.asked("/etc", AccessExecute))

	err = CheckCommand([]string{"cp", "a", "--target=/etc/x"}, root, p.check)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Arg)
	assert.Equal(t, "--target=/etc/x", ce.Token)
	assert.Contains(t, err.Error(), "argument 2")

	// A script word: Arg is the script's index, Token the word as written.
	err = CheckCommand([]string{"bash", "-c", `ls; cat "/etc/"x`}, root, p.check)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, 2, ce.Arg)
	assert.Equal(t, `"/etc/"x`, ce.Token)

	err = CheckCommand([]string{"bash", "-c", `cat $X`}, root, p.check)
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
