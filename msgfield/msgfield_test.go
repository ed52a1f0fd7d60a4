package msgfield

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// mp builds MessagePack by hand: each argument is a byte, a string (its
// bytes) or a []byte, so that tests can write exact encodings.
func mp(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch x := p.(type) {
		case int:
			b = append(b, byte(x))
		case byte:
			b = append(b, x)
		case rune:
			b = append(b, byte(x))
		case string:
			b = append(b, x...)
		case []byte:
			b = append(b, x...)
		default:
			panic(p)
		}
	}
	return b
}

// str is a fixstr.
func str(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func TestFind(t *testing.T) {
	deep := func(n int) []byte { // {"a":1,"b":[[[...]]]} with n arrays
		return mp(0x82, str("a"), 1, str("b"), bytes.Repeat([]byte{0x91}, n-1), 0x90)
	}
	tests := []struct {
		name, path string
		doc, want  []byte
		err        error
	}{
		{"member", "a", mp(0x81, str("a"), 1), mp(1), nil},
		{"nested", "a.b", mp(0x82, str("b"), 0xc0, str("a"), 0x81, str("b"), str("x")), str("x"), nil},
		{"map of a member", "a", mp(0x81, str("a"), 0x81, str("c"), 0x92, 1, 2), mp(0x81, str("c"), 0x92, 1, 2), nil},
		{"last repeated key", "a", mp(0x82, str("a"), 1, str("a"), 2), mp(2), nil},
		{"str8 key", "a", mp(0x81, 0xd9, 1, "a", 0xcd, 1, 0), mp(0xcd, 1, 0), nil},
		{"other keys skipped", "a", mp(0x83, 1, str("x"), 0xc4, 1, "a", 7, str("a"), 0xc3), mp(0xc3), nil},
		{"map16", "a", mp(0xde, 0, 1, str("a"), 0xca, 0x3f, 0x80, 0, 0), mp(0xca, 0x3f, 0x80, 0, 0), nil},
		{"ext value", "t", mp(0x81, str("t"), 0xd6, 0xff, 0, 0, 0, 1), mp(0xd6, 0xff, 0, 0, 0, 1), nil},
		{"missing", "a", mp(0x81, str("b"), 1), nil, ErrMissing},
		{"empty map", "a", mp(0x80), nil, ErrMissing},
		{"inside a string", "a.b", mp(0x81, str("a"), str("s")), nil, ErrNotMap},
		{"an array", "a", mp(0x91, 1), nil, ErrNotMap},
		{"a number", "a", mp(1), nil, ErrNotMap},
		{"nil", "a", mp(0xc0), nil, ErrNotMap},
		{"empty", "a", nil, nil, ErrSyntax},
		// One value, nothing after it.
		{"bytes after", "a", mp(0x81, str("a"), 1, 0), nil, ErrSyntax},
		{"two values", "a", mp(0x81, str("a"), 1, 0x81, str("a"), 2), nil, ErrSyntax},
		{"bytes after a number", "a", mp(1, 2), nil, ErrSyntax},
		{"JSON text", "a", []byte(`{"a":1}`), nil, ErrSyntax},
		// What is skipped is checked.
		{"cut short", "a", mp(0x82, str("a"), 1, str("b")), nil, ErrSyntax},
		{"cut number", "a", mp(0x82, str("b"), 0xcd, 1, str("a"), 1)[:7], nil, ErrSyntax},
		{"unused code", "a", mp(0x82, str("a"), 1, str("b"), 0xc1), nil, ErrSyntax},
		{"string longer than the value", "a", mp(0x82, str("a"), 1, str("b"), 0xdb, 0xff, 0xff, 0xff, 0xff, "x"), nil, ErrSyntax},
		{"key longer than the value", "a", mp(0x81, 0xda, 0xff, 0xff, "a"), nil, ErrSyntax},
		{"ext longer than the value", "a", mp(0x82, str("a"), 1, str("b"), 0xc9, 0xff, 0xff, 0xff, 0xff, 1), nil, ErrSyntax},
		{"map32 of 2^32-1 entries", "a", mp(0xdf, 0xff, 0xff, 0xff, 0xff, str("a"), 1), nil, ErrSyntax},
		{"array32 of 2^32-1 elements", "a", mp(0x82, str("a"), 1, str("b"), 0xdd, 0xff, 0xff, 0xff, 0xff, 1), nil, ErrSyntax},
		{"a map member cut short", "a", mp(0x82, str("a"), 1, str("b"), 0x81, 1), nil, ErrSyntax},
		{"nesting at the bound", "a", deep(maxDepth - 1), mp(1), nil},
		{"nesting past the bound", "a", deep(maxDepth), nil, ErrSyntax},
	}
	for _, tc := range tests {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Find(tc.doc)
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %x: %v, want %v", tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x, %v; want %x", tc.name, got, err, tc.want)
		}
	}
	if _, err := Parse("a..b"); err == nil {
		t.Error("empty segment accepted")
	}
}

func TestFindErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		path string
		doc  []byte
		msg  string
	}{
		{"user.id", mp(0x81, str("user"), str("ann")), "user is not a MessagePack map"},
		{"user.id", mp(0x81, str("user"), 0x80), "field user.id is missing"},
		{"user", mp(0x90), "the value is not a MessagePack map"},
		{"user", []byte(`{"user":1}`), "the value: not valid MessagePack: 9 bytes after the value"},
		{"user", mp(0x81, str("user"), 0xdb, 0, 0, 1, 0), "the value: not valid MessagePack: 256 bytes declared, 0 left"},
		{"user", mp(0x81, str("user")), "the value: not valid MessagePack: the value ends early"},
	} {
		p, _ := Parse(tc.path)
		_, err := p.Find(tc.doc)
		if err == nil || err.Error() != tc.msg {
			t.Errorf("%s in %x: %v, want %q", tc.path, tc.doc, err, tc.msg)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		raw  []byte
		want string
		ok   bool
	}{
		{str("ann"), "ann", true},
		{mp(0xd9, 2, "hi"), "hi", true},
		{mp(0xc4, 3, 0, 1, 2), "\x00\x01\x02", true},
		{mp(0xa0), "", true},
		{mp(1), "", false},
		{mp(0xc0), "", false},
		{mp(0xa3, "ab"), "", false}, // cut short
		{mp(0xa1, "ab"), "", false}, // bytes after
		{mp(0x81, str("a"), 1), "", false},
		{nil, "", false},
	} {
		got, ok := Bytes(tc.raw)
		if ok != tc.ok || string(got) != tc.want {
			t.Errorf("Bytes(%x) = %q, %v; want %q, %v", tc.raw, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAppendJSON(t *testing.T) {
	ts := func(sec int64, nsec uint32) []byte {
		return mp(0xc7, 12, 0xff, byte(nsec>>24), byte(nsec>>16), byte(nsec>>8), byte(nsec),
			byte(sec>>56), byte(sec>>48), byte(sec>>40), byte(sec>>32), byte(sec>>24), byte(sec>>16), byte(sec>>8), byte(sec))
	}
	f64 := func(f float64) []byte {
		b := math.Float64bits(f)
		return mp(0xcb, byte(b>>56), byte(b>>48), byte(b>>40), byte(b>>32), byte(b>>24), byte(b>>16), byte(b>>8), byte(b))
	}
	tests := []struct {
		raw  []byte
		want string
		err  error
	}{
		{mp(0xc0), `null`, nil},
		{mp(0xc3), `true`, nil},
		{mp(0xc2), `false`, nil},
		// Integers whatever their encoding; floats as encoding/json writes them.
		{mp(0x2a), `42`, nil},
		{mp(0xcc, 42), `42`, nil},
		{mp(0xd3, 0, 0, 0, 0, 0, 0, 0, 42), `42`, nil},
		{mp(0xff), `-1`, nil},
		{mp(0xd0, 0x80), `-128`, nil},
		{mp(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), `18446744073709551615`, nil},
		{f64(42), `42`, nil},
		{f64(math.Copysign(0, -1)), `0`, nil},
		{f64(1.5), `1.5`, nil},
		{f64(1e21), `1e+21`, nil},
		{mp(0xca, 0x3d, 0xcc, 0xcc, 0xcd), `0.1`, nil}, // float32 0.1
		{f64(math.NaN()), ``, ErrNoJSON},
		{f64(math.Inf(-1)), ``, ErrNoJSON},
		{str("a\"b\\c\n\x01é"), `"a\"b\\c\n\u0001é"`, nil},
		{mp(0xa2, 0xff, 'x'), "\"\ufffdx\"", nil},
		{mp(0xc4, 3, 1, 2, 3), `"AQID"`, nil},
		{mp(0x93, 1, str("x"), 0x90), `[1,"x",[]]`, nil},
		// Maps sorted by key, the last of repeated keys kept, integer keys
		// as their decimal string.
		{mp(0x83, str("b"), 1, str("a"), 0x80, 7, 0xc0), `{"7":null,"a":{},"b":1}`, nil},
		{mp(0x83, str("a"), 1, str("b"), 2, str("a"), 3), `{"a":3,"b":2}`, nil},
		{mp(0x82, 0xa1, 0xff, 1, 0xa1, 0xfe, 2), "{\"\ufffd\":2}", nil}, // one key once not UTF-8
		{mp(0x81, 0xc0, 1), ``, ErrNoJSON},
		{mp(0x81, 0x90, 1), ``, ErrNoJSON},
		{ts(1700000000, 5), `"2023-11-14T22:13:20.000000005Z"`, nil},
		{mp(0xd6, 0xff, 0, 0, 0, 1), `"1970-01-01T00:00:01Z"`, nil},
		{ts(-62167219201, 0), ``, ErrNoJSON}, // the year -1
		{mp(0xd6, 0x05, 0, 0, 0, 1), ``, ErrNoJSON},
		{mp(0xd6, 0xff, 0, 0, 0), ``, ErrSyntax},
		{mp(0xc7, 0, 0xff), ``, ErrNoJSON}, // a timestamp of no bytes
		{mp(1, 2), ``, ErrSyntax},
		{mp(0x81, 0xc0), ``, ErrSyntax},
		{mp(0x82, 0xc0, 1, str("a")), ``, ErrSyntax}, // cut short after a key with no JSON form: the syntax counts
	}
	for _, tc := range tests {
		got, err := AppendJSON([]byte("x"), tc.raw)
		if tc.err != nil {
			if !errors.Is(err, tc.err) || string(got) != "x" {
				t.Errorf("%x: %q, %v; want %v", tc.raw, got, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != "x"+tc.want {
			t.Errorf("%x: %q, %v; want %s", tc.raw, got, err, tc.want)
		}
	}
}

// TestAppendJSONCanonical: the same value encoded differently (widths,
// float or integer, member order) has the same text.
func TestAppendJSONCanonical(t *testing.T) {
	var docs [][]byte
	for _, order := range [][]string{{"id", "tags"}, {"tags", "id"}} {
		for _, sort := range []bool{false, true} {
			var b bytes.Buffer
			e := msgpack.NewEncoder(&b)
			e.UseCompactInts(sort)
			e.EncodeMapLen(2)
			for _, k := range order {
				e.EncodeString(k)
				if k == "id" {
					if sort {
						e.EncodeFloat64(7)
					} else {
						e.EncodeInt64(7)
					}
				} else {
					e.EncodeArrayLen(1)
					e.EncodeString("x")
				}
			}
			docs = append(docs, b.Bytes())
		}
	}
	for _, d := range docs {
		got, err := AppendJSON(nil, d)
		if err != nil || string(got) != `{"id":7,"tags":["x"]}` {
			t.Errorf("%x: %s, %v", d, got, err)
		}
	}
}

func TestFromJSON(t *testing.T) {
	tests := []struct {
		json string
		want []byte
	}{
		{`null`, mp(0xc0)},
		{`true`, mp(0xc3)},
		{` 42 `, mp(42)},
		{`-1`, mp(0xff)},
		{`300`, mp(0xcd, 1, 44)},
		{`18446744073709551615`, mp(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{`1.0`, mp(0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0)},
		{`"hi"`, str("hi")},
		{`[1,"a"]`, mp(0x92, 1, str("a"))},
		{`{"b":1,"a":{"c":null},"b":2}`, mp(0x82, str("a"), 0x81, str("c"), 0xc0, str("b"), 2)},
	}
	for _, tc := range tests {
		got, err := FromJSON(nil, []byte(tc.json))
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %x, %v; want %x", tc.json, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `{`, `1 2`, `{"a":1}x`, `1e400`} {
		if got, err := FromJSON([]byte("x"), []byte(bad)); err == nil || string(got) != "x" {
			t.Errorf("%q: %x, %v; want an error", bad, got, err)
		}
	}
	// What msgpack/v5 reads back.
	b, err := FromJSON(nil, []byte(`{"user":{"id":"u1","n":3},"ts":1700000000000,"score":2.5}`))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		User struct {
			ID string `msgpack:"id"`
			N  int    `msgpack:"n"`
		} `msgpack:"user"`
		TS    int64   `msgpack:"ts"`
		Score float64 `msgpack:"score"`
	}
	if err := msgpack.Unmarshal(b, &v); err != nil || v.User.ID != "u1" || v.User.N != 3 || v.TS != 1700000000000 || v.Score != 2.5 {
		t.Fatalf("msgpack/v5 reads %+v, %v", v, err)
	}
}

func TestTimestamp(t *testing.T) {
	b, err := msgpack.Marshal(time.Date(2024, 2, 29, 12, 0, 0, 123456789, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Timestamp(b)
	if err != nil || !got.Equal(time.Date(2024, 2, 29, 12, 0, 0, 123456789, time.UTC)) {
		t.Fatalf("%x: %v, %v", b, got, err)
	}
	for _, bad := range [][]byte{mp(1), mp(0xd6, 0x05, 0, 0, 0, 1), mp(0xd7, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0), mp(0xd5, 0xff, 0, 0)} {
		if _, err := Timestamp(bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}

// FuzzFind checks the scanner against msgpack/v5's Decoder, which walks the
// value on its own (DecodeRaw, with v5's Skip): Find reads only documents
// v5 reads whole, finds there what a walk with v5 finds, and AppendJSON's
// text is canonical (FromJSON of it converts back to the same text).
func FuzzFind(f *testing.F) {
	for _, s := range [][]byte{mp(0x81, str("a"), 1), mp(0x82, str("a"), 0x81, str("a"), 0x92, 1, str("}"), str("b"), 0xc0),
		mp(0x82, str("a"), 1, str("a"), 2), mp(0x80), mp(0x90), mp(0x81, str("a"), 1, 0), []byte(`{"a":1}`),
		mp(0x81, str("a"), 0xcb, 0x80, 0, 0, 0, 0, 0, 0, 0), mp(0x81, str("a"), 0xd6, 0xff, 0, 0, 0, 1),
		mp(0x82, 1, str("x"), str("a"), 0xc4, 1, 0xff), mp(0x81, str("a"), 0xdb, 0xff, 0xff, 0xff, 0xff)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := Path{"a"}.Find(doc)
		valid := Valid(doc)
		if err != nil && !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrMissing) && !errors.Is(err, ErrNotMap) {
			t.Fatalf("%x: unexpected error %v", doc, err)
		}
		if errors.Is(err, ErrSyntax) == valid {
			t.Fatalf("%x: Find: %v; Valid: %v", doc, err, valid)
		}
		// v5 skips the same value, to the same end (it has no bound on
		// nesting, which takes more bytes than a fuzzed value has).
		d := msgpack.NewDecoder(bytes.NewReader(doc))
		_, v5err := d.DecodeRaw()
		v5whole := v5err == nil && d.Buffered().(*bytes.Reader).Len() == 0
		if len(doc) <= maxDepth && valid != v5whole {
			t.Fatalf("%x: Valid %v, msgpack/v5 reads it whole: %v (%v)", doc, valid, v5whole, v5err)
		}
		if !valid {
			return
		}
		if err == nil && !Valid(got) {
			t.Fatalf("%x: found %x, not one value", doc, got)
		}
		// The member as a walk with v5 finds it.
		d = msgpack.NewDecoder(bytes.NewReader(doc))
		var want []byte
		if c, _ := d.PeekCode(); isMap(c) {
			n, _ := d.DecodeMapLen()
			for range n {
				k, _ := d.DecodeRaw()
				v, _ := d.DecodeRaw()
				if s, ok := Bytes(k); ok && msgpcode.IsString(k[0]) && string(s) == "a" {
					want = v
				}
			}
		}
		if !bytes.Equal(got, want) || (want == nil) != errors.Is(err, ErrMissing) && isMapDoc(doc) {
			t.Fatalf("%x: found %x, %v; msgpack/v5 finds %x", doc, got, err, want)
		}
		text, err := AppendJSON(nil, doc)
		if err != nil {
			if !errors.Is(err, ErrNoJSON) {
				t.Fatalf("%x: AppendJSON of a valid value: %v", doc, err)
			}
			return
		}
		if !json.Valid(text) {
			t.Fatalf("%x: AppendJSON wrote %s, not JSON", doc, text)
		}
		back, err := FromJSON(nil, text)
		if err != nil {
			t.Fatalf("%x: FromJSON(%s): %v", doc, text, err)
		}
		again, err := AppendJSON(nil, back)
		if err != nil || !bytes.Equal(again, text) {
			t.Fatalf("%x: %s converts back to %x, whose text is %s (%v)", doc, text, back, again, err)
		}
	})
}

func isMapDoc(doc []byte) bool { return len(doc) > 0 && isMap(doc[0]) }

// TestFindInWhatV5Writes finds a nested field of a value msgpack/v5
// marshalled.
func TestFindInWhatV5Writes(t *testing.T) {
	b, err := msgpack.Marshal(map[string]any{"user": map[string]any{"id": "u7"}, "ts": int64(1700000000000)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Parse("user.id")
	raw, err := p.Find(b)
	if s, ok := Bytes(raw); err != nil || !ok || string(s) != "u7" || p.String() != "user.id" {
		t.Fatalf("%x: %x, %v", b, raw, err)
	}
}
