package main

import (
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func TestOne(t *testing.T) {
	res, err := eddytest.Key(
		eddy.Record{Key: []byte("1000"), Value: []byte(`{"auction":1000,"bidder":1}`)},
		eddy.Record{},
		eddy.Record{Key: []byte("x"), Value: []byte("not json")},
	)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Code != 0 || string(r.Value) != "all" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	m, err := eddytest.ReadManifest()
	if err != nil || m.Name != "nx-one" || len(m.Kinds) != 1 || m.Kinds[0] != "key" {
		t.Fatalf("manifest %+v %v", m, err)
	}
}
