package sweep_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/sweep"
	"github.com/landjail/landjail/internal/threadcaps"
	"github.com/landjail/landjail/jail"
)

// TestSweepReadsAsCommand (red team round 31, R31c-5): what a
// repository the command made names (core.fsmonitor, include.path) is
// read by the sweep only where the command could read it itself. A
// file outside the policy that runs Python decided, read by landjail,
// whether the command's yaml.py was quarantined (a one-bit oracle on
// files it is denied); a FIFO named by include.path was opened, and
// its blocked writer released. Now: no quarantine for the outside
// file, the writer stays blocked; control: the same reference to a
// file inside the workspace quarantines; and a Snapshot of Take (no
// command given) still reads the outside file (the oracle the test
// would see).
func TestSweepReadsAsCommand(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	write := func(p, c string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(c), 0o644))
	}
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	write(secret, "PRE_COMMIT\n")
	fifo := filepath.Join(outside, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o600))
	released := make(chan struct{})
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		close(released)
	}()
	t.Cleanup(func() { // release the writer at the end
		if r, err := os.OpenFile(fifo, os.O_RDONLY|unix.O_NONBLOCK, 0); err == nil {
			<-released
			r.Close()
		}
	})

	for _, c := range []struct {
		name      string
		asCommand bool
		outsideQ  bool // sub/yaml.py (naming the outside file) quarantined
	}{
		{"as-command", true, false},
		{"landjail-own", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			write(filepath.Join(root, "hooks/pc"), "#!/bin/sh\npython3 -m pre_commit\n")
			ws, err := jail.New(root, jail.WithProtectedAgentConfig())
			require.NoError(t, err)
			defer ws.Close()
			var snap *sweep.Snapshot
			if c.asCommand {
				snap, err = sweep.TakeAs(ws, 0, nil)
			} else {
				snap, err = sweep.Take(ws, 0)
			}
			require.NoError(t, err)
			defer snap.Close()
			// What the command does: two repositories, one naming the
			// outside file (and the FIFO), one a file of the workspace.
			write(filepath.Join(root, "sub/.git/HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(root, "sub/.git/config"), "[core]\n\tfsmonitor = "+secret+"\n[include]\n\tpath = "+fifo+"\n")
			write(filepath.Join(root, "sub/yaml.py"), "print(1)\n")
			write(filepath.Join(root, "sub2/.git/HEAD"), "ref: refs/heads/main\n")
			write(filepath.Join(root, "sub2/.git/config"), "[core]\n\tfsmonitor = "+filepath.Join(root, "hooks/pc")+"\n")
			write(filepath.Join(root, "sub2/yaml.py"), "print(1)\n")
			q, err := snap.Sweep()
			require.NoError(t, err)
			got := map[string]bool{}
			for _, e := range q {
				got[e.Path] = true
			}
			assert.Equal(t, c.outsideQ, got["sub/yaml.py"], "sub/yaml.py quarantined")
			assert.True(t, got["sub2/yaml.py"], "control: a reference inside the workspace is read: %v", got)
			select {
			case <-released:
				t.Fatal("the FIFO's writer was released: the sweep opened it")
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

// TestSweepActsAsCommand (red team round 31, R31a-7, R31a-8): when a
// directory holding a protected name the command made has been
// exchanged with another user's directory by the time the sweep acts,
// the sweep (TakeAs: the command's permission checks) cannot rename,
// chmod or remove that user's file of the same name; with landjail's
// own (Take, the control) it renamed it and made it 0666.
func TestSweepActsAsCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's directory)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, asCommand := range []bool{true, false} {
		root := t.TempDir()
		mine, alice := filepath.Join(root, "fx/mine"), filepath.Join(root, "fx/alice")
		require.NoError(t, os.MkdirAll(mine, 0o755))
		require.NoError(t, os.MkdirAll(alice, 0o755))
		secret := filepath.Join(alice, ".envrc")
		require.NoError(t, os.WriteFile(secret, []byte("export TOKEN=s3cr3t\n"), 0o600))
		require.NoError(t, os.Chown(secret, 65534, 65534))
		require.NoError(t, os.Chown(alice, 65534, 65534))
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		var snap *sweep.Snapshot
		if asCommand {
			snap, err = sweep.TakeAs(ws, 0, nil)
		} else {
			snap, err = sweep.Take(ws, 0)
		}
		require.NoError(t, err)
		// The command plants fx/mine/.envrc, then exchanges fx/mine
		// with alice's directory before the sweep acts.
		require.NoError(t, os.WriteFile(filepath.Join(mine, ".envrc"), []byte("evil\n"), 0o777))
		require.NoError(t, unix.Renameat2(unix.AT_FDCWD, mine, unix.AT_FDCWD, alice, unix.RENAME_EXCHANGE))
		snap.Sweep()
		snap.Close()
		ws.Close()
		// Alice's directory is now at fx/mine.
		fi, err := os.Stat(filepath.Join(mine, ".envrc"))
		if asCommand {
			require.NoError(t, err, "alice's file is where it was")
			assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "and keeps its mode")
		} else {
			assert.Error(t, err, "control: landjail's own sweep moved alice's file")
		}
	}
}

// TestSweepLeavesOthersEdits (red team round 31, R31d-7): another
// user's edit of her own .envrc in her 0700 directory, made while the
// command runs, is not the command's doing (it cannot write there): the
// sweep (TakeAs) leaves it; landjail's own (Take, the control) reverted
// it and renamed it away.
func TestSweepLeavesOthersEdits(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's directory)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	for _, asCommand := range []bool{true, false} {
		root := t.TempDir()
		alice := filepath.Join(root, "alice")
		require.NoError(t, os.MkdirAll(alice, 0o700))
		envrc := filepath.Join(alice, ".envrc")
		require.NoError(t, os.WriteFile(envrc, []byte("export A=1\n"), 0o644))
		require.NoError(t, os.Chown(envrc, 65534, 65534))
		require.NoError(t, os.Chown(alice, 65534, 65534))
		ws, err := jail.New(root, jail.WithProtectedAgentConfig())
		require.NoError(t, err)
		var snap *sweep.Snapshot
		if asCommand {
			snap, err = sweep.TakeAs(ws, 0, nil)
		} else {
			snap, err = sweep.Take(ws, 0)
		}
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(envrc, []byte("export A=2 # alice\n"), 0o644)) // alice's own edit
		snap.Sweep()
		snap.Close()
		ws.Close()
		b, _ := os.ReadFile(envrc)
		if asCommand {
			assert.Equal(t, "export A=2 # alice\n", string(b), "her edit kept")
		} else {
			assert.Equal(t, "export A=1\n", string(b), "control: landjail's own sweep reverted it")
		}
	}
}

