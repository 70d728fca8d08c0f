package jail_test

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
)

// TestShellVariablePatternRound17 (red team round 17, R17a-8): a deny,
// read-only or key pattern spelled with a shell variable ("$HOME/x",
// "${PWD}/x", as a policy file or an MCP client's argument list leaves
// it) is refused (path.ErrBadPattern naming the variable): it matched
// nothing, silently. Controls: "\$x" (a file named "$x") and a "$" inside
// a name are patterns, and the expanded path denies the file.
func TestShellVariablePatternRound17(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "$x"), []byte("S"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(root, "Outer$Inner.class"), []byte("S"), 0o600))
	for _, o := range []jail.Option{
		jail.WithDeny("$HOME/proj/config/prod.key.txt"), jail.WithDeny("${HOME}/proj/secrets/"),
		jail.WithDeny("config/$ENV/x"), jail.WithDeny("!$PWD/x"), jail.WithReadOnly("$PWD/deploy/"),
		jail.WithDenyPrivateKeys("${XDG_CONFIG_HOME}/x"),
		// Round 18 (R18a-2): other shell and environment syntax.
		jail.WithDeny("$(pwd)/config/x"), jail.WithDeny("`pwd`/config/x"), jail.WithDeny("~alice/x"),
		jail.WithDeny("~+/x"), jail.WithDeny("%h/x"), jail.WithDeny("%USERPROFILE%/x"), jail.WithDeny(`config\prod.key.txt`),
		jail.WithDeny(`"$HOME"/x`), jail.WithDeny("$1/x"), jail.WithDeny("$@/x"), jail.WithDeny("$$/x"),
		jail.WithReadOnly("$(pwd)/deploy/"),
		// POSIX character classes, which the matcher does not read (R18a-12).
		jail.WithDeny("config/[[:lower:]]rod/secret.txt"), jail.WithDeny("[[:alnum:]]1.pem"),
		jail.WithDeny("{{ .Home }}/x"), jail.WithDeny("$'x'/y"),
		// Round 19 (R19-6): white space around, a leading #, a brace list.
		jail.WithDeny(" config/x"), jail.WithDeny("config/x\n"), jail.WithDeny("config/x\t"), jail.WithDeny("#notes"),
		jail.WithDeny("config/{prod,dev}.key"), jail.WithReadOnly("deploy/{a,b}/"),
	} {
		_, err := jail.New(root, o)
		assert.ErrorIs(t, err, path.ErrBadPattern)
	}
	require.NoError(t, os.Mkdir(filepath.Join(root, "$work"), 0o755))
	w, err := jail.New(root, jail.WithDeny(`\$x`, "*$Inner.class", "$", "a$b", `\[x]`, "%20x", "x~", "~", `a\ `, "trailing ", `\#notes`, "{x}"), jail.WithReadOnly(filepath.Join(root, "$work")))
	require.NoError(t, err, "control: escaped and inner $")
	defer w.Close()
	for _, f := range []string{"$x", "Outer$Inner.class"} {
		_, err := w.ReadFile(f)
		assert.ErrorIs(t, err, jail.ErrDenied, f)
	}
}

// TestDotPatternFromWorkingDirectoryRound17 (red team round 17, R17a-10):
// with the workspace elsewhere than the working directory, "./data/x"
// denies the file from both (the working directory is where "--ro
// ./data" is taken from). Control: run from the workspace, the other
// directory's file is readable through its root. Red before: the
// working directory's file was read.
func TestDotPatternFromWorkingDirectoryRound17(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	a, b := filepath.Join(base, "A"), filepath.Join(base, "B")
	for _, d := range []string{a, b} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "data"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "data/secret.txt"), []byte("S"), 0o600))
	}
	for _, wd := range []string{b, a} {
		t.Chdir(wd)
		w, err := jail.New(a, jail.WithAllowed(filepath.Join(b, "data"), jail.ReadOnly), jail.WithDeny("./data/secret.txt"))
		require.NoError(t, err)
		_, err = w.ReadFile(filepath.Join(a, "data/secret.txt"))
		assert.ErrorIs(t, err, jail.ErrDenied, "the workspace's")
		_, err = w.ReadFile(filepath.Join(b, "data/secret.txt"))
		if wd == b {
			assert.ErrorIs(t, err, jail.ErrDenied, "the working directory's")
		} else {
			assert.NoError(t, err, "control: run from the workspace")
		}
		w.Close()
	}
}

// TestShellSyntaxNames: the refusal names the spelling as written.
func TestShellSyntaxNames(t *testing.T) {
	for in, want := range map[string]string{
		"$HOME/x": "$HOME", "${PWD}/x": "${PWD}", "$(pwd)/x": "$(pwd)", "$@/x": "$@", "$1/x": "$1",
		"~alice/x": "~alice", "%h/x": "%h", "config\\prod": "\\p", "{{ .Home }}/x": "{{ .Home }}/x",
		"a$b": "", "\\$x": "", "~/x": "", "*.pem": "",
	} {
		assert.Equal(t, want, jail.ShellSyntax(in), in)
	}
}
