package landlock

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kerneltest"
)

// fakeTree is a file system for the carve planner, in the tree-spec
// language: "d/" a directory, "f" a file, "a => b" a symlink. Parents
// are implied.
func fakeTree(spec ...string) listFunc {
	kids := map[string]map[string]entryKind{}
	add := func(p string, k entryKind) {
		for {
			dir := filepath.Dir(p)
			if kids[dir] == nil {
				kids[dir] = map[string]entryKind{}
			}
			if _, ok := kids[dir][filepath.Base(p)]; !ok || k != kindDir {
				kids[dir][filepath.Base(p)] = k
			}
			if dir == "/" {
				return
			}
			p, k = dir, kindDir
		}
	}
	for _, s := range spec {
		switch {
		case strings.Contains(s, " => "):
			add(strings.SplitN(s, " => ", 2)[0], kindSymlink)
		case strings.HasSuffix(s, "/"):
			p := strings.TrimSuffix(s, "/")
			add(p, kindDir)
			if kids[p] == nil {
				kids[p] = map[string]entryKind{}
			}
		default:
			add(s, kindFile)
		}
	}
	return func(dir string) ([]dirEntry, error) {
		m, ok := kids[dir]
		if !ok {
			return nil, &fs.PathError{Op: "readdir", Path: dir, Err: fs.ErrNotExist}
		}
		var out []dirEntry
		for n, k := range m {
			out = append(out, dirEntry{n, k})
		}
		return out, nil
	}
}

var (
	rw = RightsAll
	ro = RightsReadExec
	rd = chainRights
)

var fileRW = RightsAll & fileRights