// TestSweepRestoresOthersFile: a protected file of another user that
// the command could write (0666, in a directory of the command's) and
// changed is restored with its owner and mode by the sweep acting as the
// command, once: the restored file matches the record, and the next
// sweep finds nothing. A chmod by name after the chown (which needs
// CAP_FOWNER the sweep's thread lacks) failed, and landjail-mcp's watch
// quarantined and restored the file millions of times.
func TestSweepRestoresOthersFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's file)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	envrc := filepath.Join(root, "sub/.envrc")
	require.NoError(t, os.MkdirAll(filepath.Dir(envrc), 0o755))
	require.NoError(t, os.WriteFile(envrc, []byte("export A=1\n"), 0o666))
	require.NoError(t, os.Chmod(envrc, 0o666))
	require.NoError(t, os.Chown(envrc, 65534, 65534))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.TakeAs(ws, 0, nil)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.WriteFile(envrc, []byte("export A=evil\n"), 0o666)) // the command
	q, err := snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	assert.True(t, q[0].Restored, "%+v", q[0])
	b, _ := os.ReadFile(envrc)
	assert.Equal(t, "export A=1\n", string(b))
	fi, err := os.Stat(envrc)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())
	assert.EqualValues(t, 65534, fi.Sys().(*syscall.Stat_t).Uid)
	q, err = snap.Sweep()
	require.NoError(t, err)
	assert.Empty(t, q, "nothing left to do")
}

