package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

func bidRec(auction, bidder, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"https://www.nexmark.com/pfj/dexb/gmjn/item.htm?query=1","dateTime":%d,"extra":"kpbrykRZJVMWeuyfegsyumoyP"}`,
		auction, bidder, price, t)
	return eddy.Record{Key: []byte("all"), Value: []byte(v), Timestamp: t}
}

func fold(t *testing.T, acc []byte, recs ...eddy.Record) []byte {
	t.Helper()
	added, err := eddytest.AggAdd(eddytest.Group{Key: []byte("all"), Acc: acc, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	if len(added[0].Errors) != 0 {
		t.Fatalf("errors %+v", added[0].Errors)
	}
	return added[0].Acc
}

func resultOf(t *testing.T, acc []byte) string {
	t.Helper()
	res, err := eddytest.AggResult(eddytest.ResultItem{Key: []byte("all"), Acc: acc})
	if err != nil || res[0].Code != 0 {
		t.Fatalf("result %+v %v", res, err)
	}
	return string(res[0].Value)
}

func TestQ7(t *testing.T) {
	init, err := eddytest.AggInit()
	if err != nil || !bytes.Equal(init.Value, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("init %+v %v", init, err)
	}
	acc := fold(t, nil,
		bidRec(1, 10, 500, 30), // replaced by the higher price
		bidRec(2, 11, 900, 20),
		bidRec(3, 12, 100, 10), // lower: ignored
		bidRec(4, 13, 900, 10), // ties: ordered by dateTime,
		bidRec(2, 14, 900, 20), // then auction, then bidder
		bidRec(2, 9, 900, 20),
		bidRec(2, 9, 900, 20), // an equal bid appears twice
	)
	want := `{"price":900,"bids":[{"auction":4,"bidder":13,"dateTime":10},{"auction":2,"bidder":9,"dateTime":20},{"auction":2,"bidder":9,"dateTime":20},{"auction":2,"bidder":11,"dateTime":20},{"auction":2,"bidder":14,"dateTime":20}]}`
	if got := resultOf(t, acc); got != want {
		t.Fatalf("result\n%s\nwant\n%s", got, want)
	}
	if !json.Valid([]byte(want)) {
		t.Fatal("not JSON")
	}
	// Folded one at a time, in another order: the same accumulator.
	var one []byte
	for _, r := range []eddy.Record{bidRec(2, 9, 900, 20), bidRec(2, 14, 900, 20), bidRec(3, 12, 100, 10),
		bidRec(4, 13, 900, 10), bidRec(1, 10, 500, 30), bidRec(2, 11, 900, 20), bidRec(2, 9, 900, 20)} {
		one = fold(t, one, r)
	}
	if !bytes.Equal(one, acc) {
		t.Fatal("the order of the bids changed the accumulator")
	}
	// Negative prices are prices.
	if got := resultOf(t, fold(t, nil, bidRec(1, 2, -5, 3))); got != `{"price":-5,"bids":[{"auction":1,"bidder":2,"dateTime":3}]}` {
		t.Fatalf("negative: %s", got)
	}
	// No bids: nothing.
	res, err := eddytest.AggResult(eddytest.ResultItem{Acc: init.Value})
	if err != nil || res[0].Code != 0 || res[0].Value != nil {
		t.Fatalf("empty result %+v %v", res, err)
	}
}

func TestQ7Failures(t *testing.T) {
	good := bidRec(1, 2, 3, 4)
	added, err := eddytest.AggAdd(
		eddytest.Group{Key: []byte("all"), Records: []eddy.Record{
			good,
			{Value: []byte(`{"id":1,"name":"n"}`)},
			{Value: []byte(`{"bidder":1,"auction":1,"price":1}`)},
			{Value: []byte(`{"bidder":1,"auction":1,"price":1.5,"dateTime":1}`)},
			{Value: []byte(`nope`)},
		}},
		eddytest.Group{Key: []byte("all"), Acc: []byte{2, 0, 0, 0, 0, 0, 0, 0, 0}, Records: []eddy.Record{good}},
		eddytest.Group{Key: []byte("all"), Acc: []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 1}, Records: []eddy.Record{good}},
	)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range added[0].Errors {
		if e.Code != eddytest.BadInput {
			t.Errorf("error %+v", e)
		}
		reasons = append(reasons, e.Reason)
	}
	want := []string{`value is not a bid: no "bidder" member`, `no "dateTime" member`, `"price" is not an integer`, "value is not valid JSON"}
	if !slices.Equal(reasons, want) {
		t.Errorf("reasons %q, want %q", reasons, want)
	}
	for g := 1; g < 3; g++ {
		if e := added[g].Errors; len(e) != 1 || e[0].Code != eddytest.Rejected {
			t.Errorf("group %d: %+v", g, added[g])
		}
	}
}

// TestQ7Merge checks that merging the accumulators of any split of the
// bids gives the accumulator of all of them.
func TestQ7Merge(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		recs := make([]eddy.Record, 1+r.IntN(12))
		for i := range recs {
			recs[i] = bidRec(r.Int64N(3), r.Int64N(3), 100+r.Int64N(3), r.Int64N(4))
		}
		all := fold(t, nil, recs...)
		cut := r.IntN(len(recs) + 1)
		a, b := fold(t, nil, recs[:cut]...), fold(t, nil, recs[cut:]...)
		for _, pair := range [][2][]byte{{a, b}, {b, a}} {
			res, err := eddytest.AggMerge(eddytest.MergeItem{Key: []byte("all"), A: pair[0], B: pair[1]})
			if err != nil || res[0].Code != 0 {
				t.Fatalf("merge %+v %v", res, err)
			}
			if !bytes.Equal(res[0].Value, all) {
				t.Fatalf("merge of %d+%d bids differs from folding them all", cut, len(recs)-cut)
			}
		}
	}
	res, err := eddytest.AggMerge(eddytest.MergeItem{A: []byte{1}, B: []byte{1, 0, 0, 0, 0, 0, 0, 0, 0}})
	if err != nil || res[0].Code != eddytest.Rejected {
		t.Fatalf("bad merge %+v %v", res, err)
	}
}

func TestAddZeroAllocs(t *testing.T) {
	acc := make([]byte, header, 1024)
	acc[0] = version
	r := bidRec(1, 2, 3, 4)
	if n := testing.AllocsPerRun(100, func() { add(acc[:header], r) }); n != 0 {
		t.Fatalf("%v allocations per record", n)
	}
}
