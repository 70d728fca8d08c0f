package landlock_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/carvetest"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
)

// TestCarveOutTableChild runs testdata/carveouts.toml through a child
// confined by landlock.Compile of the same policy (built as the CLI
// builds it): cat, >> or rm the path. A refusal never prints the marker,
// and a refused write or remove leaves the file as it was. The same table
// runs through the Workspace (jail) and landjail resolve (cmd/landjail),
// so the three layers agree on every carve-out. Old code: the id_*_sk,
// .vault-token, nested .kube/.docker and private-key cases were readable,
// the CA bundle was not.
//
// Each case runs in both file-system layers, with the same verdict
// (issue #11: "the carve-out suite runs in both modes with the same
// verdicts for secrets"): "carve-outs" (Namespaces off: Landlock alone,
// a refusal is EACCES) and "namespaces" (Namespaces on: masks and
// read-only mounts, a denied file reads empty or is absent, a write is
// EROFS, a remove EBUSY). Per mode: natively as root the second row has
// the namespace layer; under LANDJAIL_EMULATE=ns=EPERM or ns=ENOSYS it
// falls back to carve-outs (Report.Layer says so) with the same verdicts.
func TestCarveOutTableChild(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 3) // truncate (ABI 3) handled: ">>" and ": >" both refused
	for _, c := range carvetest.Load(t, "../testdata/carveouts.toml") {
		t.Run(c.Name, func(t *testing.T) {
			for _, layer := range []struct {
				name       string
				namespaces bool
			}{{"carve-outs", false}, {"namespaces", true}} {
				t.Run(layer.name, func(t *testing.T) {
					wantLayer := landlock.LayerLandlockOnly
					if layer.namespaces && kerneltest.ExpectNamespaces(t, nsview.Probe()) {
						wantLayer = landlock.LayerNamespaces
					}
					assert.Equal(t, c.WantFor("landlock"), carveVerdict(t, &c, landlock.Options{Namespaces: layer.namespaces}, wantLayer))
				})
			}
		})
	}
}

// carveVerdict runs case c in a child compiled with opt, checks that the
// report names wantLayer, and returns the verdict: ok when the access did
// what it asks (a read returned the file's content), else c.Want's
// refusal (denied or read-only: the table's words for the same outcome,
// refused), after checking that the refusal printed no marker, changed
// nothing, and, in the carve-outs layer, was Landlock's EACCES.
func carveVerdict(t *testing.T, c *carvetest.Case, opt landlock.Options, wantLayer string) string {
	t.Helper()
	root := carvetest.Build(t, c)
	ws, err := c.Policy.Options(root).Policy()
	require.NoError(t, err)
	defer ws.Close()
	rs := compile(t, ws, opt)
	require.Equal(t, wantLayer, rs.Report().Layer, rs.Report().LayerReason)
	p := filepath.Join(root, c.Path)
	before, _ := os.ReadFile(p)
	var script string
	switch c.Access {
	case carvetest.Read:
		script = "cat -- " + shellQuote(c.Path)
	case carvetest.Write:
		script = "printf x >> " + shellQuote(c.Path)
	case carvetest.Remove:
		script = "rm -- " + shellQuote(c.Path)
	}
	out, err := sh(t, ws, rs, script)
	if err == nil && (c.Access != carvetest.Read || out == carvetest.Expected(c)) {
		return carvetest.OK
	}
	assert.NotContains(t, out, carvetest.Marker)
	if c.Access == carvetest.Read && err == nil {
		assert.Empty(t, out, "a masked file reads empty")
		assert.Equal(t, landlock.LayerNamespaces, wantLayer, "only a mask reads empty")
	}
	if c.Access != carvetest.Read {
		require.Error(t, err, "must be refused: %s\n%s", script, out)
	}
	if wantLayer != landlock.LayerNamespaces {
		assert.Contains(t, out, "Permission denied", "EACCES from Landlock: %s", out)
	}
	after, _ := os.ReadFile(p)
	assert.Equal(t, string(before), string(after), "a refused access changes nothing")
	if c.Want == carvetest.OK {
		return "refused: " + out
	}
	return c.Want
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
