package openat_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/openat"
)

// The harness (attacker, sentinels, inotify watch, snapshots) is
// attacktest.RunOpsRace, shared with the other package's race_ops_test.go.

// TestRaceTwoPathOps runs every two-path and parent+leaf operation of
// openat.Root under the parent-swap attack, with both mechanisms.
func TestRaceTwoPathOps(t *testing.T) {
	attacktest.ForEachMechanism(t, func(t *testing.T) {
		for _, op := range attacktest.RaceOps {
			t.Run(op.Name(), func(t *testing.T) {
				attacktest.AssertContained(t, attacktest.RunOpsRace(t, op, true, func(t *testing.T, root string) attacktest.OpsFS {
					r, err := openat.OpenRoot(root)
					require.NoError(t, err)
					t.Cleanup(func() { r.Close() })
					return r
				}))
			})
		}
	})
}

// opsNaiveFS is the resolve-then-act the tests guard against:
// filepath.EvalSymlinks of the parent, a containment check, then the os
// call on the checked path. It is the canary showing the race bites.
type opsNaiveFS struct{ root string }

func (n opsNaiveFS) check(name string) (string, error) {
	p := filepath.Join(n.root, name)
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", err
	}
	if dir != n.root && !strings.HasPrefix(dir, n.root+"/") {
		return "", errors.New("naive: outside")
	}
	return filepath.Join(dir, filepath.Base(p)), nil
}

func (n opsNaiveFS) Remove(name string) error {
	p, err := n.check(name)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

func (n opsNaiveFS) RemoveAll(name string) error {
	p, err := n.check(name)
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// MkdirAll checks the first component (the rest does not exist yet).
func (n opsNaiveFS) MkdirAll(name string, perm fs.FileMode) error {
	first, rest, _ := strings.Cut(name, "/")
	p, err := n.check(first + "/x")
	if err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(filepath.Dir(p), rest), perm)
}

func (n opsNaiveFS) Rename(oldname, newname string) error {
	o, err := n.check(oldname)
	if err != nil {
		return err
	}
	p, err := n.check(newname)
	if err != nil {
		return err
	}
	return os.Rename(o, p)
}

func (n opsNaiveFS) WriteFile(name string, data []byte, perm fs.FileMode) error {
	p, err := n.check(name)
	if err != nil {
		return err
	}
	return os.WriteFile(p, data, perm)
}

// TestRaceTwoPathOpsCanary runs the same races against opsNaiveFS and
// expects changes outside the root, so TestRaceTwoPathOps is known to
// detect an escape. Whether the attacker wins within the bound depends
// on scheduling: no escape at all is a skip, not a failure.
func TestRaceTwoPathOpsCanary(t *testing.T) {
	if testing.Short() {
		t.Skip("the canary only shows the race bites; skipped with -short")
	}
	escaped := 0
	for _, op := range attacktest.RaceOps {
		t.Run(op.Name(), func(t *testing.T) {
			res := attacktest.RunOpsRace(t, op, false, func(_ *testing.T, root string) attacktest.OpsFS { return opsNaiveFS{root} })
			if len(res.Events()) > 0 {
				escaped++
				t.Logf("escaped as expected: %d events outside, first %s", len(res.Events()), res.Events()[0])
			}
		})
	}
	if escaped == 0 {
		t.Skip("no naive call escaped: scheduling-dependent, the canary proves nothing this run")
	}
}
