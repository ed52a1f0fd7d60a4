package jsonl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/msgfield"
)

// FuzzRead reads any input as JSON lines (what `eddy test` and `eddy
// produce` read from files and stdin): no panic, and every record read
// writes out and reads back as the same record (a key or value that is
// JSON other than a string compacted), with Base64 off and on.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`{"key":"k1","value":{"a": [1, 2]},"timestamp":5,"headers":{"h":"v","n":null}}`,
		`{"key":null,"value":"plain text","timestamp":"2023-11-14T22:13:20Z"}` + "\n\n" + `{"key_b64":"/wA=","value":42}`,
		`{"value":"\"quoted\""}`,
		`{"value":" 42"}`,
		`{"key":"a"}}xyz`,
		`{"value":"\ud800"}`,
		`{"headers":{"b":"1","a":""}}`,
		`{"value":"\t\"\""}`,
	} {
		f.Add(s, false)
	}
	f.Add(`{"key":"aw==","value":"AAEC"}`, true)
	f.Fuzz(func(t *testing.T, in string, b64 bool) {
		r := jsonl.NewReader(bytes.NewReader([]byte(in)))
		r.Base64 = b64
		for range 100 {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				continue // the next line may be a record
			}
			for _, wb64 := range []bool{false, true} {
				var out bytes.Buffer
				w := jsonl.NewWriter(&out)
				w.Base64 = wb64
				if err := w.Write(&rec); err != nil {
					t.Fatal(err)
				}
				w.Flush()
				rr := jsonl.NewReader(&out)
				rr.Base64 = wb64
				again, err := rr.Read()
				want := rec
				if !wb64 {
					want.Key, want.Value = compacted(rec.Key), compacted(rec.Value)
				}
				if err != nil || !sameRecord(&want, &again) {
					t.Fatalf("%+v wrote %q, read back %+v, %v", rec, out.String(), again, err)
				}
			}
		}
	})
}

// FuzzReadMsgpack reads any input as JSON lines of MessagePack values (eddy
// produce --format msgpack): no panic, and every record read writes out
// and reads back as the same record (a key that is JSON other than a
// string compacted), whose value has the same JSON text.
func FuzzReadMsgpack(f *testing.F) {
	for _, s := range []string{
		`{"key":"k1","value":{"a": [1, 2.5, -3]},"timestamp":5,"headers":{"h":"v"}}`,
		`{"value":"text"}` + "\n" + `{"value":null}` + "\n" + `{"value_b64":"wA=="}`,
		`{"value":{"b":1,"a":{"c":[true,false,null]},"b":2}}`,
		`{"value":18446744073709551615}`,
		`{"value":1.0}`,
		`{"value":"\ud800"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := jsonl.NewReader(bytes.NewReader([]byte(in)))
		r.Msgpack = true
		for range 100 {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				continue
			}
			var out bytes.Buffer
			w := jsonl.NewWriter(&out)
			w.Msgpack = true
			if err := w.Write(&rec); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			rr := jsonl.NewReader(&out)
			rr.Msgpack = true
			again, err := rr.Read()
			if err != nil {
				t.Fatalf("%+v wrote %q, which does not read back: %v", rec, out.String(), err)
			}
			text := func(v []byte) string {
				b, err := msgfield.AppendJSON(nil, v)
				if err != nil {
					return fmt.Sprintf("%x", v) // written as value_b64: the bytes
				}
				return string(b)
			}
			want := rec
			want.Key, want.Value = compacted(rec.Key), again.Value
			if !sameRecord(&want, &again) || text(rec.Value) != text(again.Value) || (rec.Value == nil) != (again.Value == nil) {
				t.Fatalf("%+v wrote %q, read back %+v", rec, out.String(), again)
			}
		}
	})
}

// compacted is what a Writer makes of b: compact JSON if b is JSON other
// than a string.
func compacted(b []byte) []byte {
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] == '"' || !json.Valid(b) {
		return b
	}
	var buf bytes.Buffer
	json.Compact(&buf, b)
	return buf.Bytes()
}

func sameRecord(a, b *abi.Record) bool {
	same := func(x, y []byte) bool { return bytes.Equal(x, y) && (x == nil) == (y == nil) }
	if !same(a.Key, b.Key) || !same(a.Value, b.Value) || a.Timestamp != b.Timestamp || len(a.Headers) != len(b.Headers) {
		return false
	}
	for i := range a.Headers {
		if a.Headers[i].Key != b.Headers[i].Key || !same(a.Headers[i].Value, b.Headers[i].Value) {
			return false
		}
	}
	return true
}
