package denials

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRecord feeds arbitrary audit record text to ParseRecord (the
// kernel's records are trusted, but path, comm and exe inside them are
// the confined command's choice). Properties:
//   - it never panics; a refusal wraps ErrMalformed;
//   - Time, every field name and every value are substrings of the
//     input, except a value of an untrusted field (path, comm, ...) the
//     kernel hex-encoded, whose hex form is then in the input;
//   - Serial is the decimal number of the header, Order lists each field
//     once and exactly the fields of Fields.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{
		recAccessHex, recAlloc, recSyscall, recNet, recDealloc + "\x00", recDocRefer,
		`audit(1.2:3): domain=4142 blockers=fs.execute path=2F61`,
		`audit(1.2:3): path=2F6 comm=(null)`, `audit(1.2:3):`, `audit(1.2:3): `,
		`audit(1.2:3): a="unterminated`, `audit(1.2): a=b`, `audit(1.2:x): a=b`,
		`audit(1.2:3): a b=c`, `audit(1.2:3): path="" path=41 name=?`,
	} {
		f.Add(uint16(TypeLandlockAccess), s)
	}
	f.Fuzz(func(t *testing.T, typ uint16, text string) {
		r, err := ParseRecord(typ, text)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseRecord(%q): error %v does not wrap ErrMalformed", text, err)
			}
			return
		}
		in := strings.TrimRight(text, "\x00\n")
		if r.Type != typ || r.Raw != in {
			t.Fatalf("ParseRecord(%q): Type %d Raw %q", text, r.Type, r.Raw)
		}
		serial, _, _ := strings.Cut(strings.TrimPrefix(in, "audit("+r.Time+":"), ")")
		if n, err := strconv.ParseUint(serial, 10, 64); strings.Contains(r.Time, ":") || err != nil || n != r.Serial {
			t.Fatalf("ParseRecord(%q): Time %q, Serial %d not from the header", text, r.Time, r.Serial)
		}
		if len(r.Order) != len(r.Fields) {
			t.Fatalf("ParseRecord(%q): Order %q, Fields %q", text, r.Order, r.Fields)
		}
		seen := map[string]bool{}
		for _, k := range r.Order {
			v, ok := r.Fields[k]
			if !ok || seen[k] {
				t.Fatalf("ParseRecord(%q): Order %q does not list Fields %q once each", text, r.Order, r.Fields)
			}
			seen[k] = true
			if !strings.Contains(in, k+"=") {
				t.Fatalf("ParseRecord(%q): field name %q is not in the input", text, k)
			}
			if strings.Contains(in, v) {
				continue
			}
			enc := hex.EncodeToString([]byte(v))
			if !untrusted[k] || !strings.Contains(strings.ToLower(in), strings.ToLower(k)+"="+enc) {
				t.Fatalf("ParseRecord(%q): value %q of %q is neither in the input nor its hex form", text, v, k)
			}
		}
	})
}
