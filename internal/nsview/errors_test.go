package nsview_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/landjail/landjail/internal/nsview"
)

// TestErrNotPrivilegedWraps: ErrNotPrivileged, built without fmt, says
// what fmt.Errorf("%w: no CAP_SYS_ADMIN", ErrUnavailable) said and still
// wraps ErrUnavailable (the layer's fallback tests errors.Is on it).
func TestErrNotPrivilegedWraps(t *testing.T) {
	assert.Equal(t, fmt.Errorf("%w: no CAP_SYS_ADMIN", nsview.ErrUnavailable).Error(), nsview.ErrNotPrivileged.Error())
	assert.ErrorIs(t, nsview.ErrNotPrivileged, nsview.ErrUnavailable)
	assert.NotErrorIs(t, nsview.ErrUnavailable, nsview.ErrNotPrivileged)
	assert.ErrorIs(t, fmt.Errorf("probe: %w", nsview.ErrNotPrivileged), nsview.ErrUnavailable)
	assert.False(t, errors.Is(nsview.ErrNotPrivileged, nsview.ErrInvalidPath))
}
