package jsonfield

import (
	"encoding/json"
	"errors"
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
	if _, err := Parse("a..b"); err == nil {
		t.Error("empty segment accepted")
	}
}

// FuzzFind checks Find against encoding/json on documents that parse.
func FuzzFind(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":{"a":[1,"}"]},"b":null}`, `{"a":"\u0041","a":2}`, `{}`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(doc), &m) != nil || m == nil {
			return
		}
		got, err := Path{"a"}.Find([]byte(doc))
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
