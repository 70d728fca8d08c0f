package attacktest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const corpus = "../../testdata/attacks.toml"

func TestCorpusLoadsAndBuilds(t *testing.T) {
	cases := Load(t, corpus)
	assert.GreaterOrEqual(t, len(cases), 60, "the corpus must keep at least 60 cases")
	for i := range cases {
		c := &cases[i]
		if len(c.Mounts) > 0 {
			continue // building them needs privilege; the layer tests do it
		}
		t.Run(c.Name, func(t *testing.T) {
			e := Build(t, c)
			in := e.Input(t, c)
			assert.NotContains(t, in, "$ROOT", "placeholder left in input")
			assert.NotContains(t, in, "$OUT", "placeholder left in input")
			if c.Resolve != "" && len(c.Resolve) > 3 && c.Resolve[:3] == "ok:" {
				assert.True(t, filepath.IsAbs(e.Path(c.Resolve[3:])))
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	for s, want := range map[string]Line{
		"d/":              {Name: "d", Kind: 'd'},
		"f":               {Name: "f", Kind: 'f'},
		"f=a=b":           {Name: "f", Kind: 'f', Content: "a=b", HasBody: true},
		"f=":              {Name: "f", Kind: 'f', HasBody: true},
		"a => $OUT/x":     {Name: "a", Kind: 'l', Target: "$OUT/x"},
		"h == $OUT/x":     {Name: "h", Kind: 'h', Target: "$OUT/x"},
		"!gone":           {Name: "gone", Kind: '!'},
		`caf\xe9=LATIN1`:  {Name: "caf\xe9", Kind: 'f', Content: "LATIN1", HasBody: true},
		`\xff\xfe => ../`: {Name: "\xff\xfe", Kind: 'l', Target: "../"},
	} {
		assert.Equal(t, want, ParseLine(s), "%q", s)
	}
}

func TestUnescape(t *testing.T) {
	assert.Equal(t, "a\xffb", Unescape(`a\xffb`))
	assert.Equal(t, `a\xzz`, Unescape(`a\xzz`))
	assert.Equal(t, `tail\x`, Unescape(`tail\x`))
	assert.Equal(t, `tail\xf`, Unescape(`tail\xf`))
	assert.Equal(t, "\xf0", Unescape(`\xf0`))
}

func TestBuildTreeKinds(t *testing.T) {
	c := &Case{
		Name:    "kinds",
		Tree:    []string{"d/e/", "f=x", "l => $OUT/secret", "h == $OUT/secret", "fd => /proc/self/fd/$OUTFD"},
		Outside: []string{"secret=S"},
	}
	e := Build(t, c)
	CheckAfter(t, e, []string{"d/e/", "f=x", "l => $OUT/secret", "h=S", "$OUT/secret=S", "!nope"})
	a, err := os.Stat(filepath.Join(e.Root, "h"))
	require.NoError(t, err)
	b, err := os.Stat(filepath.Join(e.Out, "secret"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(a, b), "h must be a hard link of $OUT/secret")
	tgt, err := os.Readlink(filepath.Join(e.Root, "fd"))
	require.NoError(t, err)
	fdTarget, err := os.Readlink(tgt)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(e.Out, "secret"), fdTarget)
	snap := Snapshot(t, e.Base)
	assert.Equal(t, "f:S", snap["out/secret"])
	assert.Equal(t, "l:"+e.Out+"/secret", snap["ws/l"])
	assert.Equal(t, "d", snap["ws/d/e"])
}

func TestCheckWord(t *testing.T) {
	assert.Error(t, checkWord(LayerWorkspace, "no-such-word"))
	assert.Error(t, checkWord(LayerResolve, "ok"))
	assert.NoError(t, checkWord(LayerResolve, "ok:f"))
	assert.NoError(t, checkWord(LayerOpenat, "escapes"))
}
