package main

import (
	"errors"
	"fmt"
	osexec "os/exec"
	"strings"
)

// gitIdentity returns GIT_AUTHOR_NAME/EMAIL and GIT_COMMITTER_NAME/EMAIL
// from the caller's git config user.name and user.email (--git-identity):
// the command sees the identity but not ~/.gitconfig. A missing key is
// left out; git itself missing is an error.
func gitIdentity() ([]string, error) {
	var env []string
	for _, k := range []struct{ key, suffix string }{{"user.name", "NAME"}, {"user.email", "EMAIL"}} {
		out, err := osexec.Command("git", "config", "--get", k.key).Output()
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
