package jsonl_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/jsonl"
)

func TestRoundTrip(t *testing.T) {
	in := `{"key":"k1","value":{"a": [1, 2]},"timestamp":5,"headers":{"h":"v","n":null}}

{"key":null,"value":"plain text","timestamp":"2023-11-14T22:13:20Z"}
{"key_b64":"/wA=","value":42}
{"value":"\"quoted\""}
`
	r := jsonl.NewReader(strings.NewReader(in))
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	want := []abi.Record{
		{Key: []byte("k1"), Value: []byte(`{"a":[1,2]}`), Timestamp: 5, Headers: []abi.Header{{Key: "h", Value: []byte("v")}, {Key: "n"}}},
		{Value: []byte("plain text"), Timestamp: 1700000000000},
		{Key: []byte{0xff, 0}, Value: []byte("42")},
		{Value: []byte(`"quoted"`)},
	}
	for i := range want {
		g, w := recs[i], want[i]
		if !bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) || !bytes.Equal(g.Value, w.Value) || g.Timestamp != w.Timestamp || len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d = %+v, want %+v", i, g, w)
		}
	}
	var out bytes.Buffer
	w := jsonl.NewWriter(&out)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	wantOut := `{"key":"k1","value":{"a":[1,2]},"timestamp":5,"headers":{"h":"v","n":null}}
{"key":null,"value":"plain text","timestamp":1700000000000}
{"key_b64":"/wA=","value":42,"timestamp":0}
{"key":null,"value":"\"quoted\"","timestamp":0}
`
	if out.String() != wantOut {
		t.Fatalf("wrote\n%s\nwant\n%s", out.String(), wantOut)
	}
	// What was written reads back to the same bytes.
	again, err := jsonl.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if !bytes.Equal(again[i].Key, recs[i].Key) || !bytes.Equal(again[i].Value, recs[i].Value) {
			t.Fatalf("record %d changed on a round trip: %+v vs %+v", i, again[i], recs[i])
		}
	}
}

func TestErrorsNameTheLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{}\n[1]\n", "line 2: not a record object"},
		{`{"value": 1, "timestamp": 1.5}`, "line 1: timestamp: want integer milliseconds"},
		{`{"valeu": 1}`, `unknown field "valeu"`},
		{`{"headers": {"h": 1}}`, `header "h": want a string or null`},
		{`{"value": "a", "value_b64": "YQ=="}`, `both "value" and "value_b64"`},
		{`{"value": 1}}xyz`, "line 1: not a record object: bytes after the object"},
		{`{"value": 1} {"value": 2}`, "line 1: not a record object: bytes after the object"},
	} {
		_, err := jsonl.NewReader(strings.NewReader(tc.in)).ReadAll()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestBase64(t *testing.T) {
	r := jsonl.NewReader(strings.NewReader(`{"key":"aw==","value":"AAEC"}`))
	r.Base64 = true
	recs, err := r.ReadAll()
	if err != nil || string(recs[0].Key) != "k" || !bytes.Equal(recs[0].Value, []byte{0, 1, 2}) {
		t.Fatalf("%v %+v", err, recs)
	}
	var out bytes.Buffer
	w := jsonl.NewWriter(&out)
	w.Base64 = true
	w.Write(&recs[0])
	w.Flush()
	if got := out.String(); got != `{"key":"aw==","value":"AAEC","timestamp":0}`+"\n" {
		t.Fatal(got)
	}
}

// TestMsgpack: with Msgpack, values are read from JSON into MessagePack and
// written back as JSON; bytes that are not MessagePack, and the lone nil,
// as value_b64; keys as without it.
func TestMsgpack(t *testing.T) {
	in := `{"key":"k1","value":{"b":[1,-2,3.5],"a":"x"},"timestamp":5}
{"key":"k2","value":"text"}
{"key":"k3","value":null}
{"key":"k4","value_b64":"/wA="}
{"key":"k5","value_b64":"wA=="}
{"key":"k6","value":42}
`
	r := jsonl.NewReader(strings.NewReader(in))
	r.Msgpack = true
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{
		{0x82, 0xa1, 'a', 0xa1, 'x', 0xa1, 'b', 0x93, 1, 0xfe, 0xcb, 0x40, 0x0c, 0, 0, 0, 0, 0, 0},
		{0xa4, 't', 'e', 'x', 't'},
		nil,
		{0xff, 0},
		{0xc0},
		{42},
	}
	for i, w := range want {
		if !bytes.Equal(recs[i].Value, w) || (recs[i].Value == nil) != (w == nil) {
			t.Errorf("record %d: value %x, want %x", i, recs[i].Value, w)
		}
	}
	var out bytes.Buffer
	w := jsonl.NewWriter(&out)
	w.Msgpack = true
	for i := range recs {
		w.Write(&recs[i])
	}
	w.Flush()
	wantOut := `{"key":"k1","value":{"a":"x","b":[1,-2,3.5]},"timestamp":5}
{"key":"k2","value":"text","timestamp":0}
{"key":"k3","value":null,"timestamp":0}
{"key":"k4","value_b64":"/wA=","timestamp":0}
{"key":"k5","value_b64":"wA==","timestamp":0}
{"key":"k6","value":42,"timestamp":0}
`
	if out.String() != wantOut {
		t.Fatalf("wrote\n%s\nwant\n%s", out.String(), wantOut)
	}
	rr := jsonl.NewReader(&out)
	rr.Msgpack = true
	again, err := rr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if !bytes.Equal(again[i].Value, recs[i].Value) {
			t.Errorf("record %d changed on a round trip: %x vs %x", i, again[i].Value, recs[i].Value)
		}
	}
	if _, err := rr.Read(); err == nil {
		t.Fatal("read past the end")
	}
	bad := jsonl.NewReader(strings.NewReader(`{"value":1e999}`))
	bad.Msgpack = true
	if _, err := bad.Read(); err == nil || !strings.Contains(err.Error(), "line 1: value: to MessagePack") {
		t.Fatalf("a number beyond float64: %v", err)
	}
}
