package landlock

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	golandlock "github.com/landlock-lsm/go-landlock/landlock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportJSONNamesNotUTF8 (red team round 27, R27d-6): every path of
// a Report that is not valid UTF-8 comes back byte for byte from its
// _b64 form, in lists (masks, writable, ...), carve-outs, rules and
// skipped paths; two names that differ in one invalid byte stay
// distinct. Control: valid names carry no _b64 field at all.
func TestReportJSONNamesNotUTF8(t *testing.T) {
	bad1, bad2, good := "/ws/.env\xff", "/ws/.env\xfe", "/ws/.env"
	r := Report{
		Masks:          []string{good, bad1, bad2},
		ReadOnlyMounts: []string{bad1},
		Writable:       []string{good},
		FrozenDirs:     []string{bad2},
		Swept:          []string{bad1},
		SharedMemory:   "/tmp/x\xff/.shm",
		CarveOuts:      []CarveOut{{Path: bad1, Mode: CarveDeny}, {Path: good, Mode: CarveDeny}},
		Rules:          []Rule{{Path: bad2, Access: golandlock.AccessFSSet(RightsAll)}},
		Skipped:        []Skipped{{Path: bad1, Reason: "missing"}},
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var got struct {
		Masks             []string         `json:"masks"`
		MasksB64          []string         `json:"masks_b64"`
		ReadOnlyMountsB64 []string         `json:"read_only_mounts_b64"`
		WritableB64       []string         `json:"writable_b64"`
		FrozenDirsB64     []string         `json:"frozen_dirs_b64"`
		SweptB64          []string         `json:"swept_b64"`
		SharedMemoryB64   string           `json:"shared_memory_b64"`
		CarveOuts         []map[string]any `json:"carve_outs"`
		Rules             []map[string]any `json:"rules"`
		Skipped           []map[string]any `json:"skipped"`
	}
	require.NoError(t, json.Unmarshal(b, &got))
	dec := func(s string) string {
		d, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		return string(d)
	}
	require.Len(t, got.MasksB64, 3)
	assert.Equal(t, "", got.MasksB64[0], "a valid name has no _b64 form")
	assert.Equal(t, bad1, dec(got.MasksB64[1]))
	assert.Equal(t, bad2, dec(got.MasksB64[2]))
	assert.Equal(t, got.Masks[1], got.Masks[2], "encoding/json's form alone: the two look alike")
	assert.Equal(t, []string{base64.StdEncoding.EncodeToString([]byte(bad1))}, got.ReadOnlyMountsB64)
	assert.Nil(t, got.WritableB64, "control: every name valid, no list")
	assert.Equal(t, bad2, dec(got.FrozenDirsB64[0]))
	assert.Equal(t, bad1, dec(got.SweptB64[0]))
	assert.Equal(t, "/tmp/x\xff/.shm", dec(got.SharedMemoryB64))
	assert.Equal(t, bad1, dec(got.CarveOuts[0]["path_b64"].(string)))
	assert.NotContains(t, got.CarveOuts[1], "path_b64")
	assert.Equal(t, bad2, dec(got.Rules[0]["path_b64"].(string)))
	assert.Equal(t, bad1, dec(got.Skipped[0]["path_b64"].(string)))

	// A Rule round-trips byte for byte.
	rb, err := json.Marshal(r.Rules[0])
	require.NoError(t, err)
	var back Rule
	require.NoError(t, json.Unmarshal(rb, &back))
	assert.Equal(t, bad2, back.Path)
	assert.Equal(t, r.Rules[0].Access, back.Access)
}
