package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/landlock"
)

// landrunCases is the oracle file: landrun's test.sh as data (see its
// NOTICE for origin, licence and fields).
const landrunCases = "../../testdata/oracles/landrun/cases.toml"

// landrunCase is one run_test call of landrun's test.sh.
type landrunCase struct {
	Name  string   `toml:"name"`
	Args  []string `toml:"args"`  // landrun's argv after the program name
	Env   []string `toml:"env"`   // extra NAME=VALUE for the landrun process
	Files []string `toml:"files"` // extra empty files that earlier cases left behind
	// Listen: test.sh runs a TCP listener on BIND_PORT outside the sandbox.
	Listen bool `toml:"listen"`
	// Internet: what test.sh reached on the internet, replaced by a local
	// HTTP server (for the record only).
	Internet string `toml:"internet"`
	// Landrun is the exit status test.sh expects; the case applies only
	// on kernels within the LandrunIf bounds (0: no bound).
	Landrun             int `toml:"landrun"`
	LandrunIfABIBelow   int `toml:"landrun_if_abi_below"`
	LandrunIfABIAtLeast int `toml:"landrun_if_abi_at_least"`
	// Landjail is landjail's exit status through the shim (nil: not
	// recorded yet); Divergence says why its outcome (success or failure)
	// differs from landrun's, Note why it fails for a different reason.
	Landjail   *int   `toml:"landjail"`
	Divergence string `toml:"divergence"`
	Note       string `toml:"note"`
}

type landrunFile struct {
	Env   []string      `toml:"env"`
	Cases []landrunCase `toml:"case"`
}

// applies reports whether test.sh runs c on a kernel with Landlock abi.
func (c *landrunCase) applies(abi int) bool {
	return (c.LandrunIfABIBelow == 0 || abi < c.LandrunIfABIBelow) &&
		(c.LandrunIfABIAtLeast == 0 || abi >= c.LandrunIfABIAtLeast)
}

// errLandrunFlag: the shim does not know a landrun flag.
var errLandrunFlag = errors.New("landrun flag unknown to the shim")

// landrunPresetDirs are the directories landjail's system preset grants
// read+execute (landlock.SystemRules).
var landrunPresetDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib64"}

