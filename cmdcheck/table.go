package cmdcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// shells are the names (after filepath.Base) whose -c argument is a script.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true,
	"mksh": true, "ash": true, "rbash": true, "yash": true, "posh": true,
	"lksh": true, "fish": true,
}

// wrappers run the rest of their arguments as a command; a shell after them
// (and their options) is in command position.
var wrappers = map[string]bool{
	"env": true, "exec": true, "command": true, "builtin": true,
	"nohup": true, "nice": true, "sudo": true, "doas": true,
	"timeout": true, "stdbuf": true, "setsid": true, "time": true,
	"xargs": true, "ionice": true, "chrt": true, "taskset": true,
	"busybox": true, "unbuffer": true,
}

// shellMode is how a shell invocation gets its script.
type shellMode int

const (
	shellStdin  shellMode = iota // no -c and no operand: reads standard input
	shellScript                  // -c SCRIPT
	shellFile                    // an operand: the script is a file
	shellNoArg                   // -c without its operand
)

// shellArgs parses the options after a shell's name, as bash does: the
// script of -c is the first operand after all options; -o and -O take a
// value; --rcfile and --init-file take one; "--command=X" (fish) is a
// script.
func shellArgs(args []field) (shellMode, field) {
	cmd, stdin := false, false
	for i := 0; i < len(args); i++ {
		t := args[i].s
		switch {
		case t == "--" || t == "-":
			if i+1 < len(args) && cmd {
				return shellScript, args[i+1]
			}
			if i+1 < len(args) && !stdin {
				return shellFile, args[i+1]
			}
			i = len(args)
		case strings.HasPrefix(t, "--"):
			name, v, hasV := strings.Cut(t[2:], "=")
			switch name {
			case "command", "init-command":
				if hasV {
					return shellScript, field{s: v, glob: args[i].glob, arg: args[i].arg, tok: args[i].tok}
				}
				if i+1 < len(args) {
					return shellScript, args[i+1]
				}
				return shellNoArg, field{}
			case "rcfile", "init-file":
				if !hasV {
					i++
				}
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			for _, ch := range t[1:] {
				switch ch {
				case 'c', 'C':
					cmd = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++
				}
			}
		default:
			if cmd {
				return shellScript, args[i]
			}
			if stdin {
				return shellStdin, field{}
			}
			return shellFile, args[i]
		}
	}
	if cmd {
		return shellNoArg, field{}
	}
	return shellStdin, field{}
}

// inCommandPosition reports whether args[i] is the program that runs: the
// first word, or after wrappers and their options, assignments and numbers
// (env -i X=1 bash, timeout 5 sh, nice -n 10 bash).
func inCommandPosition(args []field, i int) bool {
	for _, a := range args[:i] {
		t := a.s
		switch {
		case wrappers[filepath.Base(t)], strings.HasPrefix(t, "-"):
		case t != "" && t[0] >= '0' && t[0] <= '9':
		case strings.Contains(t, "=") && !strings.Contains(t[:strings.IndexByte(t, '=')], "/"):
		default:
			return false
		}
	}
	return true
}

// command checks one simple command: argv at the top level, or one command
// envSplit checks the string of "env -S STRING" (env splits it into a
// command line much as a shell would): args follow "env".
func (c *checker) envSplit(args []field, s *scope) error {
	for i := 0; i < len(args); i++ {
		t := args[i].s
		if t == "--" || !strings.HasPrefix(t, "-") {
			return nil
		}
		if args[i].glob >= 0 || i+1 < len(args) && args[i+1].glob >= 0 {
			return unverifiable(args[i], "glob in env options")
		}
		if v, ok := strings.CutPrefix(t, "--split-string"); ok {
			if v, ok = strings.CutPrefix(v, "="); ok {
				return c.script(field{s: v, glob: -1, arg: args[i].arg, tok: args[i].tok}, s, false)
			}
			if i+1 < len(args) {
				return c.script(args[i+1], s, false)
			}
			return nil
		}
		if strings.HasPrefix(t, "--") {
			if !strings.Contains(t, "=") && (t == "--unset" || t == "--chdir") {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			switch t[j] {
			case 'S':
				if j+1 < len(t) {
					return c.script(field{s: t[j+1:], glob: -1, arg: args[i].arg, tok: args[i].tok}, s, false)
				}
				if i+1 < len(args) {
					return c.script(args[i+1], s, false)
				}
				return nil
			case 'u', 'C':
				if j+1 == len(t) {
					i++
				}
				j = len(t)
			}
		}
	}
	return nil
}

// stdinScript handles a shell reading its script from standard input: a
// builtin applies the shell builtins that change what paths mean or run
// strings as code.
func (c *checker) builtin(args []field, s *scope) error {
	for len(args) > 1 && (args[0].s == "builtin" || args[0].s == "command") {
		args = args[1:]
	}
	switch args[0].s {
	case "eval", "alias":
		return unverifiable(args[0], "%s runs a string as code", args[0].s)
	case "source", ".":
		if len(args) > 1 {
			return c.path(args[1].s, AccessRead, s, args[1])
		}
	case "trap":
		if len(args) > 1 && args[1].s != "" && args[1].s != "-" && !strings.HasPrefix(args[1].s, "-") {
			file, err := s.parser.Parse(strings.NewReader(args[1].s), "")
			if err != nil {
				return unverifiable(args[1], "trap action does not parse: %w", err)
			}
			s.deferred = append(s.deferred, file.Stmts...)
		}
	case "cd", "pushd", "chdir":
		return c.cd(args, s)
	}
	return nil
}

// cd checks the target of cd or pushd (Execute) and adds it to the
// directories the script may be in.
func (c *checker) cd(args []field, s *scope) error {
	name := args[0]
	if s.repeat > 0 {
		return unverifiable(name, "%s in a loop, function or trap", name.s)
	}
	args = args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0].s, "-") && len(args[0].s) > 1 {
		t := args[0].s
		args = args[1:]
		if t == "--" {
			break
		}
		if name.s == "pushd" && (t[1] >= '0' && t[1] <= '9') {
			return nil // pushd -N rotates the stack: directories already known
		}
	}
	var target field
	switch {
	case len(args) == 0 && name.s == "pushd":
		return nil // swaps the top two: directories already known
	case len(args) == 0:
		target = field{s: "~", glob: -1, arg: name.arg, tok: name.tok}
	default:
		target = args[0]
	}
	switch {
	case target.s == "-":
		return unverifiable(target, "cd - returns to $OLDPWD")
	case target.glob >= 0:
		return unverifiable(target, "glob as cd target")
	case strings.HasPrefix(target.s, "+") && name.s == "pushd":
		return nil
	case target.s == "":
		return nil
	}
	if err := c.path(target.s, AccessExecute, s, target); err != nil {
		return err
	}
	p := target.s
	if p[0] == '~' {
		home, err := os.UserHomeDir()
		if err != nil {
			return unverifiable(target, "home directory: %w", err)
		}
		p = home + p[1:]
	}
	var add []string
	if filepath.IsAbs(p) {
		add = []string{p}
	} else {
		for _, d := range s.dirs {
			add = append(add, d+"/"+p)
		}
	}
	for _, d := range add {
		if !slices.Contains(s.dirs, d) {
			s.dirs = append(s.dirs, d)
		}
	}
	if len(s.dirs) > maxDirs {
		return unverifiable(target, "script may be in more than %d directories", maxDirs)
	}
	return nil
}
