package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Limits of CompileToolSchema.
const (
	// maxToolSchemaBytes bounds the schema; real tool schemas are a few KiB.
	maxToolSchemaBytes = 1 << 20
	// maxSchemaDepth bounds the nesting of the schema's JSON (the
	// jsonschema package walks it recursively); real schemas nest a
	// dozen levels.
	maxSchemaDepth = 256
	// maxPatternLen bounds a patternProperties regexp (Go's regexp is
	// linear-time, but compiling a huge one is not free).
	maxPatternLen = 1024
)

// SchemaError is the error for a tool input schema the guard refuses
// (see CompileToolSchema). errors.Is matches ErrInvalidSchema and
// ErrInvalidToolArgs; Unwrap returns the cause.
type SchemaError struct {
	// Pointer is the RFC 6901 JSON pointer of the offending subschema in
	// the schema ("" for the whole schema).
	Pointer string
	// Err is why: the jsonschema package's error, or this package's.
	Err error
}

// Error names the place and the reason.
func (e *SchemaError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("%v: at %s: %v", ErrInvalidSchema, p, e.Err)
}

// Unwrap returns Err.
func (e *SchemaError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidSchema or ErrInvalidToolArgs.
func (e *SchemaError) Is(target error) bool {
	return target == ErrInvalidSchema || target == ErrInvalidToolArgs
}

// ToolSchema is a tool's input schema compiled for the argument guard:
// parsed once, every reference resolved to the subschema it names (by
// pointer identity), every patternProperties regexp compiled. It is
// immutable and safe for concurrent use.
type ToolSchema struct {
	root     *jsonschema.Schema                          // nil: no schema
	refs     map[*jsonschema.Schema][]*jsonschema.Schema // $ref, $dynamicRef, $recursiveRef targets
	patterns map[*jsonschema.Schema][]compiledPattern    // patternProperties, in key order
}

type compiledPattern struct {
	re     *regexp.Regexp
	schema *jsonschema.Schema
}

// CompileToolSchema parses schema (a tool's JSON Schema, its MCP
// inputSchema; empty or "null" means none) for CheckToolArgs and
// ToolSchema.Check. It parses it with github.com/google/jsonschema-go
// and refuses, with a *SchemaError (errors.Is ErrInvalidSchema and
// ErrInvalidToolArgs), a schema the guard could only follow in part:
//
//   - more than 1 MiB, not UTF-8, not JSON, nested deeper than 256;
//   - not a schema for jsonschema-go (Schema.UnmarshalJSON, then
//     Schema.Resolve: a keyword with a value of the wrong type, a regexp
//     in pattern or patternProperties that does not compile, a $ref,
//     $dynamicRef or $anchor that does not resolve, a remote $ref: no
//     schema is fetched);
//   - a patternProperties regexp longer than 1024 bytes;
//   - a reference this function cannot resolve to a subschema itself
//     (a JSON pointer into a place that holds no schema, a
//     $recursiveRef that is not a string).
//
// References are resolved against the base URI of the subschema that
// holds them ($id, RFC 3986), to JSON pointers or $anchor names in the
// schema; a $dynamicRef stands for its lexical target and every
// subschema with a matching $dynamicAnchor, so the guard never sees fewer
// path positions than a validator could.
func CompileToolSchema(schema []byte) (*ToolSchema, error) {
	if len(schema) > maxToolSchemaBytes {
		return nil, &SchemaError{Err: fmt.Errorf("schema is %d bytes, more than %d", len(schema), maxToolSchemaBytes)}
	}
	trimmed := bytes.TrimSpace(schema)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return &ToolSchema{}, nil
	}
	if !utf8.Valid(trimmed) {
		return nil, &SchemaError{Err: errors.New("schema is not UTF-8")}
	}
	if d := jsonDepth(trimmed); d > maxSchemaDepth {
		return nil, &SchemaError{Err: fmt.Errorf("schema nested deeper than %d", maxSchemaDepth)}
	}
	root, err := parseSchema(trimmed)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	ts := &ToolSchema{
		root:     root,
		refs:     map[*jsonschema.Schema][]*jsonschema.Schema{},
		patterns: map[*jsonschema.Schema][]compiledPattern{},
	}
	if err := ts.index(); err != nil {
		return nil, err
	}
	return ts, nil
}

// parseSchema unmarshals and resolves schema with jsonschema-go; a panic
// in it (it asserts internal invariants) is an error, not a crash.
func parseSchema(data []byte) (s *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("cannot happen: jsonschema panicked: %v", r)
		}
	}()
	s = new(jsonschema.Schema)
	if err := json.Unmarshal(data, s); err != nil {
		return nil, err
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, err
	}
	return s, nil
}

// resource is one schema resource enclosing a node: its URI and the
// node's JSON pointer from it.
type resource struct {
	uri, ptr string
}

// indexer collects where every subschema can be referred to.
type indexer struct {
	targets        map[string]*jsonschema.Schema   // "uri#pointer", "uri#anchor"
	dynamicAnchors map[string][]*jsonschema.Schema // $dynamicAnchor name
	bases          map[*jsonschema.Schema]*url.URL // each node's base URI
	pointers       map[*jsonschema.Schema]string   // each node's pointer from the root
	order          []*jsonschema.Schema            // document order
}

