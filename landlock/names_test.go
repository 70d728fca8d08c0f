package landlock

import (
	"strings"
	"testing"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	"github.com/stretchr/testify/assert"
)

// TestNamesMatchGoLandlock: our name tables cover every right and scope
// go-landlock knows, with go-landlock's spelling (its String methods,
// read here only to check the tables).
func TestNamesMatchGoLandlock(t *testing.T) {
	latest := abiConfig(latestKnownABI)
	for bit := golandlock.AccessFSSet(1); bit&latest.HandledAccessFS != 0; bit <<= 1 {
		assert.Equal(t, strings.Trim(bit.String(), "{}"), nameOf(bit, fsRightNames))
	}
	assert.Len(t, accessNames(latest.HandledAccessFS), len(fsRightNames))
	for bit := golandlock.AccessNetSet(1); bit&latest.HandledAccessNet != 0; bit <<= 1 {
		assert.Equal(t, strings.Trim(bit.String(), "{}"), nameOf(bit, netRightNames))
	}
	assert.Len(t, namesOf(latest.HandledAccessNet, netRightNames), len(netRightNames))
	for bit := golandlock.ScopedSet(1); bit&latest.Scoped != 0; bit <<= 1 {
		assert.Equal(t, strings.Trim(bit.String(), "{}"), nameOf(bit, scopeNames))
	}
	assert.Len(t, namesOf(latest.Scoped, scopeNames), len(scopeNames))
	assert.Equal(t, []string{}, accessNames(0))
	assert.Equal(t, []string{"execute", "1<<40"}, accessNames(1|1<<40))
}
