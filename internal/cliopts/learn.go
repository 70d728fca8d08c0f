package cliopts

import (
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v3"
)

// flagLearn is run's --learn FILE: a command-line flag only, never a
// --config key (a config file that names the file it is rewritten into
// would let one run choose where the next one's policy goes).
const flagLearn = "learn"

// learnFlag is --learn, for run.
func learnFlag() cli.Flag {
	return &cli.StringFlag{Name: flagLearn, Usage: "after the command exits, record what was refused as exact grants in TOML `FILE` (ro/rox/rw of the exact file, or the directory a create was refused in; allow_domain host:port for proxy refusals), merged into FILE if it exists, written atomically whether the command succeeded or not; deny patterns, private keys, --read-only, --protect-agent-config, the --config/--learn files and writes where code that runs outside the sandbox could be planted (.git, HOME's start-up files, agent configuration, a repository's directories) are never lifted (listed as \"refused by design\" comments); each grant is printed on stderr: review FILE before reusing it, the command chose its refusals. Implies --explain and learns what it lists (Landlock's own refusals need root and ABI 7); repeat landjail run --learn F --config F -- CMD until CMD succeeds. Not a --config key"}
}

// loadLearn sets o.learn from --learn (absolute), and o.learnFile, its
// canonical path, when it exists: read-only for the command when a
// writable root holds it, as the --config file is (Policy). --learn
// turns Explain on: it learns from the refusals --explain collects (the
// seccomp filter records the view's and its own only then).
func (o *Options) loadLearn(cmd flagValues, isSet map[string]bool) {
	if !isSet[flagLearn] {
		return
	}
	o.learnGiven = cmd.String(flagLearn)
	o.learn = absOrSelf(o.learnGiven)
	o.Explain = true
	if c, err := filepath.EvalSymlinks(o.learn); err == nil {
		if c, err = filepath.Abs(c); err == nil {
			o.learnFile = c
		}
	}
}

// Learn is the --learn FILE, absolute ("" without --learn).
func (o *Options) Learn() string { return o.learn }

// PolicyFiles are the run's policy files: the --config file (canonical)
// and the --learn FILE (absolute, and canonical when it exists); none
// without them. --learn never grants them, a directory above them or
// another name of them (learn.PolicyClassifier.Pinned), and fileRules
// never lets a rule make them writable.
func (o *Options) PolicyFiles() []string {
	var out []string
	for _, f := range []string{o.configFile, o.learn, o.learnFile} {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}
