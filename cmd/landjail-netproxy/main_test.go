package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/netproxy"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }

// TestRunBadEntry: an entry that does not parse ends the process before
// it touches descriptor 3 (landjail run's own tests drive the served
// case end to end: cmd/landjail TestAllowDomainRun).
func TestRunBadEntry(t *testing.T) {
	var out strings.Builder
	err := run([]string{"ok.test", "*.com"}, strings.NewReader(""), &out)
	assert.ErrorIs(t, err, netproxy.ErrBadAllowEntry)
	assert.Empty(t, out.String())
}