func TestCarveRoot(t *testing.T) {
	ws := Rule{Path: "/ws", Access: rw, Source: "workspace"}
	deny := func(p string) carve { return carve{path: p, source: SourceDenyPattern, exists: true} }
	ronly := func(p string) carve { return carve{path: p, access: ro, source: SourceReadOnly, exists: true} }
	tests := []struct {
		name   string
		tree   []string
		carves []carve
		want   map[string]golandlock.AccessFSSet // path -> rights; every rule
		chains int
	}{{
		name: "nothing carved: the root whole",
		tree: []string{"/ws/a", "/ws/.env"},
		want: map[string]golandlock.AccessFSSet{"/ws": rw}, chains: 0,
	}, {
		name:   "deny a file in the root",
		tree:   []string{"/ws/.env", "/ws/a.txt", "/ws/src/", "/ws/src/main.go", "/ws/link => .env"},
		carves: []carve{deny("/ws/.env")},
		want:   map[string]golandlock.AccessFSSet{"/ws": rd, "/ws/a.txt": fileRW, "/ws/src": rw},
		chains: 1,
	}, {
		name:   "deny a file two levels down; siblings at each level",
		tree:   []string{"/ws/certs/x.pem", "/ws/certs/ca.txt", "/ws/certs/sub/", "/ws/go.mod", "/ws/pkg/"},
		carves: []carve{deny("/ws/certs/x.pem")},
		want: map[string]golandlock.AccessFSSet{
			"/ws": rd, "/ws/go.mod": fileRW, "/ws/pkg": rw,
			"/ws/certs": rd, "/ws/certs/ca.txt": fileRW, "/ws/certs/sub": rw,
		},
		chains: 2,
	}, {
		name:   "read-only dir and file; read-only file keeps file rights only",
		tree:   []string{"/ws/.git/hooks/pre-commit.sample", "/ws/.git/config", "/ws/.git/objects/", "/ws/.git/HEAD"},
		carves: []carve{ronly("/ws/.git/hooks"), ronly("/ws/.git/config")},
		want: map[string]golandlock.AccessFSSet{
			"/ws": rd, "/ws/.git": rd, "/ws/.git/hooks": ro, "/ws/.git/config": ro & fileRights,
			"/ws/.git/objects": rw, "/ws/.git/HEAD": fileRW,
		},
		chains: 2,
	}, {
		name:   "deny inside a read-only dir: the dir becomes a chain with its own (narrower) rights",
		tree:   []string{"/ws/.claude/.credentials.json", "/ws/.claude/settings.json", "/ws/.claude/agents/"},
		carves: []carve{ronly("/ws/.claude"), deny("/ws/.claude/.credentials.json")},
		want: map[string]golandlock.AccessFSSet{
			"/ws": rd, "/ws/.claude": rd, "/ws/.claude/settings.json": ro & fileRights, "/ws/.claude/agents": ro,
		},
		chains: 2,
	}, {
		name:   "carves below a denied dir need nothing",
		tree:   []string{"/ws/secrets/a.pem", "/ws/secrets/sub/b.pem", "/ws/b"},
		carves: []carve{deny("/ws/secrets"), deny("/ws/secrets/sub/b.pem"), ronly("/ws/secrets/a.pem")},
		want:   map[string]golandlock.AccessFSSet{"/ws": rd, "/ws/b": fileRW},
		chains: 1,
	}, {
		name:   "a missing protected name freezes its existing parent only",
		tree:   []string{"/ws/a"},
		carves: []carve{{path: "/ws/.mcp.json", access: ro, source: SourceAgentConfig}, {path: "/ws/.git/hooks", access: ro, source: SourceAgentConfig}},
		want:   map[string]golandlock.AccessFSSet{"/ws": rd, "/ws/a": fileRW},
		chains: 1, // /ws; the missing /ws/.git is not an entry
	}, {
		name:   "carves outside the root or not narrower are ignored",
		tree:   []string{"/ws/a"},
		carves: []carve{deny("/other/.env"), {path: "/ws/a", access: rw, source: "x"}},
		want:   map[string]golandlock.AccessFSSet{"/ws": rw},
	}, {
		// Red team round 11, R11a-4: a root inside a denied directory
		// (--ro ~/.aws under .aws/) is carved whole: no rule at all.
		name:   "a carve of the root itself drops it",
		tree:   []string{"/ws/a"},
		carves: []carve{deny("/ws"), {path: "/ws/a", access: rd, source: "x"}},
		want:   map[string]golandlock.AccessFSSet{},
	}, {
		name:   "a read-only carve of the root itself narrows it",
		tree:   []string{"/ws/a"},
		carves: []carve{{path: "/ws", access: rd, source: "x"}},
		want:   map[string]golandlock.AccessFSSet{"/ws": rd},
	}, {
		name:   "symlinks never get a rule, even to a sibling",
		tree:   []string{"/ws/.env", "/ws/d/", "/ws/l => d", "/ws/m => /etc"},
		carves: []carve{deny("/ws/.env")},
		want:   map[string]golandlock.AccessFSSet{"/ws": rd, "/ws/d": rw},
		chains: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, chains, err := carveRoot(ws, tt.carves, fakeTree(tt.tree...), map[string]bool{})
			require.NoError(t, err)
			got := map[string]golandlock.AccessFSSet{}
			for _, r := range rules {
				_, dup := got[r.Path]
				assert.False(t, dup, "one rule per path: %s", r.Path)
				got[r.Path] = r.Access
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.chains, chains)
		})
	}
}

// TestChainRightsReachNothing: every right a chain directory holds is
// inherited by the carved-out path, so it must be one a denied path may
// have: no file right, no right that creates, removes or moves entries.
func TestChainRightsReachNothing(t *testing.T) {
	assert.Zero(t, chainRights&fileRights)
	forbidden := golandlock.AccessFSSet(ll.AccessFSRemoveFile | ll.AccessFSRemoveDir | ll.AccessFSRefer |
		ll.AccessFSMakeReg | ll.AccessFSMakeDir | ll.AccessFSMakeSym | ll.AccessFSMakeSock |
		ll.AccessFSMakeFifo | ll.AccessFSMakeChar | ll.AccessFSMakeBlock)
	assert.Zero(t, chainRights&forbidden, "see the chainRights doc for each")
}

