package mcpserver_test

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/mcpserver"
	"github.com/landjail/landjail/tools"
)

const toolArgsFile = "../testdata/toolargs.toml"

// toolArgsTable is testdata/toolargs.toml.
type toolArgsTable struct {
	Env struct {
		Tree    []string          `toml:"tree"`
		Outside []string          `toml:"outside"`
		Policy  attacktest.Policy `toml:"policy"`
	} `toml:"env"`
	Schemas map[string]string `toml:"schemas"`
	Cases   []struct {
		Name    string  `toml:"name"`
		Why     string  `toml:"why"`
		Schema  string  `toml:"schema"`
		Args    string  `toml:"args"`
		Access  string  `toml:"access"`
		Expect  string  `toml:"expect"`
		Pointer *string `toml:"pointer"`
		Home    string  `toml:"home"`
	} `toml:"case"`
}

// toolArgsWords maps the table's expectations to errors.
var toolArgsWords = map[string]error{
	"outside":   jail.ErrOutsideWorkspace,
	"denied":    jail.ErrDenied,
	"readonly":  jail.ErrReadOnly,
	"invalid":   mcpserver.ErrInvalidToolArgs,
	"badschema": mcpserver.ErrInvalidSchema,
	"badpath":   jail.ErrInvalidPath,
}

// toolArgsEnv builds the table's tree and policy.
func toolArgsEnv(t testing.TB) (*toolArgsTable, *attacktest.Env, *jail.Workspace) {
	var tab toolArgsTable
	md, err := toml.DecodeFile(toolArgsFile, &tab)
	require.NoError(t, err)
	require.Empty(t, md.Undecoded(), "unknown keys in %s", toolArgsFile)
	c := attacktest.Case{Name: "toolargs", Tree: tab.Env.Tree, Outside: tab.Env.Outside, Policy: tab.Env.Policy}
	e := attacktest.Build(t, &c)
	return &tab, e, attacktest.NewWorkspace(t, e, &c)
}

// TestCheckToolArgsTable runs every case of testdata/toolargs.toml.
func TestCheckToolArgsTable(t *testing.T) {
	tab, e, w := toolArgsEnv(t)
	require.GreaterOrEqual(t, len(tab.Cases), 40)
	seen := map[string]bool{}
	for _, c := range tab.Cases {
		require.False(t, seen[c.Name], "duplicate case %s", c.Name)
		seen[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			schema := c.Schema
			if s, ok := tab.Schemas[schema]; ok {
				schema = s
			}
			args := e.Sub(c.Args)
			home := c.Home
			if home == "" {
				home = "$OUT/home"
			}
			t.Setenv("HOME", e.Sub(home))
			a := map[string]jail.Access{"read": jail.Read, "write": jail.Write}[c.Access]
			require.NotZero(t, a, "access %q", c.Access)

			err := mcpserver.CheckToolArgs(w, []byte(e.Sub(schema)), []byte(args), a)
			if c.Expect == "ok" {
				assert.NoError(t, err, "args %s", args)
				return
			}
			want, ok := toolArgsWords[c.Expect]
			require.True(t, ok, "unknown expectation %q", c.Expect)
			assert.ErrorIs(t, err, want, "args %s", args)
			var tae *mcpserver.ToolArgError
			if c.Pointer == nil {
				if c.Expect != "invalid" && c.Expect != "badschema" {
					t.Fatalf("a refusal must name its pointer")
				}
				return
			}
			if assert.ErrorAs(t, err, &tae) {
				assert.Equal(t, *c.Pointer, tae.Pointer)
				assert.Contains(t, tae.Error(), "refused")
				if *c.Pointer != "" {
					assert.Contains(t, tae.Error(), *c.Pointer)
				}
			}
		})
	}
}

