package tools_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/tools"
)

// allocated returns the bytes the Go heap allocated while f ran.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestFileSizeCap: `truncate -s 50G f; edit_file f` drove
// the unconfined MCP server to 24 GB and the OOM killer (edit_file read
// the whole file with io.ReadAll). Sparse files stand in for big ones:
// every row must be refused (or, for grep, skipped) with ErrFileTooLarge
// naming the size, the cap and the flag, and allocate far less than the
// file. The 8 MiB rows with a 1 MiB cap are the ones to run against the
// old code (read_file called the file binary, edit_file read all of it);
// the 50 GiB rows would OOM the old code.
func TestFileSizeCap(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name  string
		tool  string
		size  int64
		limit int64 // Limits.FileBytes and GrepFileBytes; 0: the default
		text  bool  // fill the first MiB with text (else all zeros)
	}{
		{"read-50GiB-default-cap", tools.ToolReadFile, 50 * gib, 0, false},
		{"read-50GiB-text-head", tools.ToolReadFile, 50 * gib, 0, true},
		{"edit-50GiB-default-cap", tools.ToolEditFile, 50 * gib, 0, true},
		{"read-8MiB-1MiB-cap", tools.ToolReadFile, 8 << 20, 1 << 20, true},
		{"edit-8MiB-1MiB-cap", tools.ToolEditFile, 8 << 20, 1 << 20, true},
		{"edit-cap-plus-one", tools.ToolEditFile, 1<<20 + 1, 1 << 20, true},
		{"grep-50GiB-default-cap", tools.ToolGrep, 50 * gib, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, nil)
			p := filepath.Join(e.root, "big")
			f, err := os.Create(p)
			require.NoError(t, err)
			if tc.text {
				_, err = f.WriteString(strings.Repeat("needle line of text\n", 1<<20/20))
				require.NoError(t, err)
			}
			require.NoError(t, f.Truncate(tc.size))
			require.NoError(t, f.Close())
			e.k.Limits.FileBytes = tc.limit
			e.k.Limits.GrepFileBytes = tc.limit
			limit := tc.limit
			if limit == 0 {
				limit = tools.DefaultLimits.FileBytes
			}
			// Mark it read so edit_file gets past the read-before-write check.
			rf, err := e.ws.Open("big")
			require.NoError(t, err)
			rf.Close()

			var err2 error
			var res tools.Result
			n := allocated(func() {
				switch tc.tool {
				case tools.ToolReadFile:
					res, err2 = e.k.ReadFile(tools.ReadFileArgs{Path: "big"})
				case tools.ToolEditFile:
					res, err2 = e.k.EditFile(tools.EditFileArgs{Path: "big", OldString: "needle", NewString: "pin", ReplaceAll: true})
				case tools.ToolGrep:
					res, err2 = e.k.Grep(tools.GrepArgs{Pattern: "needle"})
				}
			})
			assert.Less(t, n, uint64(limit), "allocated %d bytes for a %d-byte file", n, tc.size)
			if tc.tool == tools.ToolGrep {
				require.NoError(t, err2)
				g := res.(*tools.GrepResult)
				assert.Equal(t, 1, g.SkippedLarge)
				assert.Empty(t, g.Matches)
				assert.Contains(t, g.String(), "1 files skipped as larger than the size cap (--max-file-size)")
				return
			}
			assertToolErr(t, err2, tools.ErrFileTooLarge, "--max-file-size",
				"the file is "+strconv.FormatInt(tc.size, 10)+" bytes", "cap of "+strconv.FormatInt(limit, 10)+" bytes")
			fi, err := os.Stat(p)
			require.NoError(t, err)
			assert.Equal(t, tc.size, fi.Size(), "the file is left as it was")
		})
	}
}

