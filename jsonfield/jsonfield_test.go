package jsonfield

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	tests := []struct {
		path, doc, want string
		err             error
	}{
		{"a", `{"a":1}`, `1`, nil},
		{"a", ` { "b" : [1, {"a": 2}], "a" : "x\"y" } `, `"x\"y"`, nil},
		{"a.b", `{"a":{"c":{"b":3},"b":{"d":[]}}}`, `{"d":[]}`, nil},
		{"a", `{"a":1,"a":2}`, `2`, nil},
		{"\u00e9", `{"\u00e9":true}`, `true`, nil},
		{"a", `{}`, "", ErrMissing},
		{"a.b", `{"a":"s"}`, "", ErrNotObject},
		{"a", `[1]`, "", ErrNotObject},
		{"a", `{"a":1`, "", ErrSyntax},
		{"a", `{"a":tru}`, "", ErrSyntax},
		{"a", `not json`, "", ErrNotObject},
		{"a", ``, "", ErrNotObject},
		// One JSON value, white space around it at most (issue 14: key_by
		// took the first value and let the rest through).
		{"a", " {\"a\":1} \n\t", `1`, nil},
		{"a", `{"a":1}}xyz`, "", ErrSyntax},
		{"a", `{"a":1} x`, "", ErrSyntax},
		{"a", `{"a":1}{"a":2}`, "", ErrSyntax},
		{"a.b", `{"a":{"b":1}}}`, "", ErrSyntax},
		// What is skipped is checked as encoding/json checks it.
		{"a", `{"a":1,"b":{]}`, "", ErrSyntax},
		{"a", `{"a":1,"b":[1,]}`, "", ErrSyntax},
		{"a", `{"a":1,"b":{"c"}}`, "", ErrSyntax},
		{"a", `{"a":1,"b":[1 2]}`, "", ErrSyntax},
		{"a", "{\"a\":1,\"b\":\"\x01\"}", "", ErrSyntax},
		{"a", `{"a":1,"b":"\x"}`, "", ErrSyntax},
		{"a", `{"a":1,"b":"\u12g4"}`, "", ErrSyntax},
		{"a", `{"a":"\u00e9\n\/"}`, `"\u00e9\n\/"`, nil},
		{"a", `{"a":01}`, "", ErrSyntax},
		{"a", `{"a":1.}`, "", ErrSyntax},
		{"a", `{"a":-}`, "", ErrSyntax},
		{"a", `{"a":1e}`, "", ErrSyntax},
		{"a", `{"a":+1}`, "", ErrSyntax},
		{"a", `{"a":-0.5e+10}`, `-0.5e+10`, nil},
		{"a", `{"a":nul}`, "", ErrSyntax},
		{"a", `{"a":[[[[]]]],"b":[{"c":[true,false,null]}]}`, `[[[[]]]]`, nil},
	}
	for _, tc := range tests {
		p, err := Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.Find([]byte(tc.doc))
		if tc.err != nil {
			if !errors.Is(err, tc.err) {
				t.Errorf("%s in %s: %v, want %v", tc.path, tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s in %s: %q, %v; want %q", tc.path, tc.doc, got, err, tc.want)
		}
	}
	// Nesting is bounded as encoding/json bounds it.
	for _, depth := range []int{maxDepth, maxDepth + 1} {
		doc := `{"a":1,"b":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + "}"
		_, err := Path{"a"}.Find([]byte(doc))
		if valid := json.Valid([]byte(doc)); valid != (err == nil) {
			t.Errorf("depth %d: json.Valid %v, Find: %v", depth, valid, err)
		}
	}
	if _, err := Parse("a..b"); err == nil {
		t.Error("empty segment accepted")
	}
}

// FuzzFind checks Find against encoding/json: it finds a member only in a
// document that encoding/json parses, and there it finds what
// encoding/json finds.
func FuzzFind(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"a":[1,"}"]},"b":null}`, `{"a":"\u0041","a":2}`, `{}`, `[]`,
		`{"a":1}}xyz`, `{"a":1,"b":{]}`, `{"a":-0.5e+10}`, `{"a":"\ud800"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		got, err := Path{"a"}.Find([]byte(doc))
		if err == nil && !json.Valid([]byte(doc)) {
			t.Fatalf("%q: found %q in a document that is not JSON", doc, got)
		}
		if errors.Is(err, ErrMissing) && !json.Valid([]byte(doc)) {
			t.Fatalf("%q: member missing from a document that is not JSON", doc)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(doc), &m) != nil || m == nil {
			return
		}
		want, ok := m["a"]
		switch {
		case !ok && !errors.Is(err, ErrMissing):
			t.Fatalf("%s: %q, %v; want missing", doc, got, err)
		case ok && err != nil:
			t.Fatalf("%s: %v; want %s", doc, err, want)
		case ok && !json.Valid(got):
			t.Fatalf("%s: %q is not the member's JSON", doc, got)
		}
	})
}