// TestCheckToolArgsLimits: nesting, size and check-count limits fail
// closed with ErrInvalidToolArgs; a schema $ref bomb terminates.
func TestCheckToolArgsLimits(t *testing.T) {
	_, _, w := toolArgsEnv(t)

	deep := strings.Repeat("[", 100) + `"/etc/passwd"` + strings.Repeat("]", 100)
	err := mcpserver.CheckToolArgs(w, nil, []byte(deep), jail.Read)
	assert.ErrorIs(t, err, mcpserver.ErrInvalidToolArgs)
	var tae *mcpserver.ToolArgError
	if assert.ErrorAs(t, err, &tae) {
		assert.Equal(t, strings.Repeat("/0", 64), tae.Pointer, "the place the limit was hit")
	}
	ok := strings.Repeat("[", 60) + `"f"` + strings.Repeat("]", 60)
	assert.NoError(t, mcpserver.CheckToolArgs(w, nil, []byte(ok), jail.Read))

	big := make([]byte, 16<<20+1)
	assert.ErrorIs(t, mcpserver.CheckToolArgs(w, nil, big, jail.Read), mcpserver.ErrInvalidToolArgs)
	assert.ErrorIs(t, mcpserver.CheckToolArgs(w, make([]byte, 1<<20+1), []byte("{}"), jail.Read), mcpserver.ErrInvalidToolArgs)
	assert.ErrorIs(t, mcpserver.CheckToolArgs(w, nil, []byte("{\"p\":\"\xff\"}"), jail.Read), mcpserver.ErrInvalidToolArgs, "not UTF-8")

	many := `{"paths":[` + strings.Repeat(`"f",`, 10001) + `"f"]}`
	assert.ErrorIs(t, mcpserver.CheckToolArgs(w, nil, []byte(many), jail.Read), mcpserver.ErrInvalidToolArgs)

	// A $ref bomb: each level refers to the next one twice.
	var sb strings.Builder
	sb.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"d` + strconv.Itoa(i) + `":{"anyOf":[{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"},{"$ref":"#/$defs/d` + strconv.Itoa(i+1) + `"}]}`)
	}
	sb.WriteString(`,"d40":{"format":"path"}}}`)
	err = mcpserver.CheckToolArgs(w, []byte(sb.String()), []byte(`"../out/secret"`), jail.Read)
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace, "the bomb collapses: each definition is expanded once")

	// Every ref a cycle, with the root in it.
	err = mcpserver.CheckToolArgs(w, []byte(`{"$ref":"#","items":{"$ref":"#"},"properties":{"a":{"$ref":"#"}}}`),
		[]byte(`{"a":[[{"a":"/etc/passwd"}]]}`), jail.Read)
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)
}

// TestCheckToolArgsErrorShape: the error carries the value and wraps
// Check's *fs.PathError, so errno reasons come through as well.
func TestCheckToolArgsErrorShape(t *testing.T) {
	_, e, w := toolArgsEnv(t)
	long := e.Out + "/" + strings.Repeat("x", 300)
	err := mcpserver.CheckToolArgs(w, nil, []byte(`{"path":"`+long+`"}`), jail.Read)
	var tae *mcpserver.ToolArgError
	require.ErrorAs(t, err, &tae)
	assert.Equal(t, long, tae.Value)
	assert.NotContains(t, tae.Error(), strconv.Quote(long), "the message quotes a shortened value")
	assert.Contains(t, tae.Error(), strconv.Quote(long[:200]+"..."))
	assert.ErrorIs(t, err, jail.ErrOutsideWorkspace)

	err = mcpserver.CheckToolArgs(w, nil, []byte(`{"path":"missing/../f"}`), jail.Read)
	assert.ErrorIs(t, err, syscall.ENOENT)
	assert.True(t, errors.As(err, &tae))
	assert.Equal(t, "/path", tae.Pointer)

	// RejectAbsolute policies refuse absolute values, even inside.
	ra, err := jail.New(e.Root, jail.RejectAbsolute())
	require.NoError(t, err)
	defer ra.Close()
	assert.ErrorIs(t, mcpserver.CheckToolArgs(ra, nil, []byte(`{"q":"`+e.Root+`/f"}`), jail.Read), jail.ErrAbsolutePath)
	assert.NoError(t, mcpserver.CheckToolArgs(ra, nil, []byte(`{"path":"f"}`), jail.Read))
}

