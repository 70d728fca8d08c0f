// Package attacktest loads the adversarial path corpus in testdata/*.toml
// and builds each case's directory trees, so that every layer (jail.Resolve,
// the Workspace file operations, openat.Root) runs the same cases.
//
// A case file holds [[case]] tables; see testdata/attacks.toml for the
// fields. Tree specs are lists of lines in a tiny language:
//
//	"d/"               a directory
//	"f"                an empty file
//	"f=text"           a file holding text
//	"a => target"      a symlink; target verbatim (placeholders substituted)
//	"h == $OUT/secret" a hard link to an existing file (relative targets are
//	                   relative to the tree's own directory)
//
// Names may contain \xNN escapes for bytes that are not UTF-8. Parent
// directories are created as needed. Placeholders: $ROOT (the workspace
// root), $OUT (a sibling directory outside it), $ROOT-evil (a prefix
// sibling: $ROOT with "-evil" appended), $ROOTFD and $OUTFD (numbers of fds
// the test process holds open on $ROOT and on $OUT/secret, for
// /proc/self/fd/N cases).
package attacktest

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
)

// Layer names, as used in Case.Skip keys and Case.OutsideChanges.
const (
	LayerResolve   = "resolve"
	LayerWorkspace = "workspace"
	LayerOpenat    = "openat"
)

// Ops a case may ask for.
var Ops = []string{"open", "create", "write", "mkdir", "remove", "rename", "stat", "lstat"}

// Case is one adversarial input with the tree it runs in and the expected
// outcome per layer.
type Case struct {
	Name    string   `toml:"name"`
	Why     string   `toml:"why"`
	Seed    string   `toml:"seed"`    // the seed document a row comes from, if any
	Tree    []string `toml:"tree"`    // built in $ROOT
	Outside []string `toml:"outside"` // built in $OUT
	Evil    []string `toml:"evil"`    // built in $ROOT-evil
	Mounts  []Mount  `toml:"mounts"`  // bind mounts, made after the trees
	// NeedsRoot: the case needs CAP_SYS_ADMIN (bind mounts); skipped
	// otherwise, failed instead when LANDJAIL_REQUIRE_KERNEL=1.
	NeedsRoot bool   `toml:"needs_root"`
	Policy    Policy `toml:"policy"`

	Input       string  `toml:"input"`
	InputHex    string  `toml:"input_hex"`    // replaces Input: hex bytes (non-UTF-8, NUL)
	InputRepeat *Repeat `toml:"input_repeat"` // prepended to Input: Unit repeated Count times
	Input2      string  `toml:"input2"`       // rename's new name
	Op          string  `toml:"op"`

	// Expected outcomes: "ok" (or "ok:<path>" for resolve, relative to
	// $ROOT unless it starts with a placeholder) or an error word of the
	// vocabulary (see ExpectErr).
	Resolve   string `toml:"resolve"`
	Workspace string `toml:"workspace"`
	Openat    string `toml:"openat"`
	// Skip gives, per layer, why the layer has no expectation.
	Skip map[string]string `toml:"skip"`

	// Content, when set, is what an "open" that succeeds must read.
	Content *string `toml:"content"`
	// After lists spec lines that must hold after a successful op (any
	// layer whose expectation is "ok"); "!name" means name must not exist.
	// Names are relative to $ROOT unless they start with a placeholder.
	After []string `toml:"after"`
	// AfterOpenat replaces After for the openat layer when set (its
	// WriteFile replaces a symlink at the name instead of writing through).
	AfterOpenat []string `toml:"after_openat"`
	// OutsideChanges lists the layers for which a successful op may change
	// $OUT or $ROOT-evil (an allowed read-write root, or a documented
	// limitation such as hard links). For every other layer both must be
	// byte-for-byte unchanged, and a failed op must change nothing at all.
	OutsideChanges []string `toml:"outside_changes"`
}

// Mount is a bind mount of Src (placeholders substituted) on Dst
// (relative to $ROOT).
type Mount struct {
	Src string `toml:"src"`
	Dst string `toml:"dst"`
}

// Repeat describes an overlong input prefix.
type Repeat struct {
	Unit  string `toml:"unit"`
	Count int    `toml:"count"`
}

// Policy is the jail policy of a case.
type Policy struct {
	Allowed            []Allowed `toml:"allowed"`
	Deny               []string  `toml:"deny"`
	RejectAbsolute     bool      `toml:"reject_absolute"`
	Unrestricted       bool      `toml:"unrestricted"`
	NoXDev             bool      `toml:"no_xdev"`
	NoHardlinkedWrites bool      `toml:"no_hardlinked_writes"`
	Tracker            bool      `toml:"tracker"`
}

