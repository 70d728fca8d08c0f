package main

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// workflow is one everyday job run under `landjail run` with the system
// preset and nothing beyond --workspace (plus --rox for a toolchain that
// lives outside /usr, as the README does for GOROOT).
type workflow struct {
	name string
	// need lists the programs the step runs; a missing one skips it
	// through kerneltest.Missing (a failure in CI, which installs them).
	need []string
	// setup writes the project into the workspace (unconfined).
	setup func(t *testing.T, ws string)
	// flags go between "run" and "--" (after --workspace, --home, --explain).
	flags []string
	// script runs with sh -c in the workspace.
	script string
	// want is a substring of the output when the step works.
	want string
	// gap, when set, is a denial the current system preset makes: with
	// Landlock the step is expected to FAIL and --explain to name it. It
	// documents today's behaviour, not the goal.
	gap string
	// namespacesClose: the namespace layer closes the gap (a private
	// /dev/shm); where the layer is in force the step must succeed.
	namespacesClose bool
}

// writeTree writes files (name => content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
}

// noLandlock reports whether landjail runs without Landlock here: the
// kernel lacks it, or a seccomp filter refuses it, whether this test
// binary's TestMain installed that filter (LANDJAIL_EMULATE=landlock=...
// or all=...) or the process inherited it unannounced (a container's
// profile; internal/kerneltest/outer). landjail then falls back to
// checking the paths in the command line, and the denials the gaps below
// record do not happen. Asking the emulation alone (kerneltest.Blocked)
// missed the inherited filter: under outer -spec all=EPERM the pool step
// succeeded and the test failed "the gap /dev/shm is closed".
func noLandlock() bool { return landlock.ABI() == 0 }