func TestCarveAllMergesAndNestedRoots(t *testing.T) {
	roots := []Rule{
		{Path: "/ws", Access: rw, Source: "workspace"},
		{Path: "/ws/vendor", Access: RightsRead, Source: "ro"},
		{Path: "/ro", Access: RightsRead, Source: "ro"},
		{Path: "/ro/w", Access: rw, Source: "rw"}, // wider inside narrower: not a carve
	}
	carves := nestedCarves(roots)
	require.Equal(t, []carve{{path: "/ws/vendor", access: RightsRead, source: SourceNestedRoot, exists: true}}, carves)
	carves = append(carves, carve{path: "/ws/vendor/.env", source: SourceDenyPattern, exists: true})
	extra := Rule{Path: "/usr", Access: ro, Source: "system"}
	rules, chains, _, err := carveAll(append(roots, extra), len(roots), carves,
		fakeTree("/ws/vendor/.env", "/ws/vendor/lib.go", "/ws/main.go", "/ro/x", "/ro/w/y"))
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range rules {
		got[r.Path] = r.Source + " " + r.Access.String()
	}
	assert.Equal(t, map[string]string{
		"/ws":               "chain " + rd.String(),
		"/ws/main.go":       "workspace " + fileRW.String(),
		"/ws/vendor":        "chain " + rd.String(),
		"/ws/vendor/lib.go": "nested-root " + (RightsRead & fileRights).String(),
		"/ro":               "ro " + RightsRead.String(),
		"/ro/w":             "rw " + rw.String(),
		"/usr":              "system " + ro.String(),
	}, got, "the vendor root is compiled once although two roots contain it")
	assert.Equal(t, 3, chains, "/ws and /ws/vendor from the workspace, /ws/vendor from the vendor root")
}

func TestPlanCarveReport(t *testing.T) {
	req := baseRequest()
	req.carves = []carve{
		{path: "/ws/.env", source: SourceDenyPattern, exists: true},
		{path: "/ws/.mcp.json", access: ro, source: SourceAgentConfig},
	}
	c, err := plan(req, 7, planFS, fakeTree("/ws/.env", "/ws/a", "/ws/b/"))
	require.NoError(t, err)
	rep := c.report
	assert.Equal(t, []CarveOut{
		{Path: "/ws/.env", Mode: CarveDeny, Source: SourceDenyPattern, Exists: true},
		{Path: "/ws/.mcp.json", Mode: CarveReadOnly, Source: SourceAgentConfig},
	}, rep.CarveOuts)
	assert.Equal(t, 3, rep.CarveRules, "/ws chain, /ws/a, /ws/b")
	assert.Equal(t, 1, rep.ChainDirs)
	assert.Contains(t, strings.Join(rep.Notes, "\n"), "chain directories")
	assert.Contains(t, rep.String(), "carve-out: deny /ws/.env (deny-pattern)")
	assert.Contains(t, rep.String(), "carve-out: read-only /ws/.mcp.json (agent-config) (absent: cannot be created)")
	assert.True(t, (&Ruleset{report: rep, fit: c.fit}).Allows("/ws/a", golandlock.AccessFSSet(ll.AccessFSWriteFile)))
	assert.False(t, (&Ruleset{report: rep, fit: c.fit}).Allows("/ws/.env", golandlock.AccessFSSet(ll.AccessFSReadFile)))
}

// TestChainDirCreateIsUseless measures why chain directories do not get
// make_reg: in a directory with make_reg but no write_file, open(O_CREAT)
// creates the file and then fails with EACCES, leaving an empty file the
// thread can neither write nor read (Linux 6.18, ABI 7). If a kernel
// stops doing that, this test fails and chainRights can be revisited.
func TestChainDirCreateIsUseless(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 1)
	if !kerneltest.RunInSubprocess(t) {
		return
	}
	dir := t.TempDir()
	attr := ll.RulesetAttr{HandledAccessFS: uint64(golandlock.V1.HandledAccessFS)}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(dfd)
	require.NoError(t, ll.LandlockAddPathBeneathRule(fd, &ll.PathBeneathAttr{ParentFd: dfd, AllowedAccess: ll.AccessFSReadDir | ll.AccessFSMakeReg}, 0))
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the confined thread dies with the goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- err
			return
		}
		if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
			done <- err
			return
		}
		done <- os.WriteFile(filepath.Join(dir, "new"), []byte("x"), 0o644)
	}()
	assert.ErrorIs(t, <-done, unix.EACCES)
	fi, err := os.Lstat(filepath.Join(dir, "new"))
	require.NoError(t, err, "the file was created before the open was refused")
	assert.Zero(t, fi.Size())
}
