package cliopts

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
)

// TestSetFlagsMatchesIsSet: Load reads which flags are set from one pass
// (setFlags) instead of cmd.IsSet per name; for every name and alias of
// run's and mcp's flags, and a name also defined by the parent command
// (the nearest definition decides, as in the library's lookup), both must
// answer the same, whatever the command line.
func TestSetFlagsMatchesIsSet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags func() []cli.Flag
		args  []string
	}{
		{"run none", RunFlags, nil},
		{"run some", RunFlags, []string{"--workspace", "/tmp", "--deny-secrets", "--rwx", "/opt", "--connect-tcp", "443", "--strict"}},
		{"run alias rw", RunFlags, []string{"--rw", "/opt", "--no-namespaces", "--timeout", "1s", "--env", "A=1"}},
		{"run false bool", RunFlags, []string{"--strict=false", "--best-effort"}},
		{"mcp", MCPFlags, []string{"--workspace", "/tmp", "--allow-dns"}},
		{"parent defines strict too", RunFlags, []string{"--strict"}},
		{"parent's strict set, child's not", RunFlags, []string{"--deny-secrets"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want map[string]bool
			child := &cli.Command{
				Name:  "child",
				Flags: tc.flags(),
				Action: func(_ context.Context, cmd *cli.Command) error {
					got = setFlags(cmd)
					want = map[string]bool{}
					for _, c := range cmd.Lineage() {
						for _, f := range c.Flags {
							for _, n := range f.Names() {
								want[n] = cmd.IsSet(n)
							}
						}
					}
					return nil
				},
			}
			parentArgs := []string{"parent"}
			if tc.name == "parent's strict set, child's not" {
				parentArgs = append(parentArgs, "--strict", "--extra")
			}
			root := &cli.Command{
				Name: "parent",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: flagStrict},
					&cli.BoolFlag{Name: "extra"},
				},
				Commands: []*cli.Command{child},
			}
			args := append(append(parentArgs, "child"), tc.args...)
			require.NoError(t, root.Run(context.Background(), args))
			require.NotNil(t, got)
			assert.Equal(t, want, got)
			for _, a := range tc.args {
				if n, ok := strings.CutPrefix(a, "--"); ok {
					n, _, _ = strings.Cut(n, "=")
					assert.True(t, got[n], "%s given on the command line", n)
				}
			}
		})
	}
}
