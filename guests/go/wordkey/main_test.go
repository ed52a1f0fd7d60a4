package main

import (
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func val(v string) eddy.Record {
	return eddy.Record{Key: []byte("old"), Value: []byte(v), Timestamp: 1}
}

func TestKey(t *testing.T) {
	res, err := eddytest.Key(val("hello world"), val("  \tsolo"), val(""), val("   "), eddy.Record{}, val("straße ist"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"hello", "solo", "", "", "", "straße"}
	for i, w := range want {
		r := res[i]
		if r.Code != 0 || string(r.Value) != w {
			t.Errorf("record %d: %+v, want %q", i, r, w)
		}
		if w == "" && r.Value != nil {
			t.Errorf("record %d: key %q, want null", i, r.Value)
		}
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		value string
		code  int
		ts    int64
	}{
		{`{"ts": 1700000000000}`, 0, 1700000000000},
		{`{"id": "x", "ts": -5, "n": {"ts": 3}}`, 0, -5},
		{`{"n": {"ts": 3}, "ts": 0}`, 0, 0},
		{`{"n": {"ts": 3}}`, eddytest.BadInput, 0},
		{`{"ts": 1.5}`, eddytest.BadInput, 0},
		{`{"ts": 1e3}`, eddytest.BadInput, 0},
		{`{"ts": "17"}`, eddytest.BadInput, 0},
		{`{"ts": 99999999999999999999}`, eddytest.BadInput, 0},
		{`[1]`, eddytest.BadInput, 0},
		{`ts=5`, eddytest.BadInput, 0},
	}
	recs := make([]eddy.Record, len(tests))
	for i, tt := range tests {
		recs[i] = val(tt.value)
	}
	res, err := eddytest.Timestamp(recs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if res[i].Code != tt.code || res[i].Time != tt.ts {
			t.Errorf("%s: %+v, want code %d ts %d", tt.value, res[i], tt.code, tt.ts)
		}
	}
}

func TestManifest(t *testing.T) {
	m, err := eddytest.ReadManifest()
	if err != nil || !slices.Equal(m.Kinds, []string{"key", "timestamp"}) || m.Name != "wordkey" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
}