// BenchmarkCheckToolArgs measures typical calls: a write of a 64 KiB file
// (path checked, content skipped as free text), 20 files through a $ref
// schema, and 1000 heuristic absolute strings in an unknown field; each
// with the schema compiled per call (CheckToolArgs) and once (-compiled,
// as the server does).
func BenchmarkCheckToolArgs(b *testing.B) {
	tab, e, w := toolArgsEnv(b)
	content, _ := json.Marshal(strings.Repeat("// line of Go code /x/y\n", 64<<10/24))
	files := make([]string, 20)
	for i := range files {
		files[i] = `{"path":"sub/f` + strconv.Itoa(i) + `.go","content":"x"}`
	}
	abs := make([]string, 1000)
	for i := range abs {
		abs[i] = strconv.Quote(e.Root + "/sub/a.go")
	}
	for _, bc := range []struct{ name, schema, args string }{
		{"write-64KiB", tab.Schemas["write"], `{"path":"sub/new.go","content":` + string(content) + `}`},
		{"multi-20-files-ref", tab.Schemas["multi"], `{"files":[` + strings.Join(files, ",") + `]}`},
		{"heuristic-1000-abs", "", `{"q":[` + strings.Join(abs, ",") + `]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.args)))
			for b.Loop() {
				if err := mcpserver.CheckToolArgs(w, []byte(bc.schema), []byte(bc.args), jail.Write); err != nil {
					b.Fatal(err)
				}
			}
		})
		// What the server does: the schema compiled once, in New.
		b.Run(bc.name+"-compiled", func(b *testing.B) {
			ts, err := mcpserver.CompileToolSchema([]byte(bc.schema))
			require.NoError(b, err)
			b.SetBytes(int64(len(bc.args)))
			for b.Loop() {
				if err := ts.Check(w, []byte(bc.args), jail.Write); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDefinitionsCompile: every tool's schema compiles for the guard (a
// schema it refused would make the server refuse every call of the
// tool), and the compiled guard refuses a path outside the workspace in
// each tool's path arguments.
func TestDefinitionsCompile(t *testing.T) {
	_, e, w := toolArgsEnv(t)
	for _, d := range (&tools.Toolkit{WS: w}).Definitions() {
		ts, err := mcpserver.CompileToolSchema(d.InputSchema)
		require.NoError(t, err, d.Name)
		for _, p := range d.PathArgs {
			args, _ := json.Marshal(map[string]string{p: e.Out + "/secret"})
			assert.ErrorIs(t, ts.Check(w, args, d.Access), jail.ErrOutsideWorkspace, "%s.%s", d.Name, p)
		}
	}
}

// TestSchemaErrorShape: a refused schema is a *SchemaError naming the
// place, matching ErrInvalidSchema and ErrInvalidToolArgs.
func TestSchemaErrorShape(t *testing.T) {
	_, err := mcpserver.CompileToolSchema([]byte(`{"properties":{"x":{"patternProperties":{"` + strings.Repeat("a", 1025) + `":{}}}}}`))
	var se *mcpserver.SchemaError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "/properties/x/patternProperties", se.Pointer)
	assert.ErrorIs(t, err, mcpserver.ErrInvalidSchema)
	assert.ErrorIs(t, err, mcpserver.ErrInvalidToolArgs)
	assert.Contains(t, err.Error(), "at /properties/x/patternProperties: a patternProperties regexp is 1025 bytes, more than 1024")

	// jsonschema-go's own refusals carry its message.
	_, err = mcpserver.CompileToolSchema([]byte(`{"properties":{"x":{"$ref":"#/$defs/missing"}}}`))
	require.ErrorAs(t, err, &se)
	assert.Contains(t, err.Error(), "missing")

	_, err = mcpserver.CompileToolSchema([]byte(strings.Repeat(`{"items":`, 300) + `{}` + strings.Repeat(`}`, 300)))
	assert.ErrorIs(t, err, mcpserver.ErrInvalidSchema, "nested deeper than 256")
	ts, err := mcpserver.CompileToolSchema([]byte(" null "))
	require.NoError(t, err, "null is no schema")
	assert.NotNil(t, ts)
}
