package host

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/eddy-streams/eddy/abi"
)

// mustMsgpack encodes v with msgpack/v5, map keys sorted.
func mustMsgpack(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	e := msgpack.NewEncoder(&b)
	e.SetSortMapKeys(true)
	if err := e.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestMsgpackFieldKey: keys from MessagePack fields, in a msgpack pipeline.
// A string's key is the string; other values' keys are their canonical
// JSON text, the same whatever the encoding of an equal value.
func TestMsgpackFieldKey(t *testing.T) {
	type user map[string]any
	tests := []struct {
		path  string
		value []byte
		key   string
		err   string
	}{
		{"user", mustMsgpack(t, user{"user": "ann"}), "ann", ""},
		{"user.id", mustMsgpack(t, user{"user": user{"id": int8(42)}}), "42", ""},
		{"user.id", mustMsgpack(t, user{"user": user{"id": uint64(42)}}), "42", ""},
		{"user.id", mustMsgpack(t, user{"user": user{"id": 42.0}}), "42", ""},
		{"user.id", mustMsgpack(t, user{"user": user{"id": user{"b": 1, "a": []any{true, "x"}}}}), `{"a":[true,"x"],"b":1}`, ""},
		{"user.id", []byte{0x81, 0xa4, 'u', 's', 'e', 'r', 0x81, 0xa2, 'i', 'd', 0x82, 0xa1, 'b', 1, 0xa1, 'a', 0xc3}, `{"a":true,"b":1}`, ""},
		{"user", mustMsgpack(t, user{"user": []byte{0xff, 0}}), "\xff\x00", ""},
		{"user", mustMsgpack(t, user{"user": "é"}), "é", ""},
		{"user", mustMsgpack(t, user{"user": nil}), "", "field user is null"},
		{"user.id", mustMsgpack(t, user{"user": "ann"}), "", "user is not a MessagePack map"},
		{"user", mustMsgpack(t, user{"name": "ann"}), "", "field user is missing"},
		{"user", []byte(`{"user":"ann"}`), "", "the value: not valid MessagePack: 13 bytes after the value"},
		{"user", append(mustMsgpack(t, user{"user": "ann"}), 0), "", "the value: not valid MessagePack: 1 byte after the value"},
		{"user", mustMsgpack(t, user{"user": user{"x": []byte{}}})[:8], "", "not valid MessagePack"},
		{"user", []byte{0x81, 0xa4, 'u', 's', 'e', 'r', 0xd6, 5, 0, 0, 0, 0}, "", "field user: extension type 5 has no JSON form"},
	}
	for _, tc := range tests {
		f, err := newFieldKey("msgpack", tc.path)
		if err != nil {
			t.Fatal(err)
		}
		k, err := f.key([]byte("p"), tc.value)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || string(k) != "p" {
				t.Errorf("%s of %x: %q, error %v, want %q", tc.path, tc.value, k, err, tc.err)
			}
			continue
		}
		if err != nil || string(k) != "p"+tc.key {
			t.Errorf("%s of %x: %q, %v; want %q", tc.path, tc.value, k, err, tc.key)
		}
	}
}

// TestNestMsgpack: a join's default output in a msgpack pipeline is a map
// {"left": L, "right": R}, L and R embedded, nil when missing, binary when
// not MessagePack.
func TestNestMsgpack(t *testing.T) {
	l := &abi.Record{Value: mustMsgpack(t, map[string]any{"id": 1, "name": "ann"})}
	notMsgpack := &abi.Record{Value: []byte(`{"x":1}`)}
	for _, tc := range []struct {
		l, r *abi.Record
		want map[string]any
	}{
		{l, nil, map[string]any{"left": map[string]any{"id": int8(1), "name": "ann"}, "right": nil}},
		{nil, l, map[string]any{"left": nil, "right": map[string]any{"id": int8(1), "name": "ann"}}},
		{&abi.Record{}, notMsgpack, map[string]any{"left": nil, "right": []byte(`{"x":1}`)}},
	} {
		got := nestMsgpack(tc.l, tc.r)
		var v map[string]any
		if err := msgpack.Unmarshal(got, &v); err != nil {
			t.Fatalf("%x: %v", got, err)
		}
		if !equalMsgpack(t, v, tc.want) {
			t.Errorf("%x is %#v, want %#v", got, v, tc.want)
		}
	}
}

// equalMsgpack compares two values by their MessagePack (sorted keys).
func equalMsgpack(t *testing.T, a, b any) bool {
	return bytes.Equal(mustMsgpack(t, a), mustMsgpack(t, b))
}
