package jail_test

import (
	"testing"

	"github.com/landjail/landjail/internal/kerneltest"
)

func TestMain(m *testing.M) { kerneltest.Main(m) }
