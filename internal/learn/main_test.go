package learn

import (
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

// TestMain runs the tests under the emulation LANDJAIL_EMULATE asks for
// (the classifier resolves paths through jail, openat2 or its fallback).
func TestMain(m *testing.M) { kerneltest.Main(m) }