// index resolves every reference and compiles every patternProperties
// regexp of ts.root.
func (ts *ToolSchema) index() error {
	ix := &indexer{
		targets:        map[string]*jsonschema.Schema{},
		dynamicAnchors: map[string][]*jsonschema.Schema{},
		bases:          map[*jsonschema.Schema]*url.URL{},
		pointers:       map[*jsonschema.Schema]string{},
	}
	if err := ix.walk(ts.root, &url.URL{}, nil, ""); err != nil {
		return err
	}
	for _, s := range ix.order {
		ptr := ix.pointers[s]
		refs := []struct{ kw, ref string }{{"$ref", s.Ref}, {"$dynamicRef", s.DynamicRef}}
		if v, ok := s.Extra["$recursiveRef"]; ok {
			r, isString := v.(string)
			if !isString || r == "" {
				return &SchemaError{Pointer: ptr, Err: errors.New("$recursiveRef is not a non-empty string")}
			}
			refs = append(refs, struct{ kw, ref string }{"$recursiveRef", r})
		}
		for _, r := range refs {
			if r.ref == "" {
				continue
			}
			targets, err := ix.resolve(s, r.kw, r.ref)
			if err != nil {
				return &SchemaError{Pointer: ptr, Err: err}
			}
			ts.refs[s] = append(ts.refs[s], targets...)
		}
		for _, pat := range sortedKeys(s.PatternProperties) {
			if len(pat) > maxPatternLen {
				return &SchemaError{Pointer: ptr + "/patternProperties", Err: fmt.Errorf("a patternProperties regexp is %d bytes, more than %d", len(pat), maxPatternLen)}
			}
			re, err := regexp.Compile(pat)
			if err != nil {
				return &SchemaError{Pointer: ptr + "/patternProperties/" + escapePointer(pat), Err: err}
			}
			ts.patterns[s] = append(ts.patterns[s], compiledPattern{re: re, schema: s.PatternProperties[pat]})
		}
	}
	return nil
}

// walk records s (at pointer ptr from the root, below the resources
// encl) and its subschemas.
func (ix *indexer) walk(s *jsonschema.Schema, parentBase *url.URL, encl []resource, ptr string) error {
	if s == nil {
		return nil
	}
	if _, seen := ix.pointers[s]; seen {
		return &SchemaError{Pointer: ptr, Err: errors.New("cannot happen: a subschema appears twice")}
	}
	base := parentBase
	if id, _, _ := strings.Cut(s.ID, "#"); id != "" || encl == nil {
		u, err := url.Parse(id)
		if err != nil {
			return &SchemaError{Pointer: ptr, Err: fmt.Errorf("$id: %w", err)}
		}
		base = parentBase.ResolveReference(u)
		base.Fragment, base.RawFragment = "", ""
		encl = append(slices.Clip(encl), resource{uri: base.String()})
	}
	ix.pointers[s] = ptr
	ix.bases[s] = base
	ix.order = append(ix.order, s)
	for _, r := range encl {
		ix.targets[r.uri+"#"+r.ptr] = s
	}
	inner := encl[len(encl)-1].uri
	if s.Anchor != "" {
		ix.targets[inner+"#"+s.Anchor] = s
	}
	if _, frag, ok := strings.Cut(s.ID, "#"); ok && frag != "" && !strings.HasPrefix(frag, "/") {
		ix.targets[inner+"#"+frag] = s // draft 7: "$id": "#name" is an anchor
	}
	if s.DynamicAnchor != "" {
		ix.targets[inner+"#"+s.DynamicAnchor] = s
		ix.dynamicAnchors[s.DynamicAnchor] = append(ix.dynamicAnchors[s.DynamicAnchor], s)
	}
	for _, c := range children(s) {
		sub := make([]resource, len(encl))
		for i, r := range encl {
			sub[i] = resource{uri: r.uri, ptr: r.ptr + "/" + c.seg}
		}
		if err := ix.walk(c.s, base, sub, ptr+"/"+c.seg); err != nil {
			return err
		}
	}
	return nil
}

// resolve returns the subschemas reference ref (keyword kw) of s names.
func (ix *indexer) resolve(s *jsonschema.Schema, kw, ref string) ([]*jsonschema.Schema, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", kw, ref, err)
	}
	abs := ix.bases[s].ResolveReference(u)
	frag := abs.Fragment
	abs.Fragment, abs.RawFragment = "", ""
	var out []*jsonschema.Schema
	if t, ok := ix.targets[abs.String()+"#"+frag]; ok {
		out = append(out, t)
	}
	if kw == "$dynamicRef" && frag != "" && !strings.HasPrefix(frag, "/") {
		out = append(out, ix.dynamicAnchors[frag]...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %q does not resolve to a subschema of this schema", kw, ref)
	}
	return out, nil
}

// child is a subschema and its pointer segment below its parent.
type child struct {
	seg string
	s   *jsonschema.Schema
}

// children lists the subschemas of s, in a fixed order: every field of
// jsonschema.Schema that holds schemas.
func children(s *jsonschema.Schema) []child {
	var out []child
	one := func(kw string, c *jsonschema.Schema) {
		if c != nil {
			out = append(out, child{kw, c})
		}
	}
	list := func(kw string, cs []*jsonschema.Schema) {
		for i, c := range cs {
			one(kw+"/"+strconv.Itoa(i), c)
		}
	}
	dict := func(kw string, m map[string]*jsonschema.Schema) {
		for _, k := range sortedKeys(m) {
			one(kw+"/"+escapePointer(k), m[k])
		}
	}
	dict("$defs", s.Defs)
	dict("definitions", s.Definitions)
	dict("dependencies", s.DependencySchemas)
	list("prefixItems", s.PrefixItems)
	one("items", s.Items)
	list("items", s.ItemsArray)
	one("additionalItems", s.AdditionalItems)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	dict("properties", s.Properties)
	dict("patternProperties", s.PatternProperties)
	one("additionalProperties", s.AdditionalProperties)
	one("propertyNames", s.PropertyNames)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
	dict("dependentSchemas", s.DependentSchemas)
	one("contentSchema", s.ContentSchema)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
