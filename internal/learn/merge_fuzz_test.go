package learn

import (
	"errors"
	"os"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// FuzzMerge: for any TOML text and any value, Merge either refuses
// (ErrNotMergeable) or returns TOML that decodes to the old document with
// exactly the new value appended to ro and rox (each key created if
// missing), every other key unchanged, whatever the value holds (quotes,
// newlines, "]]", "#"); the value is also put in a comment line, which
// must not change the document.
func FuzzMerge(f *testing.F) {
	for _, name := range []string{"testdata/scanner.toml"} {
		b, err := os.ReadFile(name)
		if err == nil {
			f.Add(string(b), "/x")
		}
	}
	f.Add("ro = [\"/a\"] # c\nrw = []\n", "/b\n]]\nrw = [\"/\"]")
	f.Add("ro = [\n'/a', # ]\n]\n", `"\`)
	f.Add("env = [\"\"\"a\n]\"\"\"]\nro=[]", "#")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, value string) {
		if !utf8.ValidString(value) {
			return
		}
		var before map[string]any
		if _, err := toml.Decode(text, &before); err != nil {
			return
		}
		p := Plan{Add: []Entry{{KeyRO, value, "learned: " + value}, {KeyROX, value, "x"}},
			Comments: []string{commentLine(byDesignPrefix, value, value)}}
		out, err := Merge([]byte(text), p)
		if err != nil {
			if !errors.Is(err, ErrNotMergeable) {
				t.Fatalf("error not ErrNotMergeable: %v", err)
			}
			return
		}
		var after map[string]any
		if _, err := toml.Decode(string(out), &after); err != nil {
			t.Fatalf("merged text does not decode: %v\n--- before\n%s\n--- after\n%s", err, text, out)
		}
		for _, k := range []string{"ro", "rox"} {
			var want []any
			if old, ok := before[k]; ok {
				l, isList := old.([]any)
				if !isList {
					t.Fatalf("merged into %s, which is not an array: %#v", k, old)
				}
				want = append(want, l...)
			}
			want = append(want, value)
			if !reflect.DeepEqual(after[k], want) {
				t.Fatalf("%s: got %#v, want %#v\n--- before\n%s\n--- after\n%s", k, after[k], want, text, out)
			}
			delete(after, k)
			delete(before, k)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("other keys changed: %#v -> %#v\n--- before\n%s\n--- after\n%s", before, after, text, out)
		}
	})
}
