package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/internal/kernel"
	"github.com/landjail/landjail/internal/kerneltest"
	"github.com/landjail/landjail/internal/nsview"
	"github.com/landjail/landjail/landlock"
	"github.com/landjail/landjail/openat"
)

func TestDoctorJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, stderr := runCLI(t, "doctor", "--json")
	require.Equal(t, 0, code, stderr)
	// landlock.Rule only marshals; decode the report's rules by hand.
	var d struct {
		doctorReport
		Run *struct {
			Level string `json:"level"`
			Rules []struct {
				Path   string   `json:"path"`
				Access []string `json:"access"`
				Source string   `json:"source"`
			} `json:"rules"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &d), out)
	assert.Equal(t, kernel.Release(), d.Kernel)
	assert.NotEmpty(t, d.Kernel)
	assert.Equal(t, kernel.LandlockABI(), d.LandlockABI)
	require.Len(t, d.Levels, 7)
	for _, l := range d.Levels {
		assert.Equal(t, d.LandlockABI >= l.ABI, l.Available, "ABI %d", l.ABI)
	}
	assert.Contains(t, []string{"openat2", "o_nofollow-walk"}, d.OpenatMechanism)
	// Set from the start under the emulation's (or an outer) seccomp filter.
	assert.Equal(t, kerneltest.NoNewPrivsAtStart(), d.NoNewPrivs, "doctor must not confine itself")
	require.NotNil(t, d.Run, d.RunError)
	assert.NotEmpty(t, d.Run.Rules, "the default run has the workspace and system rules")
	assert.Equal(t, "workspace", d.Run.Rules[0].Source)
	assert.Contains(t, d.Run.Rules[0].Access, "write_file")
	if d.LandlockABI > 0 {
		assert.Equal(t, landlock.LevelLandlock, d.Run.Level)
	} else {
		assert.Equal(t, landlock.LevelPathCheck, d.Run.Level)
	}
}

func TestDoctorText(t *testing.T) {
	code, out, _ := runCLI(t, "doctor")
	require.Equal(t, 0, code)
	for _, s := range []string{"kernel:", "landlock ABI:", "ABI 4  TCP", "openat2:", "seccomp mode:", "no_new_privs:", "landjail run here"} {
		assert.Contains(t, out, s)
	}
}

// TestDoctorProbesBeforeMechanism: on a kernel where openat2 fails (ENOSYS
// as before Linux 5.6, EPERM as under a container's seccomp profile),
// doctor must report the lookup mechanism openat really uses there, the
// O_NOFOLLOW walk, and never "openat2: false (lookups use openat2)": the
// mechanism switches on the first failing lookup, so it has to be probed
// before it is read. Natively, the two must agree the other way.
func TestDoctorProbesBeforeMechanism(t *testing.T) {
	for _, tc := range []struct{ name, emulate string }{
		{"native", ""},
		{"openat2=ENOSYS", "openat2=ENOSYS"},
		{"openat2=EPERM", "openat2=EPERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env []string
			if tc.emulate != "" {
				env = append(env, kerneltest.EnvEmulate+"="+tc.emulate)
			}
			if !kerneltest.RunInSubprocess(t, env...) {
				return
			}
			if tc.emulate == "" {
				kerneltest.RequireOpenat2(t)
			}
			t.Chdir(t.TempDir())
			code, out, stderr := runCLI(t, "doctor", "--json")
			require.Equal(t, 0, code, stderr)
			var d doctorReport
			require.NoError(t, json.Unmarshal([]byte(out), &d), out)
			want := openat.MechanismOpenat2
			if tc.emulate != "" {
				want = openat.MechanismWalk
			}
			assert.Equal(t, tc.emulate == "", d.Openat2)
			assert.Equal(t, want, d.OpenatMechanism)

			code, out, _ = runCLI(t, "doctor")
			require.Equal(t, 0, code)
			assert.Contains(t, out, fmt.Sprintf("openat2:        %v (lookups use %s)", tc.emulate == "", want))
		})
	}
}

// TestDoctorVerdict: doctor's first line says which layer a run here gets
// and why, and agrees with the default run's report, in each mode: as
// inherited, under Docker's profile (ns=EPERM: Landlock only, namespaces
// refused with EPERM) and without Landlock (landlock=ENOSYS: path-check
// only, ENOSYS). Checked red: doctor printed no verdict.
func TestDoctorVerdict(t *testing.T) {
	for _, tc := range []struct{ name, emulate string }{
		{"inherited", ""},
		{"ns=EPERM", "ns=EPERM"},
		{"landlock=ENOSYS", "landlock=ENOSYS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var env []string
			if tc.emulate != "" {
				env = append(env, kerneltest.EnvEmulate+"="+tc.emulate)
			}
			if !kerneltest.RunInSubprocess(t, env...) {
				return
			}
			t.Chdir(t.TempDir())
			code, out, stderr := runCLI(t, "doctor", "--json")
			require.Equal(t, 0, code, stderr)
			var d doctorReport
			require.NoError(t, json.Unmarshal([]byte(out), &d), out)
			code, text, _ := runCLI(t, "doctor")
			require.Equal(t, 0, code)
			first, _, _ := strings.Cut(text, "\n")
			assert.Equal(t, "landjail doctor: "+d.Verdict, first)

			lookups := "openat2)"
			if _, blocked := kerneltest.Blocked(kerneltest.FeatureOpenat2); blocked || !kernel.Openat2Supported() {
				lookups = "no openat2: lookups by O_NOFOLLOW walk)"
			}
			if errno, blocked := kerneltest.Blocked(kerneltest.FeatureLandlock); blocked || kernel.LandlockABI() == 0 {
				assert.True(t, strings.HasPrefix(first, "landjail doctor: this host gives path-check only (no usable Landlock: "), first)
				if blocked {
					assert.Contains(t, first, unix.ErrnoName(errno)+"; ")
				}
				assert.Contains(t, first, "not contained")
				return
			}
			abi := fmt.Sprintf("Landlock ABI %d, ", kernel.LandlockABI())
			if kerneltest.ExpectNamespaces(t, nsview.Probe()) {
				assert.Equal(t, "landjail doctor: this host gives the namespace layer (root, namespaces allowed, "+abi+lookups, first)
				return
			}
			errno, _ := kerneltest.Blocked(kerneltest.FeatureNamespaces)
			assert.True(t, strings.HasPrefix(first, "landjail doctor: this host gives Landlock only ("+abi+strings.TrimSuffix(lookups, ")")+"; namespaces refused: "), first)
			assert.Contains(t, first, errno.Error())
		})
	}
}

// TestDoctorPrivateDirs: doctor counts the private HOMEs and TMPDIRs
// kept between runs and says what landjail gc would remove.
func TestDoctorPrivateDirs(t *testing.T) {
	base := wsDir(t)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	t.Setenv("TMPDIR", base)
	old := filepath.Join(base, "cache", "landjail", "home", "0123456789abcdef")
	require.NoError(t, os.MkdirAll(old, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(old, "f"), make([]byte, 1<<20), 0o600))
	past := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(old, past, past))
	require.NoError(t, os.Mkdir(filepath.Join(base, "landjail-42"), 0o700)) // recent
	t.Chdir(base)
	code, out, stderr := runCLI(t, "doctor")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "private dirs:   2 private HOMEs and TMPDIRs (1.0 MiB); 1 unused for over 24h0m0s (1.0 MiB): landjail gc removes them\n")
}
