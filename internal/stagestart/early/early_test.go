package early_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/stagestart/early"
)

// TestGlance: the command lines that get a stage cloned early, and with
// which network: each row is a case of cmd/landjail's startEarly, which
// reads them the same way (a stage for another network than the run's
// is discarded by exec, so a mismatch costs time only).
func TestGlance(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		run, net bool
	}{
		{[]string{"landjail", "run", "--", "true"}, true, true},
		{[]string{"landjail", "run", "--workspace", "/w", "--", "true"}, true, true},
		{[]string{"landjail", "run", "--workspace=/w", "--", "true"}, true, true},
		{[]string{"landjail", "run", "--net", "--", "true"}, true, false},
		{[]string{"landjail", "run", "--connect-tcp=443", "--", "true"}, true, false},
		{[]string{"landjail", "run", "-bind-tcp", "8080", "--", "true"}, true, false},
		{[]string{"landjail", "run", "--config", "c.toml", "--", "true"}, true, false},
		{[]string{"landjail", "run", "--", "--net", "true"}, true, true}, // the command's own flag
		{[]string{"landjail", "run", "--no-namespaces", "--", "true"}, false, false},
		{[]string{"landjail", "run", "--help"}, false, false},
		{[]string{"landjail", "run", "-h"}, false, false},
		{[]string{"landjail", "run", "--print-rules", "--", "true"}, false, false},
		{[]string{"landjail", "--version"}, false, false},
		{[]string{"landjail", "learn", "--", "true"}, false, false},
		{[]string{"landjail-init"}, false, false},
		{nil, false, false},
	} {
		run, net := early.Glance(tc.args)
		assert.Equal(t, tc.run, run, "%q", tc.args)
		assert.Equal(t, tc.net, net, "%q", tc.args)
	}
}