// TestSweepOwnReadOnlyDirectory: a protected name the command planted
// in its own directory, which it then made read-only (chmod 0500), is
// still its doing (it owns the directory and could chmod it back): the
// sweep moves it away. (Found re-reading round 31's change: the check
// by mode bits alone took it for another user's.)
func TestSweepOwnReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (the sweep acting as a capability-less root command)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.TakeAs(ws, 0, nil)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.WriteFile(filepath.Join(sub, ".envrc"), []byte("evil\n"), 0o400))
	require.NoError(t, os.Chmod(sub, 0o500))
	q, _ := snap.Sweep()
	var moved bool
	for _, e := range q {
		moved = moved || e.Path == "sub/.envrc" && e.MovedTo != ""
	}
	assert.True(t, moved, "%+v", q)
	assert.NoFileExists(t, filepath.Join(sub, ".envrc"))
}

// TestSweepRestoreNoInheritedACL: red team round 32, R32b-2. A
// protected file of another user that the command removed is restored
// in a directory the command owns: created there, it inherited the
// default ACL the command had set (user:1001:r-x), and with the group
// bits of its mode 0640 as the mask the command read her content. The
// restored file carries no access ACL. Control: a file made there by
// name inherits the default.
func TestSweepRestoreNoInheritedACL(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's file)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	require.NoError(t, os.Chmod(root, 0o755))
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.Chown(sub, 1001, 1001))
	envrc := filepath.Join(sub, ".envrc")
	require.NoError(t, os.WriteFile(envrc, []byte("export SECRET=alice\n"), 0o640))
	require.NoError(t, os.Chown(envrc, 1000, 1000))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	cred := &syscall.Credential{Uid: 1001, Gid: 1001}
	snap, err := sweep.TakeAs(ws, 0, cred)
	require.NoError(t, err)
	defer snap.Close()
	// The command: user:1001:r-x as the directory's default, then the
	// file removed (its directory is its own).
	def := []byte{2, 0, 0, 0,
		1, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
		2, 0, 5, 0, 0xe9, 0x03, 0, 0, // user:1001:r-x
		4, 0, 5, 0, 0xff, 0xff, 0xff, 0xff,
		0x10, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
	if err := unix.Setxattr(sub, "system.posix_acl_default", def, 0); err != nil {
		t.Skipf("no ACLs here: %v", err)
	}
	require.NoError(t, os.Remove(envrc))
	q, err := snap.Sweep()
	require.NoError(t, err)
	require.Len(t, q, 1)
	require.True(t, q[0].Restored, "%+v", q[0])
	b, err := os.ReadFile(envrc)
	require.NoError(t, err)
	assert.Equal(t, "export SECRET=alice\n", string(b))
	fi, err := os.Stat(envrc)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.EqualValues(t, 1000, fi.Sys().(*syscall.Stat_t).Uid)
	_, err = unix.Getxattr(envrc, "system.posix_acl_access", make([]byte, 256))
	assert.ErrorIs(t, err, unix.ENODATA, "no ACL entry of the command's on her restored file")
	require.NoError(t, os.WriteFile(filepath.Join(sub, "n"), nil, 0o640))
	_, err = unix.Getxattr(filepath.Join(sub, "n"), "system.posix_acl_access", make([]byte, 256))
	assert.NoError(t, err, "control: a file made there by name inherits the default")
}

