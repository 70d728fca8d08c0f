package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportedTmpIsWritable: where the report says the view's private
// /tmp is writable (writable_tmp), the command writes there, in every
// spawn path: a supervised --no-pid-namespace run (a fresh spawner
// thread) had /tmp refused, EACCES, while its report said writable (red
// team round 30, R30b-3; the other modes were the controls). Whatever
// the emulation, the two agree.
func TestReportedTmpIsWritable(t *testing.T) {
	bin := landjailBin(t)
	for _, mode := range [][]string{
		{"--no-pid-namespace", "--timeout", "1m"},
		{"--no-pid-namespace"},
		{"--timeout", "1m"},
		nil,
		{"--no-namespaces", "--timeout", "1m"},
	} {
		t.Run(strings.Join(append([]string{"run"}, mode...), " "), func(t *testing.T) {
			t.Parallel()
			ws := wsDir(t)
			rep := filepath.Join(t.TempDir(), "report.json")
			args := append(append([]string{"run", "--workspace", ws, "--report", rep}, mode...), "--", "sh", "-c", "touch /tmp/x && echo wrote")
			_, out := runBin(t, bin, nil, args...)
			b, err := os.ReadFile(rep)
			require.NoError(t, err, out)
			var r struct {
				Report struct {
					WritableTmp bool `json:"writable_tmp"`
				} `json:"report"`
			}
			require.NoError(t, json.Unmarshal(b, &r))
			assert.Equal(t, r.Report.WritableTmp, strings.Contains(out, "wrote"), "writable_tmp %v: %s", r.Report.WritableTmp, out)
		})
	}
}
