package main

import (
	"bytes"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestPassthrough(t *testing.T) {
	in := []eddy.Record{
		{Key: []byte("k"), Value: []byte("v"), Timestamp: 1700000000000, Headers: []eddy.Header{{Key: "h", Value: []byte("x")}}},
		{Key: nil, Value: nil, Timestamp: 0},
		{Key: []byte{}, Value: []byte{}, Timestamp: -1},
	}
	res, err := eddytest.Process(in...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Code != 0 || len(r.Records) != 1 {
			t.Fatalf("record %d: %+v", i, r)
		}
		out := r.Records[0]
		if !bytes.Equal(out.Key, in[i].Key) || (out.Key == nil) != (in[i].Key == nil) ||
			!bytes.Equal(out.Value, in[i].Value) || (out.Value == nil) != (in[i].Value == nil) ||
			out.Timestamp != in[i].Timestamp || len(out.Headers) != len(in[i].Headers) {
			t.Fatalf("record %d: %+v, want %+v", i, out, in[i])
		}
	}
	m, err := eddytest.ReadManifest()
	if err != nil || m.Name != "passthrough" || len(m.Kinds) != 1 || m.Kinds[0] != "process" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
}
