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
