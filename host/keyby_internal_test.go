package host

import (
	"strings"
	"testing"
)

func TestFieldKey(t *testing.T) {
	tests := []struct{ path, value, key, err string }{
		{"user", `{"user":"ann"}`, "ann", ""},
		{"user.id", `{"user":{"id":42}}`, "42", ""},
		{"user.id", `{"user":{"id": {"a" : 1}}}`, `{"a":1}`, ""},
		{"user", `{"user":"\u00e9"}`, "é", ""},
		{"user", `{"user":null}`, "", "field user is null"},
		{"user.id", `{"user":"ann"}`, "", "user is not a JSON object"},
		{"user", `{"name":"ann"}`, "", "field user is missing"},
		{"user", `not json`, "", "the value is not a JSON object"},
	}
	for _, tc := range tests {
		f, err := newFieldKey("json", tc.path)
		if err != nil {
			t.Fatal(err)
		}
		k, err := f.key(nil, []byte(tc.value))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s of %s: error %v, want %q", tc.path, tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || string(k) != tc.key {
			t.Errorf("%s of %s: %q, %v; want %q", tc.path, tc.value, k, err, tc.key)
		}
	}
}