// TestFileSizeCapLyingSize: a /proc file reports size 0 whatever it
// holds, so the fstat check passes; the read itself must stop at the cap
// (the same path catches a file that grows between fstat and read).
// read_file refuses, grep searches up to the cap and says so.
func TestFileSizeCapLyingSize(t *testing.T) {
	e := newEnv(t, nil, jail.WithAllowed("/proc", jail.ReadOnly))
	name := "/proc/self/maps"
	fi, err := os.Stat(name)
	require.NoError(t, err)
	require.Zero(t, fi.Size(), "the premise: %s reports size 0", name)
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Greater(t, len(data), 200, "the premise: %s holds more than the cap", name)

	e.k.Limits.FileBytes = 100
	e.k.Limits.GrepFileBytes = 100
	_, err = e.k.ReadFile(tools.ReadFileArgs{Path: name})
	assertToolErr(t, err, tools.ErrFileTooLarge, "more than the cap of 100 bytes although its size said 0", "--max-file-size")

	g, err := e.k.Grep(tools.GrepArgs{Pattern: ".", Path: name})
	require.NoError(t, err)
	assert.Equal(t, 1, g.CutLarge)
	assert.Contains(t, g.String(), "1 files searched only up to the size cap")
	total := 0
	for _, m := range g.Matches {
		total += len(m.Text) + 1
	}
	assert.LessOrEqual(t, total, 101, "grep read no more than the cap")

	// Unconfined control: without the cap the same calls read it all.
	e.k.Limits = tools.Limits{}
	r, err := e.k.ReadFile(tools.ReadFileArgs{Path: name})
	require.NoError(t, err)
	assert.Greater(t, r.TotalLines, 1)
}

// TestEditResultCap: edit_file with replace_all builds the new content
// at once, so a small file and a short new_string can ask for gigabytes
// (1 MiB of "a", each replaced by 4 KiB: 4 GiB). The result is refused
// over Limits.FileBytes before it is built; the file is left alone.
func TestEditResultCap(t *testing.T) {
	e := newEnv(t, []string{"a.txt=" + strings.Repeat("a", 1<<20)})
	_, err := e.k.ReadFile(tools.ReadFileArgs{Path: "a.txt"})
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		args  tools.EditFileArgs
		limit int64
		ok    bool
	}{
		{"replace-all-4GiB", tools.EditFileArgs{Path: "a.txt", OldString: "a", NewString: strings.Repeat("b", 4096), ReplaceAll: true}, 0, false},
		{"replace-all-just-over", tools.EditFileArgs{Path: "a.txt", OldString: "a", NewString: "bb", ReplaceAll: true}, 2<<20 - 1, false},
		{"replace-all-exactly-cap", tools.EditFileArgs{Path: "a.txt", OldString: "a", NewString: "bb", ReplaceAll: true}, 2 << 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.k.Limits.FileBytes = tc.limit
			var err error
			n := allocated(func() { _, err = e.k.EditFile(tc.args) })
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, strings.Repeat("bb", 1<<20), e.read(t, "a.txt"))
				return
			}
			assertToolErr(t, err, tools.ErrFileTooLarge, "the edited file would be", "--max-file-size")
			assert.Less(t, n, uint64(16<<20), "refused before the result was built")
			assert.Equal(t, 1<<20, len(e.read(t, "a.txt")))
		})
	}
}

// TestWriteContentCap: write_file accepted content larger than the cap
// (12 MiB with the 10 MiB default, found by the red-team review); the
// content is now refused before anything is written, and content at the
// cap is written.
func TestWriteContentCap(t *testing.T) {
	e := newEnv(t, []string{"keep.txt=old"})
	e.k.Limits.FileBytes = 1 << 20
	_, err := e.k.WriteFile(tools.WriteFileArgs{Path: "big.txt", Content: strings.Repeat("x", 1<<20+1)})
	assertToolErr(t, err, tools.ErrFileTooLarge, "the content is", "--max-file-size")
	_, statErr := os.Stat(filepath.Join(e.root, "big.txt"))
	assert.ErrorIs(t, statErr, os.ErrNotExist, "nothing written")
	_, err = e.k.WriteFile(tools.WriteFileArgs{Path: "big.txt", Content: strings.Repeat("x", 1<<20)})
	require.NoError(t, err)
	assert.Len(t, e.read(t, "big.txt"), 1<<20)
}
