package landlock

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeList lists /ws as holding .env, a.txt, .mcp.json (absent
// agent-config files are not listed).
func fakeList(dir string) ([]dirEntry, error) {
	if dir == "/ws" {
		return []dirEntry{{name: ".env", kind: kindFile}, {name: "a.txt", kind: kindFile}, {name: "sub", kind: kindDir}}, nil
	}
	return nil, nil
}

// TestPlanLayer: which layer plan chooses, and what it then masks,
// remounts and still carves, without a kernel.
func TestPlanLayer(t *testing.T) {
	envCarve := carve{path: "/ws/.env", source: SourceDenyPattern, exists: true}
	roCarve := carve{path: "/ws/sub", access: RightsReadExec, source: SourceReadOnly, exists: true}
	missing := carve{path: "/ws/.mcp.json", access: RightsReadExec, source: SourceAgentConfig, exists: false}
	tests := []struct {
		name       string
		edit       func(r *request)
		abi        int
		layer      Layer
		reasonHas  string
		masks, ro  []string
		frozen     []string
		swept      []string
		privateTmp bool
		privateNet bool
		err        error
	}{
		{name: "namespaces: masks and read-only mounts, nothing frozen", abi: 7, layer: LayerNamespaces,
			masks: []string{"/ws/.env"}, ro: []string{"/ws/sub"}, privateTmp: true},
		{name: "namespaces off: carve-outs freeze /ws", abi: 7, edit: func(r *request) { r.namespaces = false },
			layer: LayerLandlockOnly, reasonHas: "--no-namespaces", frozen: []string{"/ws"}},
		{name: "unavailable: carve-outs, reason kept", abi: 7, edit: func(r *request) { r.viewErr = errors.New("unshare: EPERM") },
			layer: LayerLandlockOnly, reasonHas: "unshare: EPERM", frozen: []string{"/ws"}},
		{name: "unavailable and strict: refused", abi: 7, edit: func(r *request) { r.viewErr = errors.New("x"); r.strict = true },
			err: ErrNotEnforceable},
		{name: "no-namespaces and strict: runs with carve-outs", abi: 7, edit: func(r *request) { r.namespaces = false; r.strict = true },
			layer: LayerLandlockOnly, reasonHas: "--no-namespaces", frozen: []string{"/ws"}},
		{name: "no Landlock: path-check", abi: 0, layer: LayerPathCheck, reasonHas: "no usable Landlock"},
		{name: "missing agent-config file stays a carve-out", abi: 7, edit: func(r *request) { r.carves = append(r.carves, missing) },
			layer: LayerNamespaces, masks: []string{"/ws/.env"}, ro: []string{"/ws/sub"}, frozen: []string{"/ws"}, privateTmp: true},
		{name: "missing agent-config file swept: nothing frozen", abi: 7, edit: func(r *request) { r.carves = append(r.carves, missing); r.sweep = true },
			layer: LayerNamespaces, masks: []string{"/ws/.env"}, ro: []string{"/ws/sub"}, swept: []string{"/ws/.mcp.json"}, privateTmp: true},
		{name: "missing agent-config file, sweep, Landlock-only: still frozen", abi: 7,
			edit:  func(r *request) { r.carves = append(r.carves, missing); r.sweep = true; r.namespaces = false },
			layer: LayerLandlockOnly, reasonHas: "--no-namespaces", frozen: []string{"/ws"}},
		{name: "network fully restricted: private network", abi: 7, edit: func(r *request) { r.connect = nil },
			layer: LayerNamespaces, masks: []string{"/ws/.env"}, ro: []string{"/ws/sub"}, privateTmp: true, privateNet: true},
		{name: "rox /: host /tmp kept", abi: 7, edit: func(r *request) { r.rules = append(r.rules, Rule{Path: "/", Access: RightsReadExec, Source: "rox"}) },
			layer: LayerNamespaces, masks: []string{"/ws/.env"}, ro: []string{"/ws/sub"}},
		{name: "writable /: no view", abi: 7, edit: func(r *request) {
			r.rules = append(r.rules, Rule{Path: "/", Access: RightsAll, Source: "unrestricted"})
		},
			layer: LayerLandlockOnly, reasonHas: "unrestricted", frozen: []string{"/ws"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := baseRequest()
			req.namespaces = true
			req.carves = []carve{envCarve, roCarve}
			if tc.edit != nil {
				tc.edit(&req)
			}
			c, err := plan(req, tc.abi, fakeStat("/ws/", "/ro/", "/dev/null", "/"), fakeList)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			rep := c.report
			assert.Equal(t, tc.layer, rep.Layer)
			if tc.reasonHas != "" {
				assert.Contains(t, rep.LayerReason, tc.reasonHas)
			} else {
				assert.Empty(t, rep.LayerReason)
			}
			assert.Equal(t, tc.masks, rep.Masks)
			assert.Equal(t, tc.ro, rep.ReadOnlyMounts)
			assert.Equal(t, tc.frozen, rep.FrozenDirs)
			assert.Equal(t, tc.swept, rep.Swept)
			assert.Equal(t, tc.privateTmp, rep.PrivateTmp)
			assert.Equal(t, tc.privateNet, rep.PrivateNetwork)
			if tc.layer == LayerNamespaces && len(tc.frozen) == 0 {
				// Landlock grants the workspace whole.
				assert.Contains(t, rep.Rules, Rule{Path: "/ws", Access: c.fit, Source: "workspace"})
			}
		})
	}
}
