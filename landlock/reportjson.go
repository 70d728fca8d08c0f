package landlock

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// The JSON forms of the report's paths. A file name need not be UTF-8;
// encoding/json writes such a name with U+FFFD, which names no file, and
// two names then look alike (.env\xff and .env\xfe both ".env\ufffd":
// red team round 26, R26c-9, and round 27, R27d-6). Every path of a
// Report therefore comes with its bytes in standard base64 where it is
// not valid UTF-8: a "path_b64" beside "path" in an object, and for a
// list of paths a list "NAME_b64" of the same length beside it, ""
// where the name is valid (the list is absent when every name is). A
// script acting on a --report decodes the _b64 form when it is there;
// UnmarshalJSON of a Rule does.

// b64 is s in standard base64 if s is not valid UTF-8, else "".
func b64(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// b64List is b64 of each of list, or nil when every name is valid.
func b64List(list []string) []string {
	var out []string
	for i, s := range list {
		if e := b64(s); e != "" {
			if out == nil {
				out = make([]string, len(list))
			}
			out[i] = e
		}
	}
	return out
}

// MarshalJSON encodes c as its fields' json tags say, plus path_b64 for
// a path that is not valid UTF-8.
func (c CarveOut) MarshalJSON() ([]byte, error) {
	type plain CarveOut // no MarshalJSON: no recursion
	return json.Marshal(struct {
		plain
		PathB64 string `json:"path_b64,omitempty"`
	}{plain(c), b64(c.Path)})
}

// MarshalJSON encodes s as its fields' json tags say, plus path_b64 for
// a path that is not valid UTF-8.
func (s Skipped) MarshalJSON() ([]byte, error) {
	type plain Skipped
	return json.Marshal(struct {
		plain
		PathB64 string `json:"path_b64,omitempty"`
	}{plain(s), b64(s.Path)})
}

// MarshalJSON encodes r as its fields' json tags say, plus, for each
// list of paths holding a name that is not valid UTF-8, the list's _b64
// twin (masks_b64, read_only_mounts_b64, writable_b64, frozen_dirs_b64,
// swept_b64) and shared_memory_b64. Rules, CarveOuts and Skipped carry
// path_b64 themselves.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		plain
		MasksB64          []string `json:"masks_b64,omitempty"`
		ReadOnlyMountsB64 []string `json:"read_only_mounts_b64,omitempty"`
		WritableB64       []string `json:"writable_b64,omitempty"`
		FrozenDirsB64     []string `json:"frozen_dirs_b64,omitempty"`
		SweptB64          []string `json:"swept_b64,omitempty"`
		SharedMemoryB64   string   `json:"shared_memory_b64,omitempty"`
	}{plain(r), b64List(r.Masks), b64List(r.ReadOnlyMounts), b64List(r.Writable), b64List(r.FrozenDirs),
		b64List(r.Swept), b64(r.SharedMemory)})
}