// TestWorkflows runs real tools not written by us under `landjail run`
// with no policy flags: the system preset must let them work. Every run
// has --explain, so a failing step prints what was refused and the
// flag that would allow it.
func TestWorkflows(t *testing.T) {
	// Parallel: each step has its own workspace and HOME; the go step is
	// compile-bound, the others wait on python, npm and git.
	t.Parallel()
	if testing.Short() {
		// .ci/run's race pass: only other programs run here, nothing
		// in-process for the race detector to watch.
		t.Skip("runs real toolchains (a minute of compiling); skipped with -short")
	}
	bin := landjailBin(t)
	goroot := "/nonexistent-goroot" // the go step skips without go
	if out, err := osexec.Command("go", "env", "GOROOT").Output(); err == nil {
		goroot = strings.TrimSpace(string(out))
	}
	sysPath := "/usr/local/bin:/usr/bin:/bin"
	// rustup's toolchain directory, when there is one: cargo under
	// ~/.cargo/bin is a rustup proxy that needs all of ~/.rustup.
	rustToolchain := ""
	if out, err := osexec.Command("rustup", "which", "cargo").Output(); err == nil {
		rustToolchain = filepath.Dir(filepath.Dir(strings.TrimSpace(string(out))))
	}

	cases := []workflow{{
		name: "go build and go test",
		need: []string{filepath.Join(goroot, "bin", "go")},
		setup: func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{
				"go.mod":        "module example.com/tiny\n\ngo 1.22\n",
				"tiny.go":       "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
				"tiny_test.go":  "package tiny\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"Add\")\n\t}\n}\n",
				"cmd/main.go":   "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"tiny-ran\") }\n",
				"cmd/README.md": "",
			})
		},
		flags:  []string{"--rox", goroot, "--env", "PATH=" + filepath.Join(goroot, "bin") + ":" + sysPath},
		script: `printf GOCACHE= && go env GOCACHE && go build -o bin/tiny ./cmd && ./bin/tiny && go test ./...`,
		want:   "ok  \texample.com/tiny",
	}, {
		name: "make",
		need: []string{"make"},
		setup: func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{
				"Makefile": "out.txt: in.txt\n\tcat in.txt > out.txt\n\techo made-it\n",
				"in.txt":   "x\n",
			})
		},
		script: "make && cat out.txt",
		want:   "made-it",
	}, {
		name: "git init add commit",
		need: []string{"git"},
		setup: func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"hello.txt": "hi\n"})
		},
		flags: []string{"--env", "GIT_AUTHOR_NAME=T", "--env", "GIT_AUTHOR_EMAIL=t@example.com",
			"--env", "GIT_COMMITTER_NAME=T", "--env", "GIT_COMMITTER_EMAIL=t@example.com"},
		script: "git init -q . && git add hello.txt && git commit -qm first && git log --format=%s",
		want:   "first",
	}, {
		name: "python venv and pip install from a local wheel",
		need: []string{"/usr/bin/python3"},
		setup: func(t *testing.T, ws string) {
			// The wheel is built unconfined, outside the workspace's
			// confinement, from a tiny local package: no network.
			src := filepath.Join(ws, "pkgsrc")
			writeTree(t, src, map[string]string{
				"tinypkg/__init__.py": "def hello():\n    return 'tinypkg-ok'\n",
				"pyproject.toml":      "[project]\nname = \"tinypkg\"\nversion = \"0.1\"\n[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
			})
			out, err := osexec.Command("/usr/bin/python3", "-m", "pip", "wheel", "--no-index", "--no-build-isolation",
				"--no-deps", "-w", filepath.Join(ws, "wheels"), src).CombinedOutput()
			if err != nil {
				kerneltest.Missing(t, "building a local wheel needs pip and setuptools for /usr/bin/python3: %v: %s", err, out)
			}
		},
		script: "/usr/bin/python3 -m venv .venv && .venv/bin/pip install -q --no-index --find-links wheels tinypkg && .venv/bin/python -c 'import tinypkg; print(tinypkg.hello())'",
		want:   "tinypkg-ok",
		// ensurepip runs pip, whose vendored distro module reads
		// /etc/debian_version (platform detection): the system preset
		// grants it (and /etc/lsb-release, /etc/pip.conf) since this test
		// found pip exiting 2 there; listing /etc stays denied, which
		// distro tolerates.
	}, {
		name: "python multiprocessing Pool(2)",
		need: []string{"/usr/bin/python3"},
		// A Pool makes a POSIX semaphore: sem_open creates a file in
		// /dev/shm. The namespace layer gives a private /dev/shm, so the
		// step works where it is in force; with --no-namespaces (the
		// landlock-only level) the preset has no write access there.
		script:          "/usr/bin/python3 -c 'import multiprocessing as m; p = m.Pool(2); print(\"pool\", sum(p.map(abs, [-1, -2])))'",
		want:            "pool 3",
		gap:             "/dev/shm",
		namespacesClose: true,
	}, {
		name:   "python multiprocessing Pool(2), --no-namespaces",
		need:   []string{"/usr/bin/python3"},
		flags:  []string{"--no-namespaces"},
		script: "/usr/bin/python3 -c 'import multiprocessing as m; p = m.Pool(2); print(\"pool\", sum(p.map(abs, [-1, -2])))'",
		want:   "pool 3",
		gap:    "/dev/shm",
	}, {
		name: "npm ci with a local file: dependency",
		need: []string{"npm", "node"},
		setup: func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{
				"lib/package.json": `{"name":"lib","version":"1.0.0","main":"index.js"}`,
				"lib/index.js":     "module.exports = 'npm-lib-ok'\n",
				"package.json":     `{"name":"app","version":"1.0.0","private":true,"dependencies":{"lib":"file:./lib"}}`,
				"package-lock.json": `{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{` +
					`"":{"name":"app","version":"1.0.0","dependencies":{"lib":"file:./lib"}},` +
					`"lib":{"version":"1.0.0"},"node_modules/lib":{"resolved":"lib","link":true}}}`,
			})
		},
		script: `npm ci --no-audit --no-fund --offline && node -e 'console.log(require("lib"))'`,
		want:   "npm-lib-ok",
	}}
	if rustToolchain != "" {
		cases = append(cases, workflow{
			name: "cargo build --offline",
			need: []string{filepath.Join(rustToolchain, "bin", "cargo")},
			setup: func(t *testing.T, ws string) {
				writeTree(t, ws, map[string]string{
					"Cargo.toml":  "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
					"src/main.rs": "fn main() { println!(\"cargo-ok\"); }\n",
				})
			},
			flags:  []string{"--rox", rustToolchain, "--env", "PATH=" + filepath.Join(rustToolchain, "bin") + ":" + sysPath},
			script: "cargo build --offline -q && ./target/debug/tiny",
			want:   "cargo-ok",
		})
	} else {
		t.Log("cargo build --offline: skipped, no rustup toolchain (rustup which cargo)")
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A gap step asserts on --explain's audit records, and a
			// landjail that enabled audit turns it off when it ends,
			// whoever else is collecting (internal/denials: processes
			// do not coordinate): gap steps run alone, before the
			// parallel ones are released.
			if tc.gap == "" {
				t.Parallel()
			}
			for _, p := range tc.need {
				if _, err := osexec.LookPath(p); err != nil {
					kerneltest.Missing(t, "%s is not installed (.ci/run installs it)", p)
				}
			}
			ws := wsDir(t)
			home := wsDir(t) // outside the workspace, fresh per step
			if tc.setup != nil {
				tc.setup(t, ws)
			}
			args := append([]string{"run", "--workspace", ws, "--home", home, "--explain"}, tc.flags...)
			args = append(args, "--", "sh", "-c", tc.script)
			code, out := runBin(t, bin, nil, args...)
			// Per mode: with Landlock a gap step must fail with its
			// denial; without (LANDJAIL_EMULATE=landlock=... or all=...)
			// only the path check runs, nothing denies /dev/shm or
			// /etc/debian_version, and every step must succeed.
			if tc.gap != "" && !noLandlock() && !(tc.namespacesClose && nsview.Probe() == nil) {
				// Known gap in the system preset (not ours to change):
				// assert today's behaviour, a failure whose --explain
				// names the denied path.
				t.Logf("known preset gap, expected to fail (exit %d); --explain:\n%s", code, out)
				assert.NotZero(t, code, "the gap %s is closed: turn this step into a plain success check\n%s", tc.gap, out)
				assert.Contains(t, out, "distinct refusal(s)", "no --explain report")
				assert.Contains(t, out, tc.gap, "the denial changed")
				return
			}
			if !assert.Zero(t, code, "%s failed; landjail --explain output:\n%s", tc.name, out) {
				return
			}
			assert.Contains(t, out, tc.want, out)
			if strings.HasPrefix(tc.name, "go build") {
				i := strings.Index(out, "GOCACHE=")
				require.GreaterOrEqual(t, i, 0, out)
				gocache := strings.TrimSpace(strings.SplitN(out[i+len("GOCACHE="):], "\n", 2)[0])
				assert.True(t, strings.HasPrefix(gocache, home+"/"), "GOCACHE %q is not in the private HOME %q", gocache, home)
				assert.False(t, strings.HasPrefix(gocache, ws), "GOCACHE %q is in the workspace", gocache)
			}
		})
	}
}
