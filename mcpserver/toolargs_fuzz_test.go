package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/landjail/landjail/internal/attacktest"
	"github.com/landjail/landjail/jail"
	"github.com/landjail/landjail/mcpserver"
)

// fuzzFreeText mirrors the free-text property names CheckToolArgs
// exempts from its heuristic (documented on CheckToolArgs). If the
// implementation exempted a name missing here, the fuzzer would find a
// "/..." value it let through: this list can only make the test weaker,
// never hide an exemption.
var fuzzFreeText = map[string]bool{
	"content": true, "contents": true, "text": true, "body": true, "data": true,
	"message": true, "prompt": true, "description": true, "title": true, "comment": true,
	"command": true, "cmd": true, "script": true, "code": true, "patch": true, "diff": true,
	"pattern": true, "regex": true, "regexp": true, "query": true, "search": true, "replacement": true,
	"oldstring": true, "newstring": true, "oldstr": true, "newstr": true, "oldtext": true, "newtext": true,
	"input": true, "stdin": true,
}

func fuzzIsFreeText(name string) bool {
	n := strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(name))
	return fuzzFreeText[n]
}

// fuzzStrings collects the strings of a valid JSON document that
// CheckToolArgs must have checked: object keys, and values not under a
// free-text property name (array items inherit their array's name).
func fuzzStrings(t *testing.T, args []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(args))
	var out []string
	var walk func(free bool) error
	walk = func(free bool) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch v := tok.(type) {
		case string:
			if !free {
				out = append(out, v)
			}
		case json.Delim:
			if v == '[' {
				for dec.More() {
					if err := walk(free); err != nil {
						return err
					}
				}
			} else {
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					key := k.(string)
					out = append(out, key)
					if err := walk(fuzzIsFreeText(key)); err != nil {
						return err
					}
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(false); err != nil && err != io.EOF {
		t.Fatalf("cannot happen: walking valid JSON %q: %v", args, err)
	}
	return out
}

var fuzzPseudo = map[string]bool{"/dev/null": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true}

// FuzzCheckToolArgs: on attacktest.FuzzCase's tree (symlinks in, out,
// dangling, looping, into /proc, a read-only allowed root $OUT/ro, a
// denied .env) with $HOME outside, for any schema and arguments,
// CheckToolArgs never panics; arguments that are not UTF-8 JSON fail
// with ErrInvalidToolArgs; and when it returns nil, every checked string
// (object keys and values outside free-text fields) that starts with "/"
// (other than the pseudo-paths) resolves inside the policy, none is a
// "~" home path or starts with "\", and every plain "file:///..." URI
// resolves inside. Seeds: every case of testdata/toolargs.toml plus
// testdata/fuzz/FuzzCheckToolArgs.
func FuzzCheckToolArgs(f *testing.F) {
	c := attacktest.FuzzCase
	e := attacktest.Build(f, &c)
	w := attacktest.NewWorkspace(f, e, &c)
	f.Setenv("HOME", filepath.Join(e.Out, "home"))
	ro := filepath.Join(e.Out, "ro")

	var tab toolArgsTable
	_, err := toml.DecodeFile(toolArgsFile, &tab)
	require.NoError(f, err)
	for _, tc := range tab.Cases {
		schema := tc.Schema
		if s, ok := tab.Schemas[schema]; ok {
			schema = s
		}
		f.Add(e.Sub(schema), e.Sub(tc.Args))
	}

	f.Fuzz(func(t *testing.T, schema, args string) {
		err := mcpserver.CheckToolArgs(w, []byte(schema), []byte(args), jail.Read)
		valid := utf8.ValidString(args) && (strings.TrimSpace(args) == "" || json.Valid([]byte(args)))
		if !valid {
			if !errors.Is(err, mcpserver.ErrInvalidToolArgs) {
				t.Fatalf("invalid arguments %q: got %v, want ErrInvalidToolArgs", args, err)
			}
			return
		}
		if err != nil {
			var tae *mcpserver.ToolArgError
			if !errors.As(err, &tae) && !errors.Is(err, mcpserver.ErrInvalidToolArgs) {
				t.Fatalf("error %v is neither a *ToolArgError nor ErrInvalidToolArgs", err)
			}
			return
		}
		if strings.TrimSpace(args) == "" {
			return
		}
		inside := func(s string) bool {
			got, err := w.Resolve(s)
			return err == nil && (attacktest.Within(got, e.Root) || attacktest.Within(got, ro))
		}
		for _, s := range fuzzStrings(t, []byte(args)) {
			switch {
			case strings.HasPrefix(s, "/") && !fuzzPseudo[s]:
				if !inside(s) {
					t.Fatalf("CheckToolArgs(%q, %q) = nil, but %q is not inside the policy", schema, args, s)
				}
			case s == "~" || strings.HasPrefix(s, "~/") || strings.HasPrefix(s, `\`):
				t.Fatalf("CheckToolArgs(%q, %q) = nil, but lets %q through", schema, args, s)
			case len(s) > 8 && strings.EqualFold(s[:8], "file:///") && !strings.ContainsAny(s, "%?#"):
				if p := s[7:]; !fuzzPseudo[p] && !inside(p) {
					t.Fatalf("CheckToolArgs(%q, %q) = nil, but %q is not inside the policy", schema, args, s)
				}
			}
		}
	})
}