// landrunShim maps a landrun command line (args after "landrun") onto
// "landjail run" with workspace ws (landjail always has one; landrun's
// working directory is granted nothing, so ws should be an empty
// directory). Mapping, flag by flag:
//
//	--ro/--rox/--rw P[,P...]      the same landjail flag per path
//	--rwx P                       --rw P (landjail's read-write includes execute)
//	--bind-tcp/--connect-tcp N[,N...]  the same flag per port
//	--env NAME[=VALUE]            --env
//	--best-effort                 --best-effort; without it, --strict
//	--unrestricted-network        --net host
//	--unrestricted-filesystem     --rw / (landjail has no such flag)
//	--ldd                         keep landjail's system preset (no --no-system):
//	                              landjail's own answer to "the libraries it needs"
//	--add-exec                    --rox BINARY (CMD found in PATH) unless a
//	                              directory already granted execute covers it
//	--ignore-missing              drop path flags naming missing paths
//	--log-level, --log-disable-originating, --log-enable-subprocesses,
//	--log-disable-subdomains      dropped: logging only
//	--unrestricted-scoped, --unix dropped: landjail has no flag; dropping
//	                              only makes the sandbox stricter
//
// landrun has no system preset, so without --ldd the result has
// --no-system. Unknown flags return an error wrapping errLandrunFlag.
func landrunShim(args []string, ws string) ([]string, error) {
	var (
		cmd                           []string
		paths                         [][2]string // {flag, path}
		ports                         [][2]string
		env                           []string
		bestEffort, ldd, addExec      bool
		netHost, fsAll, ignoreMissing bool
		valueFlags                    = map[string]bool{"ro": true, "rox": true, "rw": true, "rwx": true, "unix": true, "bind-tcp": true, "connect-tcp": true, "env": true, "log-level": true}
		dropFlags                     = map[string]bool{"unrestricted-scoped": true, "log-disable-originating": true, "log-enable-subprocesses": true, "log-disable-subdomains": true}
		splitComma                    = func(v string) []string { return strings.Split(v, ",") }
		haveCmd                       = false
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cmd, haveCmd = args[i+1:], true
			break
		}
		if !strings.HasPrefix(a, "-") {
			cmd, haveCmd = args[i:], true
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if valueFlags[name] && !hasVal {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("landrun flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch {
		case name == "ro" || name == "rox" || name == "rw":
			for _, p := range splitComma(val) {
				paths = append(paths, [2]string{name, p})
			}
		case name == "rwx":
			for _, p := range splitComma(val) {
				paths = append(paths, [2]string{"rw", p})
			}
		case name == "bind-tcp" || name == "connect-tcp":
			for _, p := range splitComma(val) {
				ports = append(ports, [2]string{name, p})
			}
		case name == "env":
			env = append(env, val)
		case name == "best-effort":
			bestEffort = true
		case name == "unrestricted-network":
			netHost = true
		case name == "unrestricted-filesystem":
			fsAll = true
		case name == "ldd":
			ldd = true
		case name == "add-exec":
			addExec = true
		case name == "ignore-missing":
			ignoreMissing = true
		case name == "log-level" || name == "unix" || dropFlags[name]:
		default:
			return nil, fmt.Errorf("--%s: %w", name, errLandrunFlag)
		}
	}
	if fsAll {
		paths = append(paths, [2]string{"rw", "/"})
	}
	if addExec && haveCmd && len(cmd) > 0 {
		if bin, err := osexec.LookPath(cmd[0]); err == nil {
			bin, _ = filepath.Abs(bin)
			exe := []string{}
			for _, p := range paths {
				if p[0] != "ro" {
					exe = append(exe, p[1])
				}
			}
			if ldd {
				exe = append(exe, landrunPresetDirs...)
			}
			if !landrunCovered(bin, exe) {
				paths = append(paths, [2]string{"rox", bin})
			}
		}
	}
	paths = landrunUnion(paths)
	// landrun is Landlock alone: the namespace layer (whose private /tmp
	// turns some refusals into "not found") is not part of the comparison.
	out := []string{"run", "--workspace", ws, "--no-namespaces"}
	if !ldd {
		out = append(out, "--no-system")
	}
	if bestEffort {
		out = append(out, "--best-effort")
	} else {
		out = append(out, "--strict")
	}
	for _, p := range paths {
		if ignoreMissing {
			if _, err := os.Stat(p[1]); err != nil {
				continue
			}
		}
		out = append(out, "--"+p[0], p[1])
	}
	for _, p := range ports {
		out = append(out, "--"+p[0], p[1])
	}
	for _, e := range env {
		out = append(out, "--env", e)
	}
	if netHost {
		out = append(out, "--net", "host")
	}
	if haveCmd {
		out = append(append(out, "--"), cmd...)
	}
	return out, nil
}

// landrunModeRank orders the shim's path flags by what they allow.
var landrunModeRank = map[string]int{"ro": 1, "rox": 2, "rw": 3}

// landrunUnion gives every path flag the largest mode of the flags on
// itself and its ancestors (symlinks resolved). Landlock, and so landrun,
// adds up the rights of every rule above a file (--rox /usr --ro /lib
// leaves /usr/lib executable: test.sh's "Execute from read-only paths
// regression test"); in landjail a nested root's own mode may win, so the
// shim states the sum explicitly. It only compares strings.
func landrunUnion(paths [][2]string) [][2]string {
	real := make([]string, len(paths))
	for i, p := range paths {
		real[i] = p[1]
		if r, err := filepath.EvalSymlinks(p[1]); err == nil {
			real[i] = r
		}
	}
	out := make([][2]string, len(paths))
	for i, p := range paths {
		out[i] = p
		for j, q := range paths {
			if landrunModeRank[q[0]] > landrunModeRank[out[i][0]] && landrunCovered(real[i], []string{real[j]}) {
				out[i][0] = q[0]
			}
		}
	}
	return out
}

// landrunCovered reports whether bin (symlinks resolved) lies in one of
// dirs (symlinks resolved). It only compares strings.
func landrunCovered(bin string, dirs []string) bool {
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if d == "/" || bin == d || strings.HasPrefix(bin, d+"/") {
			return true
		}
	}
	return false
}

