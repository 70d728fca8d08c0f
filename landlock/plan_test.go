package landlock

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeStat is a file system for plan: paths ending in "/" are directories,
// others files; anything not listed is missing.
func fakeStat(paths ...string) statFunc {
	return func(p string) (bool, error) {
		for _, q := range paths {
			if q == p+"/" {
				return true, nil
			}
			if q == p {
				return false, nil
			}
		}
		return false, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
}

func names(fs []Feature) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func baseRequest() request {
	return request{
		net:   true,
		scope: true,
		rules: []Rule{
			{Path: "/ws", Access: RightsAll, Source: "workspace"},
			{Path: "/ro", Access: RightsRead, Source: "ro"},
			{Path: "/dev/null", Access: RightsAll, Source: "system", Optional: true},
			{Path: "/missing", Access: RightsRead, Source: "system", Optional: true},
		},
		connect:     []uint16{443, 80, 443},
		policyRoots: 2,
	}
}

var planFS = fakeStat("/ws/", "/ro/", "/dev/null")

func TestPlanFitsABI(t *testing.T) {
	tests := []struct {
		abi         int
		handledFS   golandlock.AccessFSSet
		handledNet  uint64
		scoped      uint64
		dropped     []string
		wantEnforce []string // a few that must be enforced
	}{
		{abi: 1, handledFS: golandlock.V1.HandledAccessFS,
			dropped: []string{"fs.refer", "fs.truncate", "fs.ioctl_dev", "fs.resolve_unix", "net.bind_tcp", "net.connect_tcp", "net.bind_udp", "net.connect_send_udp", "scope.abstract_unix_socket", "scope.signal"}},
		{abi: 4, handledFS: golandlock.V4.HandledAccessFS, handledNet: ll.AccessNetBindTCP | ll.AccessNetConnectTCP,
			dropped:     []string{"fs.ioctl_dev", "fs.resolve_unix", "net.bind_udp", "net.connect_send_udp", "scope.abstract_unix_socket", "scope.signal"},
			wantEnforce: []string{"fs.refer", "net.connect_tcp"}},
		{abi: 7, handledFS: golandlock.V7.HandledAccessFS, handledNet: ll.AccessNetBindTCP | ll.AccessNetConnectTCP,
			scoped:      ll.ScopeAbstractUnixSocket | ll.ScopeSignal,
			dropped:     []string{"fs.resolve_unix", "net.bind_udp", "net.connect_send_udp"},
			wantEnforce: []string{"fs.ioctl_dev", "scope.signal"}},
		{abi: 11, handledFS: golandlock.V11.HandledAccessFS, handledNet: uint64(golandlock.V11.HandledAccessNet),
			scoped: ll.ScopeAbstractUnixSocket | ll.ScopeSignal, wantEnforce: []string{"fs.resolve_unix", "net.bind_udp"}},
		{abi: 42, handledFS: golandlock.V11.HandledAccessFS, handledNet: uint64(golandlock.V11.HandledAccessNet),
			scoped: ll.ScopeAbstractUnixSocket | ll.ScopeSignal},
	}
	for _, tt := range tests {
		c, err := plan(baseRequest(), tt.abi, planFS, nil)
		require.NoError(t, err, "abi %d", tt.abi)
		assert.Equal(t, uint64(tt.handledFS), c.attr.HandledAccessFS, "abi %d", tt.abi)
		assert.Equal(t, tt.handledNet, c.attr.HandledAccessNet, "abi %d", tt.abi)
		assert.Equal(t, tt.scoped, c.attr.Scoped, "abi %d", tt.abi)
		assert.ElementsMatch(t, tt.dropped, names(c.report.Dropped), "abi %d", tt.abi)
		for _, e := range tt.wantEnforce {
			assert.Contains(t, names(c.report.Enforced), e, "abi %d", tt.abi)
		}
		for _, r := range c.rules {
			assert.Zero(t, r.Access&^tt.handledFS, "abi %d: rule %v exceeds the handled set", tt.abi, r)
		}
		assert.Equal(t, LevelLandlock, c.report.Level)
		assert.Equal(t, []Skipped{{Path: "/missing", Reason: "stat /missing: file does not exist"}}, c.report.Skipped)
		if tt.handledNet != 0 {
			assert.Equal(t, []uint16{80, 443}, c.report.ConnectTCP, "sorted, deduplicated")
		} else {
			assert.Empty(t, c.report.ConnectTCP)
		}
	}
}

func TestPlanFileRulesGetFileRightsOnly(t *testing.T) {
	c, err := plan(baseRequest(), 7, planFS, nil)
	require.NoError(t, err)
	var null *Rule
	for i := range c.rules {
		if c.rules[i].Path == "/dev/null" {
			null = &c.rules[i]
		}
	}
	require.NotNil(t, null)
	assert.Equal(t, golandlock.AccessFSSet(ll.AccessFSExecute|ll.AccessFSWriteFile|ll.AccessFSReadFile|ll.AccessFSTruncate|ll.AccessFSIoctlDev), null.Access)
}

func TestPlanStrict(t *testing.T) {
	req := baseRequest()
	req.strict = true
	_, err := plan(req, 3, planFS, nil)
	var ae *ABIError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 3, ae.Have)
	assert.Equal(t, 6, ae.Want)
	assert.Contains(t, ae.Missing.Names(), "net.connect_tcp")
	assert.Contains(t, ae.Missing.Names(), "scope.signal")
	assert.Contains(t, ae.Missing.String(), "net.connect_tcp (ABI 4)")
	assert.Contains(t, ae.Missing.String(), "scope.signal (ABI 6)")
	assert.NotContains(t, ae.Missing.Names(), "fs.resolve_unix", "optional hardening never fails strict mode")
	for _, f := range ae.Missing {
		assert.True(t, f.Required, f.Name)
		assert.Greater(t, f.ABI, 3, f.Name)
	}
	assert.ErrorIs(t, err, errors.ErrUnsupported)

	_, err = plan(req, 0, planFS, nil)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 0, ae.Have)
	assert.Contains(t, ae.Error(), "no usable Landlock")

	_, err = plan(req, 7, planFS, nil)
	assert.NoError(t, err, "ABI 7 has every required feature; the missing optional path is no reason to fail")

	req.net, req.scope = false, false
	_, err = plan(req, 3, planFS, nil)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "fs.ioctl_dev (ABI 5)", ae.Missing.String())
	assert.Equal(t, []string{"fs.ioctl_dev"}, ae.Missing.Names())
	_, err = plan(req, 5, planFS, nil)
	assert.NoError(t, err, "without network and scope restrictions ABI 5 is enough")

	// Carve-outs are enforceable; only a carve-out that cannot be
	// compiled fails strict mode.
	req.carves = []carve{{path: "/ws/.env", source: SourceDenyPattern, exists: true}}
	list := fakeTree("/ws/", "/ws/.env", "/ws/a")
	c, err := plan(req, 7, planFS, list)
	require.NoError(t, err)
	assert.Contains(t, names(c.report.Enforced), "carve-outs")
	// Options.NoCarve is the one way to compile a policy without its
	// carve-outs: reported as dropped, refused by Strict. (A walk that
	// cannot finish is an error in collectCarves, never a dropped
	// feature: TestWalkLimitRefuses.)
	r := req
	r.noCarve = true
	_, err = plan(r, 7, planFS, list)
	assert.ErrorIs(t, err, ErrNotEnforceable)
	r.strict = false
	c, err = plan(r, 7, planFS, list)
	require.NoError(t, err)
	assert.Contains(t, names(c.report.Dropped), "carve-outs")
	assert.Empty(t, c.report.CarveOuts)
	assert.Equal(t, Rule{Path: "/ws", Access: c.fit, Source: "workspace"}, c.rules[0], "compiled whole")
	// A rule outside the carving that widens a carve-out fails strict.
	r = req
	r.rules = append(r.rules, Rule{Path: "/ws", Access: RightsRead, Source: "extra"})
	_, err = plan(r, 7, planFS, list)
	assert.ErrorIs(t, err, ErrNotEnforceable)
	_, err = plan(req, 0, planFS, list)
	require.ErrorAs(t, err, &ae, "no Landlock: carve-outs need ABI 1")
}