// TestSweepRestoreNoWindow: red team round 32, R32b-1. The sweep acting
// as the command created the restored file by name, owned by the
// command, and gave it its owner and content after: a thread of the
// command opening the name in between kept a descriptor and read
// another user's 0600 content through it. The restored file now gets
// its name complete. An attacker goroutine with the command's
// credentials opens the name all the while; no descriptor it gets ever
// reads her content. Control: the attacker's opens run (it opens the
// name when it is its own file).
func TestSweepRestoreNoWindow(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's file)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root, err := os.MkdirTemp("", "landjail-restore-") // searchable by uid 1001 (t.TempDir's parent is 0700)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chmod(root, 0o755))
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	require.NoError(t, os.Chown(sub, 1001, 1001))
	envrc := filepath.Join(sub, ".envrc")
	require.NoError(t, os.WriteFile(envrc, []byte("export SECRET=alice\n"), 0o600))
	require.NoError(t, os.Chown(envrc, 1000, 1000))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	cred := &syscall.Credential{Uid: 1001, Gid: 1001}

	var leaked, opened atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		threadcaps.RunAs(cred, func() error {
			buf := make([]byte, 64)
			for {
				select {
				case <-stop:
					return nil
				default:
				}
				fd, err := unix.Open(envrc, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					continue
				}
				opened.Add(1)
				time.Sleep(200 * time.Microsecond) // the content is written meanwhile
				if n, _ := unix.Pread(fd, buf, 0); n > 0 && strings.Contains(string(buf[:n]), "alice") {
					leaked.Add(1)
				}
				unix.Close(fd)
			}
		})
	}()
	for range 40 {
		snap, err := sweep.TakeAs(ws, 0, cred)
		require.NoError(t, err)
		// The command: its own file over hers (it owns the directory).
		require.NoError(t, threadcaps.RunAs(cred, func() error {
			if err := os.WriteFile(filepath.Join(sub, "mine"), []byte("evil\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(filepath.Join(sub, "mine"), envrc)
		}))
		_, err = snap.Sweep()
		require.NoError(t, err)
		snap.Close()
		removeQuarantined(t, sub)
	}
	close(stop)
	<-done
	require.NotZero(t, opened.Load(), "control: the attacker opened the name (its own file)")
	assert.Zero(t, leaked.Load(), "a descriptor the command opened read her content")
}

// removeQuarantined removes the quarantined files in dir.
func removeQuarantined(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".landjail-quarantined-") {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
		}
	}
}

// TestSweepRecordAfterRestore: red team round 32, R32b-7. After putting
// a protected file back, the sweep took its new record by name: a
// command that renamed its own file over the restored one in between
// became the record, and its hook survived the run. The record is now
// made from the restored file's own descriptor, so the next sweep finds
// the command's file and neutralises it: after a final sweep the file
// holds the user's content whatever the attacker goroutine (renaming
// its payload over each new inode at the name) managed. Control: the
// attacker's renames land (its payload is found and moved away).
func TestSweepRecordAfterRestore(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (the sweep acting as a capability-less root command)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	require.NoError(t, os.MkdirAll(sub, 0o755))
	envrc := filepath.Join(sub, ".envrc")
	require.NoError(t, os.WriteFile(envrc, []byte("users-own\n"), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()

	snap, err := sweep.TakeAs(ws, 0, nil)
	require.NoError(t, err)
	defer snap.Close()
	var landed atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // the command: its payload over every new inode at the name
		defer close(done)
		var last uint64
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var st unix.Stat_t
			if unix.Lstat(envrc, &st) != nil || st.Ino == last {
				continue
			}
			p := filepath.Join(sub, "payload")
			if os.WriteFile(p, []byte("PWNED\n"), 0o644) != nil {
				continue
			}
			if os.Rename(p, envrc) == nil {
				landed.Add(1)
				var now unix.Stat_t
				if unix.Lstat(envrc, &now) == nil {
					last = now.Ino
				}
			}
		}
	}()
	for range 200 {
		snap.Sweep()
	}
	close(stop)
	<-done
	q, err := snap.Sweep() // the final sweep, the command gone
	require.NoError(t, err)
	b, err := os.ReadFile(envrc)
	require.NoError(t, err)
	require.NotZero(t, landed.Load(), "control: the attacker's renames landed")
	assert.Equal(t, "users-own\n", string(b), "the command's file survived as the record: %+v", q)
}