func TestLandrunShim(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"--best-effort", "--log-level", "debug", "--ro", "/a,/b", "--rwx", "/c", "--", "cat", "x"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--best-effort", "--ro", "/a", "--ro", "/b", "--rw", "/c", "--", "cat", "x"}},
		{[]string{"--rox", "/usr", "ls", "-l"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--strict", "--rox", "/usr", "--", "ls", "-l"}},
		{[]string{"--ldd", "--connect-tcp", "80,443", "--unrestricted-network", "--unix", "/s", "--env=A=b", "--", "x"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--strict", "--connect-tcp", "80", "--connect-tcp", "443", "--env", "A=b", "--net", "host", "--", "x"}},
		{[]string{"--ignore-missing", "--ro", "/nonexistent/landrun-shim,/usr", "--unrestricted-filesystem"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--strict", "--rw", "/usr", "--rw", "/"}},
		{[]string{"--rox", "/usr", "--ro", "/lib,/tmp", "--rw", "/tmp/x", "--", "x"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--strict", "--rox", "/usr", "--rox", "/lib", "--ro", "/tmp", "--rw", "/tmp/x", "--", "x"}},
		{[]string{"--add-exec", "--", "/usr/bin/env"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--strict", "--rox", "/usr/bin/env", "--", "/usr/bin/env"}},
		{[]string{"--add-exec", "--rox", "/usr", "--", "/usr/bin/env"},
			[]string{"run", "--workspace", "/ws", "--no-namespaces", "--no-system", "--strict", "--rox", "/usr", "--", "/usr/bin/env"}},
	} {
		got, err := landrunShim(tc.in, "/ws")
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
	_, err := landrunShim([]string{"--frobnicate", "--", "true"}, "/ws")
	assert.ErrorIs(t, err, errLandrunFlag)
}

// landrunFixture builds test.sh's test_env under dir (plus the files it
// creates later and extra) and returns the placeholder values.
func landrunFixture(t *testing.T, dir string, extra []string, vars map[string]string) {
	t.Helper()
	te := filepath.Join(dir, "test_env")
	v := map[string]string{
		"RO_DIR": "ro", "RO_DIR_NESTED_RO": "ro/ro_nested_ro_1", "RO_DIR_NESTED_RW": "ro/ro_nested_rw_1", "RO_DIR_NESTED_EXEC": "ro/ro_nested_exec",
		"RW_DIR": "rw", "RW_DIR_NESTED_RO": "rw/rw_nested_ro_1", "RW_DIR_NESTED_RW": "rw/rw_nested_rw_1", "RW_DIR_NESTED_EXEC": "rw/rw_nested_exec",
		"EXEC_DIR": "exec", "NESTED_DIR": "nested/path/deep",
	}
	for k, rel := range v {
		vars[k] = filepath.Join(te, rel)
		require.NoError(t, os.MkdirAll(vars[k], 0o755))
	}
	const script = "#!/bin/bash\necho 'executable content'\n"
	const rwScript = "#!/bin/bash\necho 'this script is in a read-write directory'\n"
	for _, f := range []struct {
		dir, name, body string
		mode            os.FileMode
	}{
		{"RO_DIR", "test.txt", "readonly content\n", 0o644},
		{"RW_DIR", "test.txt", "readwrite content\n", 0o644},
		{"NESTED_DIR", "test.txt", "nested content\n", 0o644},
		{"EXEC_DIR", "test.sh", script, 0o755},
		{"EXEC_DIR", "test2.sh", script, 0o755},
		{"RO_DIR_NESTED_RO", "test.txt", "readonly content\n", 0o644},
		{"RW_DIR_NESTED_RO", "test.txt", "readonly content\n", 0o644},
		{"RO_DIR_NESTED_RW", "test.txt", "readwrite content\n", 0o644},
		{"RW_DIR_NESTED_RW", "test.txt", "readwrite content\n", 0o644},
		{"RO_DIR_NESTED_EXEC", "test.sh", script, 0o755},
		{"RW_DIR_NESTED_EXEC", "test.sh", script, 0o755},
		{"RO_DIR_NESTED_RO", "test.sh", script, 0o755},
		{"RW_DIR_NESTED_RO", "test.sh", script, 0o755},
		{"RO_DIR_NESTED_RW", "test.sh", script, 0o755},
		{"RW_DIR_NESTED_RW", "test.sh", script, 0o755},
		{"RW_DIR", "rw_script.sh", rwScript, 0o755},
		{"RW_DIR", "rwx_file.sh", rwScript, 0o755}, // created mid-script
	} {
		require.NoError(t, os.WriteFile(filepath.Join(vars[f.dir], f.name), []byte(f.body), f.mode))
	}
	for _, f := range extra {
		require.NoError(t, os.WriteFile(landrunExpand(f, vars), nil, 0o644))
	}
}

func landrunExpand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

// landrunFreePort returns a TCP port that was free a moment ago.
func landrunFreePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// TestLandrunOracle runs landrun's test.sh cases (testdata/oracles/landrun)
// through landrunShim and the landjail binary and checks landjail's exit
// status against the recorded one, and that a divergence from landrun's
// outcome is explained exactly where there is one. With
// LANDRUN_ORACLE_RECORD=1 it logs the statuses instead of checking them;
// LANDRUN_ORACLE_BIN=PATH runs that landjail binary instead of building one.
func TestLandrunOracle(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 4)
	var file landrunFile
	md, err := toml.DecodeFile(landrunCases, &file)
	require.NoError(t, err)
	require.Empty(t, md.Undecoded(), "unknown keys in %s", landrunCases)
	require.Len(t, file.Cases, 68, "test.sh has 68 run_test calls")
	for _, tool := range []string{"bash", "curl", "python3", "whoami", "id", "true", "ls"} {
		if _, err := osexec.LookPath(tool); err != nil {
			t.Skipf("landrun's test.sh needs %s: %v", tool, err)
		}
	}
	record := os.Getenv("LANDRUN_ORACLE_RECORD") == "1"
	bin := os.Getenv("LANDRUN_ORACLE_BIN") // a prebuilt landjail, e.g. a release
	if bin == "" {
		bin = buildCLI(t, ".", "CGO_ENABLED=0")
	}
	abi := landlock.ABI()

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }))
	defer srv.Close()
	vars := map[string]string{
		"HTTP_URL":        srv.URL + "/",
		"HTTP_PORT":       strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port),
		"BIND_PORT":       landrunFreePort(t),
		"BIND_PORT_OTHER": landrunFreePort(t),
		"PYTHON":          "/usr/bin/python3",
	}
	for name, tool := range map[string]string{"TRUE_BIN": "true", "LS_BIN": "ls", "ID_BIN": "id"} {
		p, err := osexec.LookPath(tool)
		require.NoError(t, err)
		vars[name] = p
	}
	tmpdir := t.TempDir() // landjail's per-workspace TMPDIRs land here

	var holds, sameButOther, diverges, skipped int
	for i := range file.Cases {
		c := &file.Cases[i]
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			ws := filepath.Join(dir, "cwd")
			require.NoError(t, os.Mkdir(ws, 0o755))
			cv := map[string]string{}
			for k, v := range vars {
				cv[k] = v
			}
			landrunFixture(t, dir, c.Files, cv)
			args := make([]string, len(c.Args))
			for j, a := range c.Args {
				args[j] = landrunExpand(a, cv)
			}
			ljArgs, err := landrunShim(args, ws)
			require.NoError(t, err)
			if c.Listen {
				l, err := net.Listen("tcp4", "127.0.0.1:"+cv["BIND_PORT"])
				require.NoError(t, err)
				defer l.Close()
				go func() {
					if conn, err := l.Accept(); err == nil {
						conn.Close()
					}
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := osexec.CommandContext(ctx, bin, ljArgs...)
			cmd.Dir = ws
			cmd.Env = append(append(append(os.Environ(), "TMPDIR="+tmpdir), file.Env...), c.Env...)
			out, err := cmd.CombinedOutput()
			code := 0
			if err != nil {
				var ee *osexec.ExitError
				require.ErrorAs(t, err, &ee, "%s", out)
				code = ee.ExitCode()
				if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
					code = 128 + int(st.Signal())
				}
			}
			if c.Internet != "" {
				t.Logf("internet replaced: %s", landrunExpand(c.Internet, cv))
			}
			t.Logf("landrun %q\nlandjail %q\nexit %d: %s", args, ljArgs, code, out)
			if record {
				t.Logf("RECORD %q landjail = %d", c.Name, code)
				return
			}
			require.NotNil(t, c.Landjail, "landjail's outcome not recorded")
			assert.Equal(t, *c.Landjail, code, "landjail's exit status changed: %s", out)
			if !c.applies(abi) {
				skipped++
				return
			}
			same := (code == 0) == (c.Landrun == 0)
			switch {
			case !same:
				diverges++
				assert.NotEmpty(t, c.Divergence, "landjail's outcome differs from landrun's (%d, want %d): explain it in divergence", code, c.Landrun)
			case c.Note != "":
				sameButOther++
				assert.Empty(t, c.Divergence)
			default:
				holds++
				assert.Empty(t, c.Divergence, "landjail's outcome equals landrun's: no divergence to explain")
			}
		})
	}
	t.Logf("landrun test.sh on Landlock ABI %d: %d cases apply (%d for other kernels); %d hold, %d hold with a different failure, %d diverge",
		abi, len(file.Cases)-skipped, skipped, holds, sameButOther, diverges)
}
