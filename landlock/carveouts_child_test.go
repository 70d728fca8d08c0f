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
	"github.com/landjail/landjail/landlock"
)

// TestCarveOutTableChild runs testdata/carveouts.toml through a child
// confined by landlock.Compile of the same policy (built as the CLI
// builds it): cat, >> or rm the path. A refusal is EACCES ("Permission
// denied") and never prints the marker; a refused write or remove leaves
// the file as it was. The same table runs through the Workspace (jail)
// and landjail resolve (cmd/landjail), so the three layers agree on every
// carve-out. Old code: the id_*_sk, .vault-token, nested .kube/.docker and
// private-key cases were readable, the CA bundle was not.
func TestCarveOutTableChild(t *testing.T) {
	kerneltest.RequireLandlockABI(t, 3) // truncate (ABI 3) handled: ">>" and ": >" both refused
	for _, c := range carvetest.Load(t, "../testdata/carveouts.toml") {
		t.Run(c.Name, func(t *testing.T) {
			root := carvetest.Build(t, &c)
			ws, err := c.Policy.Options(root).Policy()
			require.NoError(t, err)
			defer ws.Close()
			rs := compile(t, ws, landlock.Options{})
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
			want := c.WantFor("landlock")
			if want == carvetest.OK {
				require.NoError(t, err, "%s\n%s", script, out)
				if c.Access == carvetest.Read {
					assert.Equal(t, carvetest.Expected(&c), out)
				}
				return
			}
			require.Error(t, err, "must be refused: %s\n%s", script, out)
			assert.Contains(t, out, "Permission denied", "EACCES from Landlock: %s", out)
			assert.NotContains(t, out, carvetest.Marker)
			after, _ := os.ReadFile(p)
			assert.Equal(t, string(before), string(after), "a refused access changes nothing")
		})
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