// TestSweepFIFOWithWriter: red team round 32, R32b-8. The sweep's
// record of a protected file is an lstat and then a read by name: a
// command exchanging the regular file with a FIFO whose write end it
// holds made the read open the FIFO, and Go's poller waited for data
// with the watch's lock held. The read now refuses what is not a
// regular file. An attacker goroutine exchanges the two names all the
// while; every sweep returns. Control: the exchanges happen.
func TestSweepFIFOWithWriter(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	envrc := filepath.Join(root, "sub/.envrc")
	fifo := filepath.Join(root, "sub/fifo")
	require.NoError(t, os.MkdirAll(filepath.Dir(envrc), 0o755))
	require.NoError(t, os.WriteFile(envrc, []byte("export A=1\n"), 0o644))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	snap, err := sweep.TakeAs(ws, 0, nil)
	require.NoError(t, err)
	defer snap.Close()
	require.NoError(t, os.WriteFile(envrc, []byte("export A=2\n"), 0o644)) // changed: the sweep looks again
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // the command's write end, held
	require.NoError(t, err)
	defer w.Close()
	var swaps atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, envrc, unix.AT_FDCWD, fifo, unix.RENAME_EXCHANGE) == nil {
				swaps.Add(1)
			}
		}
	}()
	defer close(stop)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		done := make(chan struct{})
		go func() { snap.Sweep(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the sweep blocked on the FIFO")
		}
	}
	require.NotZero(t, swaps.Load(), "control: the attacker ran")
}

// TestSweepLinksResolvedAsCommand: red team round 32, R32b-9. The sweep
// resolved the command's new links as root: a link to an existing file
// below a directory the command cannot search was kept, one to a missing
// name quarantined, so the quarantine told the command whether a path
// existed there. Both now get the same answer. Control: in a directory
// it can search, the link to an existing file is kept and the one to a
// missing name is quarantined, as before.
func TestSweepLinksResolvedAsCommand(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (another user's directory)")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	base, err := os.MkdirTemp("", "landjail-links-") // searchable by uid 1001
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	for _, d := range []string{"closed", "open", "ws"} {
		require.NoError(t, os.Mkdir(filepath.Join(base, d), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(base, d, "id_ed25519"), []byte("x"), 0o644))
	}
	require.NoError(t, os.Chown(filepath.Join(base, "closed"), 1000, 1000))
	require.NoError(t, os.Chmod(filepath.Join(base, "closed"), 0o700))
	root := filepath.Join(base, "ws")
	require.NoError(t, os.Chown(root, 1001, 1001))
	ws, err := jail.New(root, jail.WithProtectedAgentConfig())
	require.NoError(t, err)
	defer ws.Close()
	cred := &syscall.Credential{Uid: 1001, Gid: 1001}
	snap, err := sweep.TakeAs(ws, 0, cred)
	require.NoError(t, err)
	defer snap.Close()
	links := map[string]string{
		"closed-key":     filepath.Join(base, "closed/id_ed25519"),
		"closed-missing": filepath.Join(base, "closed/id_rsa"),
		"open-key":       filepath.Join(base, "open/id_ed25519"),
		"open-missing":   filepath.Join(base, "open/id_rsa"),
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	q, err := snap.Sweep()
	require.NoError(t, err)
	moved := map[string]bool{}
	for _, e := range q {
		moved[e.Path] = e.MovedTo != ""
	}
	assert.Equal(t, moved["closed-key"], moved["closed-missing"], "the same answer below a directory it cannot search: %+v", q)
	assert.False(t, moved["open-key"], "control: kept, %+v", q)
	assert.True(t, moved["open-missing"], "control: quarantined, %+v", q)
}
