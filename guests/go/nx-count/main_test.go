package main

import (
	"bytes"
	"encoding/binary"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func acc(n int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(n)) }

func TestCount(t *testing.T) {
	init, err := eddytest.AggInit()
	if err != nil || init.Code != 0 || !bytes.Equal(init.Value, acc(0)) {
		t.Fatalf("init %+v, %v", init, err)
	}
	recs := []eddy.Record{{Value: []byte(`{"bidder":1}`)}, {Value: nil}, {Value: []byte("anything")}}
	added, err := eddytest.AggAdd(
		eddytest.Group{Key: []byte("a"), Records: recs},
		eddytest.Group{Key: []byte("b"), Acc: acc(41), Records: recs[:1]},
		eddytest.Group{Key: []byte("c"), Acc: []byte("short"), Records: recs[:1]},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(added[0].Acc, acc(3)) || len(added[0].Errors) != 0 {
		t.Errorf("group a %+v", added[0])
	}
	if !bytes.Equal(added[1].Acc, acc(42)) {
		t.Errorf("group b %+v", added[1])
	}
	if e := added[2].Errors; len(e) != 1 || e[0].Code != eddytest.Rejected || e[0].Reason != "accumulator is 5 bytes, want 8" {
		t.Errorf("group c %+v", added[2])
	}

	merged, err := eddytest.AggMerge(
		eddytest.MergeItem{Key: []byte("a"), A: acc(3), B: acc(4)},
		eddytest.MergeItem{Key: []byte("a"), A: acc(3), B: nil},
	)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged[0].Value, acc(7)) || merged[1].Code != eddytest.Rejected {
		t.Fatalf("merge %+v", merged)
	}

	results, err := eddytest.AggResult(
		eddytest.ResultItem{Key: []byte("a"), Acc: acc(7)},
		eddytest.ResultItem{Key: []byte("z"), Acc: acc(0)},
		eddytest.ResultItem{Key: []byte("x"), Acc: acc(1234567890123)},
	)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{`{"count":7}`, `{"count":0}`, `{"count":1234567890123}`} {
		if got := string(results[i].Value); got != want {
			t.Errorf("result %d = %s, want %s", i, got, want)
		}
	}
}

func TestAddZeroAllocs(t *testing.T) {
	a := acc(0)
	r := eddy.Record{Value: []byte("x")}
	if n := testing.AllocsPerRun(100, func() { add(a, r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}