// Allowed is an extra root: Path (placeholders substituted) with Mode
// "ro", "rox" or "rw".
type Allowed struct {
	Path string `toml:"path"`
	Mode string `toml:"mode"`
}

// Expect returns the expectation of layer, and whether there is one.
func (c *Case) Expect(layer string) (string, bool) {
	var s string
	switch layer {
	case LayerResolve:
		s = c.Resolve
	case LayerWorkspace:
		s = c.Workspace
	case LayerOpenat:
		s = c.Openat
	}
	return s, s != ""
}

// AfterFor returns the After lines for layer.
func (c *Case) AfterFor(layer string) []string {
	if layer == LayerOpenat && c.AfterOpenat != nil {
		return c.AfterOpenat
	}
	return c.After
}

// MayChangeOutside reports whether layer's successful op may change $OUT.
func (c *Case) MayChangeOutside(layer string) bool {
	return slices.Contains(c.OutsideChanges, layer)
}

// RawInput returns the input bytes before placeholders are substituted.
func (c *Case) RawInput(t testing.TB) string {
	in := c.Input
	if c.InputHex != "" {
		b, err := hex.DecodeString(c.InputHex)
		require.NoError(t, err, "case %s: input_hex", c.Name)
		in = string(b)
	}
	if c.InputRepeat != nil {
		in = strings.Repeat(c.InputRepeat.Unit, c.InputRepeat.Count) + in
	}
	return in
}

type file struct {
	// Skip gives file-wide reasons for layers no case of the file
	// expects anything of (a case may still set an expectation).
	Skip map[string]string `toml:"skip"`
	Case []Case            `toml:"case"`
}

// Load reads a case file and validates it: unique names, a known op, and
// for each of the three layers either an expectation or a reason in skip.
// A case with no expectation at all, or a malformed one, fails the test.
func Load(t testing.TB, path string) []Case {
	t.Helper()
	var f file
	md, err := toml.DecodeFile(path, &f)
	require.NoError(t, err, "decode %s", path)
	if und := md.Undecoded(); len(und) > 0 {
		require.Failf(t, "unknown keys", "%s: %v", path, und)
	}
	require.NotEmpty(t, f.Case, "%s holds no [[case]]", path)
	seen := map[string]bool{}
	for i := range f.Case {
		c := &f.Case[i]
		require.NotEmpty(t, c.Name, "%s: case #%d has no name", path, i)
		require.False(t, seen[c.Name], "%s: duplicate case %q", path, c.Name)
		seen[c.Name] = true
		require.NotEmpty(t, c.Why, "case %s: no why", c.Name)
		require.Contains(t, Ops, c.Op, "case %s: op", c.Name)
		if c.Op == "rename" {
			require.NotEmpty(t, c.Input2, "case %s: rename needs input2", c.Name)
		}
		for _, l := range []string{LayerResolve, LayerWorkspace, LayerOpenat} {
			e, ok := c.Expect(l)
			if !ok && c.Skip[l] == "" && f.Skip[l] != "" {
				if c.Skip == nil {
					c.Skip = map[string]string{}
				}
				c.Skip[l] = f.Skip[l]
			}
			reason := c.Skip[l]
			require.True(t, ok != (reason != ""), "case %s: layer %s needs exactly one of an expectation or a skip reason", c.Name, l)
			if ok {
				require.NoError(t, checkWord(l, e), "case %s", c.Name)
			}
		}
		for k := range c.Skip {
			require.Contains(t, []string{LayerResolve, LayerWorkspace, LayerOpenat}, k, "case %s: skip key", c.Name)
		}
		for _, l := range c.OutsideChanges {
			require.Contains(t, []string{LayerWorkspace, LayerOpenat}, l, "case %s: outside_changes", c.Name)
		}
	}
	return f.Case
}

func checkWord(layer, e string) error {
	if e == "ok" || (layer == LayerResolve && strings.HasPrefix(e, "ok:")) {
		if layer == LayerResolve && e == "ok" {
			return fmt.Errorf("resolve expectation must be ok:<path>, not bare ok")
		}
		return nil
	}
	if _, ok := vocabulary()[e]; !ok {
		return fmt.Errorf("unknown expectation %q for layer %s", e, layer)
	}
	return nil
}

// Unescape turns \xNN escapes into bytes (the corpus's way to spell names
// that are not UTF-8, since TOML strings must be).
func Unescape(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if v, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
