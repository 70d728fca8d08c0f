package tools_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/carvetest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/tools"
)

// TestVerdictTableFileTools runs testdata/carveouts.toml, the verdict
// table every layer runs, through the MCP file tools (read_file, and
// read_file then write_file for a write, as an agent edits): the same
// policy must give the same verdict as jail.Workspace, landjail resolve
// and a confined child's bash. Removal has no file tool; those rows are
// the other layers'. Over MCP, write_file once succeeded where the bash
// tool was refused (a protected agent-config name): this is the check.
func TestVerdictTableFileTools(t *testing.T) {
	for _, c := range carvetest.Load(t, "../testdata/carveouts.toml") {
		if c.Access == carvetest.Remove {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			root := carvetest.Build(t, &c)
			tracker := jail.NewReadTracker()
			// As landjail-mcp builds it (sandbox.Settings.Server): the
			// policy plus the system preset's directories, read-only.
			o := c.Policy.Options(root)
			ws, err := o.Policy(append(o.SystemRoots(), jail.WithReadTracker(tracker))...)
			require.NoError(t, err)
			defer ws.Close()
			// And, as landjail-mcp after each compile, what the children's
			// rules deny by way of links (Workspace.DenyPaths).
			pws, err := o.Policy()
			require.NoError(t, err)
			denied, readOnly, err := landlock.DeniedPaths(pws, 0)
			pws.Close()
			require.NoError(t, err)
			ws.DenyPaths(denied, readOnly)
			k := &tools.Toolkit{WS: ws, Tracker: tracker}
			before, _ := os.ReadFile(carvetest.HostPath(root, &c))
			var out string
			r, err := k.ReadFile(tools.ReadFileArgs{Path: c.Path})
			if r != nil {
				out = r.Content
			}
			if c.Access == carvetest.Write && (err == nil || os.IsNotExist(err) || isNotExist(err)) {
				_, err = k.WriteFile(tools.WriteFileArgs{Path: c.Path, Content: string(before) + "x"})
			}
			switch c.WantFor("tools") {
			case carvetest.OK:
				require.NoError(t, err)
				if c.Access == carvetest.Read {
					for _, line := range strings.Split(trimNL(carvetest.Expected(&c)), "\n") {
						assert.Contains(t, out, "\t"+line+"\n") // read_file numbers lines
					}
				}
				return
			case carvetest.Denied:
				assert.ErrorIs(t, err, jail.ErrDenied)
			case carvetest.ReadOnly:
				assert.ErrorIs(t, err, jail.ErrReadOnly)
			case carvetest.Outside:
				assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
			}
			assert.NotContains(t, out, carvetest.Marker)
			if err != nil {
				assert.NotContains(t, err.Error(), carvetest.Marker)
			}
			after, _ := os.ReadFile(carvetest.HostPath(root, &c))
			assert.Equal(t, string(before), string(after), "a refused access changes nothing")
		})
	}
}

func isNotExist(err error) bool {
	for e := err; e != nil; {
		if os.IsNotExist(e) {
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
