package limits_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/limits"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4096", 4096, true}, {"4096B", 4096, true}, {"1K", 1 << 10, true}, {"64M", 64 << 20, true},
		{"64MiB", 64 << 20, true}, {"64mb", 64 << 20, true}, {"1g", 1 << 30, true}, {"2T", 2 << 40, true},
		{"0", 0, true},
		{"", 0, false}, {"M", 0, false}, {"-1M", 0, false}, {"1.5G", 0, false}, {"64i", 0, false},
		{"64X", 0, false}, {"9999999999T", 0, false}, {"64 M", 0, false}, {"64MiBB", 0, false},
	} {
		got, err := limits.ParseSize(tc.in)
		if tc.ok {
			assert.NoError(t, err, tc.in)
			assert.Equal(t, tc.want, got, tc.in)
		} else {
			assert.ErrorIs(t, err, limits.ErrInvalid, tc.in)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   limits.Flags
		want limits.Spec
		ok   bool
	}{
		{"defaults", limits.Flags{}, limits.Spec{Pids: limits.DefaultPids}, true},
		{"all", limits.Flags{Pids: "100", Memory: "64M", CPUs: "0.5", FileSize: "1M", NoFile: "256"},
			limits.Spec{Pids: 100, Memory: 64 << 20, CPUs: 0.5, FileSize: 1 << 20, NoFile: 256}, true},
		{"pids max", limits.Flags{Pids: "max"}, limits.Spec{}, true},
		{"pids 0", limits.Flags{Pids: "0"}, limits.Spec{}, true},
		{"memory max", limits.Flags{Memory: "max"}, limits.Spec{Pids: limits.DefaultPids}, true},
		{"cpus 2", limits.Flags{CPUs: "2"}, limits.Spec{Pids: limits.DefaultPids, CPUs: 2}, true},
		{"memory too small", limits.Flags{Memory: "64"}, limits.Spec{}, false},
		{"pids negative", limits.Flags{Pids: "-1"}, limits.Spec{}, false},
		{"pids word", limits.Flags{Pids: "lots"}, limits.Spec{}, false},
		{"cpus NaN", limits.Flags{CPUs: "NaN"}, limits.Spec{}, false},
		{"cpus Inf", limits.Flags{CPUs: "Inf"}, limits.Spec{}, false},
		{"cpus tiny", limits.Flags{CPUs: "0.001"}, limits.Spec{}, false},
		{"cpus negative", limits.Flags{CPUs: "-1"}, limits.Spec{}, false},
		{"file size junk", limits.Flags{FileSize: "1Q"}, limits.Spec{}, false},
		{"nofile negative", limits.Flags{NoFile: "-3"}, limits.Spec{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := limits.ParseFlags(tc.in)
			if !tc.ok {
				assert.ErrorIs(t, err, limits.ErrInvalid)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestMechanismText(t *testing.T) {
	for _, m := range []limits.Mechanism{limits.NotEnforced, limits.CgroupV2, limits.CgroupV1, limits.Rlimit} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var back limits.Mechanism
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, m, back, string(b))
	}
	b, _ := json.Marshal(limits.Limit{Name: "pids", Value: 4096, Mechanism: limits.CgroupV1})
	assert.JSONEq(t, `{"name":"pids","value":4096,"mechanism":"cgroup-v1"}`, string(b))
	_, err := limits.Mechanism(9).MarshalText()
	assert.Error(t, err)
}
