package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/landjail/landjail/internal/termsafe"
)

// gitIdentityTimeout bounds the git config calls of --git-identity
// together: they read two small files, a few milliseconds; one that does
// not answer is a FIFO or a stalled mount among the caller's git config.
const gitIdentityTimeout = 5 * time.Second

// gitIdentity returns GIT_AUTHOR_NAME/EMAIL and GIT_COMMITTER_NAME/EMAIL
// from the caller's git config user.name and user.email (--git-identity):
// the command sees the identity but not ~/.gitconfig. A missing key is
// left out; git itself missing is an error. landjail runs git itself,
// unconfined, so git is looked up as the presets look up toolchains
// (trustedGit): never in a root the command can write.
//
// Only the caller's configuration is read, the system's (/etc/gitconfig)
// and the global one (~/.gitconfig, its includes), never a repository's:
// git runs in "/" with GIT_DIR=/nonexistent and stdin from /dev/null.
// Run in the workspace, git read its .git/config, which a previous
// confined run could have made a FIFO (landjail never started) or an
// include of any file into user.name, choosing the next run's identity
// (red team round 26, R26a-5); even with --global, git's repository
// discovery reads it. So an includeIf "gitdir:" identity does not apply:
// pass it with --env GIT_AUTHOR_NAME=... and the other three. The calls
// get gitIdentityTimeout together; past it the error says so and the
// command is not run.
func gitIdentity(o *options) ([]string, error) {
	git, err := trustedGit(o, os.Getenv("PATH"))
	if err != nil {
		return nil, fmt.Errorf("--git-identity: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitIdentityTimeout)
	defer cancel()
	var env []string
	for _, k := range []struct{ key, suffix string }{{"user.name", "NAME"}, {"user.email", "EMAIL"}} {
		c := osexec.CommandContext(ctx, git, "config", "--get", k.key)
		c.Dir = "/"
		c.Env = append(os.Environ(), "GIT_DIR=/nonexistent")
		c.WaitDelay = time.Second
		out, err := c.Output()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("--git-identity: git config --get %s did not answer within %v (a FIFO or a stalled file system among your git config files?): %w", k.key, gitIdentityTimeout, ctx.Err())
		}
		var ee *osexec.ExitError
		if errors.As(err, &ee) {
			continue // not set
		}
		if err != nil {
			return nil, fmt.Errorf("--git-identity: %w", err)
		}
		v := strings.TrimRight(string(out), "\n")
		env = append(env, "GIT_AUTHOR_"+k.suffix+"="+v, "GIT_COMMITTER_"+k.suffix+"="+v)
	}
	return env, nil
}

// trustedGit returns the first git in path (a PATH value) that landjail
// may run: in an absolute directory, executable, and neither the
// directory nor the program (symbolic links resolved) in a root the
// command can write. A confined run writes bin/git in the workspace,
// which direnv's PATH_add bin or a CI runner's node_modules/.bin put on
// PATH, and the next run's --git-identity executed it outside the
// sandbox (red team round 25, R25c-6). Errors: exec.ErrNotFound wrapped,
// naming the entries skipped.
func trustedGit(o *options, path string) (string, error) {
	var skipped []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, "git")
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		cd, err1 := filepath.EvalSymlinks(dir)
		cp, err2 := filepath.EvalSymlinks(p)
		if err1 != nil || err2 != nil || o.InWritableRoot(cd) || o.InWritableRoot(cp) {
			skipped = append(skipped, p)
			continue
		}
		return cp, nil
	}
	if len(skipped) > 0 {
		return "", fmt.Errorf("%w: git in PATH only in a root the command can write (%s): not run", osexec.ErrNotFound, termsafe.Quote(strings.Join(skipped, ", ")))
	}
	return "", fmt.Errorf("git: %w in PATH", osexec.ErrNotFound)
}
