package cliopts

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"
)

// TestExplainAllImpliesExplain: --explain-all, or explain_all = true in a
// --config file, turns --explain on; the control: neither leaves it off.
func TestExplainAllImpliesExplain(t *testing.T) {
	load := func(args ...string) *Options {
		var o *Options
		cmd := &cli.Command{Name: "run", Flags: RunFlags(),
			Action: func(_ context.Context, cmd *cli.Command) (err error) {
				o, err = Load(cmd)
				return err
			}}
		require.NoError(t, cmd.Run(context.Background(), append([]string{"run", "--workspace", t.TempDir()}, args...)))
		return o
	}
	assert.False(t, load().Explain, "control")
	o := load("--explain-all")
	assert.True(t, o.Explain && o.ExplainAll)
	o = load("--config", writeConfig(t, "explain_all = true\n"))
	assert.True(t, o.Explain && o.ExplainAll)
}