func TestPlanNoLandlockKeepsRequestedRights(t *testing.T) {
	c, err := plan(baseRequest(), 0, planFS, nil)
	require.NoError(t, err)
	assert.Equal(t, LevelPathCheck, c.report.Level)
	assert.Zero(t, c.attr.HandledAccessFS)
	require.NotEmpty(t, c.rules)
	assert.Equal(t, RightsAll, c.rules[0].Access, "the path-check fallback needs the requested rights")
	assert.Empty(t, c.report.Enforced)
}

func TestPlanRequiredPathMissing(t *testing.T) {
	req := baseRequest()
	req.rules = append(req.rules, Rule{Path: "/gone", Access: RightsRead, Source: "ro"})
	_, err := plan(req, 7, planFS, nil)
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestPlanNotes(t *testing.T) {
	req := baseRequest()
	req.rules = append(req.rules, Rule{Path: "/ws/vendor", Access: RightsRead, Source: "ro"})
	req.net = false
	c, err := plan(req, 7, fakeStat("/ws/", "/ro/", "/dev/null", "/ws/vendor/"), nil)
	require.NoError(t, err)
	joined := strings.Join(c.report.Notes, "\n")
	assert.Contains(t, joined, "ro /ws/vendor lies inside workspace /ws")
	assert.Contains(t, joined, "network not restricted")
	assert.Zero(t, c.attr.HandledAccessNet)
	assert.NotContains(t, names(c.report.Dropped), "net.bind_tcp", "not requested, so not dropped")
}
