package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decodeArgs decodes a tool's arguments (a JSON object) into a, refusing
// unknown members and trailing data. Its errors wrap ErrInvalidArgs and
// say what is wrong in the terms of the tool's schema, never Go's:
// `argument "path" must be a string, got a number`, not `json: cannot
// unmarshal number into Go struct field ReadFileArgs.path of type
// string` (the model reading it knows no Go type).
func decodeArgs(raw string, a any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(a); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgs, describeDecodeError(err))
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data after the arguments object", ErrInvalidArgs)
	}
	return nil
}

// describeDecodeError says why json.Decoder refused the arguments. An
// unknown member has no error type of its own in encoding/json: its
// message ("json: unknown field \"x\"") is the only way to tell it, and
// the fallback keeps that message, minus the "json: " prefix.
func describeDecodeError(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Sprintf("the arguments must be %s, got %s", jsonKind(te.Type), article(te.Value))
		}
		return fmt.Sprintf("argument %q must be %s, got %s", te.Field, jsonKind(te.Type), article(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("the arguments are not valid JSON (at byte %d: %s)", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the arguments are empty or cut short"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if name, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown argument " + name + " (see the tool's input schema)"
	}
	return msg
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value of another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a value of another type"
}

// article turns UnmarshalTypeError.Value ("number", "string", "bool",
// "array", "object", "number 1.5", "number -1") into words.
func article(v string) string {
	kind, detail, _ := strings.Cut(v, " ")
	switch kind {
	case "bool":
		kind = "boolean"
	case "object", "array":
		return "an " + kind
	}
	if detail != "" {
		return fmt.Sprintf("a %s (%s)", kind, detail)
	}
	return "a " + kind
}
