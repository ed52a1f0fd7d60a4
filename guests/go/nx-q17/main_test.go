package main

import (
	"fmt"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// day1 is 2015-07-15T00:00:00Z.
const day1 = int64(1436918400000)

func bid(auction, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":1,"price":%d,"channel":"Apple","url":"u","dateTime":%d,"extra":"x"}`, auction, price, t)
	return eddy.Record{Key: fmt.Appendf(nil, "%d", auction), Value: []byte(v), Timestamp: t}
}

func fold(t *testing.T, acc []byte, recs ...eddy.Record) ([]byte, []eddytest.RecordError) {
	t.Helper()
	added, err := eddytest.AggAdd(eddytest.Group{Key: []byte("10"), Acc: acc, Records: recs})
	if err != nil {
		t.Fatal(err)
	}
	return added[0].Acc, added[0].Errors
}

func resultOf(t *testing.T, acc []byte) string {
	t.Helper()
	res, err := eddytest.AggResult(eddytest.ResultItem{Key: []byte("10"), Acc: acc})
	if err != nil || res[0].Code != 0 {
		t.Fatalf("result %+v %v", res, err)
	}
	return string(res[0].Value)
}

func TestQ17(t *testing.T) {
	acc, errs := fold(t, nil, bid(10, 5, day1+1), bid(10, 9_999, day1+2), bid(10, 1_000_000, day1+86_399_999))
	if len(errs) != 0 {
		t.Fatalf("errors %+v", errs)
	}
	want := `{"auction":10,"day":"2015-07-15","total_bids":3,"rank1_bids":2,"rank2_bids":0,"rank3_bids":1,` +
		`"min_price":5,"max_price":1000000,"avg_price":336668,"sum_price":1010004}`
	if got := resultOf(t, acc); got != want {
		t.Fatalf("result %s\nwant   %s", got, want)
	}
	// A bid of another day or auction, or not a bid, is not folded.
	acc2, errs := fold(t, acc, bid(10, 7, day1+86_400_000), bid(11, 7, day1), eddy.Record{Value: []byte(`{"id":1,"name":"n"}`)},
		eddy.Record{Value: []byte(`{"auction":10,"bidder":1,"price":1,"dateTime":-62167219200001}`)}, bid(10, 10_000, day1+3))
	if len(errs) != 4 {
		t.Fatalf("errors %+v", errs)
	}
	for _, e := range errs {
		if e.Code != eddytest.BadInput {
			t.Fatalf("error %+v", e)
		}
	}
	if errs[0].Reason != "bids of days 2015-07-16 and 2015-07-15 in one window: a bid's timestamp and dateTime are on different days" ||
		errs[1].Reason != "bids of auction 11 and 10 under one key: q17 needs the bids keyed by auction" {
		t.Fatalf("reasons %+v", errs)
	}
	want = `{"auction":10,"day":"2015-07-15","total_bids":4,"rank1_bids":2,"rank2_bids":1,"rank3_bids":1,` +
		`"min_price":5,"max_price":1000000,"avg_price":255001,"sum_price":1020004}`
	if got := resultOf(t, acc2); got != want {
		t.Fatalf("result %s\nwant   %s", got, want)
	}
	// Merge: with an empty accumulator, and with another of the group.
	empty, _ := eddytest.AggInit()
	one, _ := fold(t, nil, bid(10, -3, day1+5))
	for _, c := range []struct {
		a, b []byte
		want string
	}{
		{empty.Value, acc, `{"auction":10,"day":"2015-07-15","total_bids":3,"rank1_bids":2,"rank2_bids":0,"rank3_bids":1,"min_price":5,"max_price":1000000,"avg_price":336668,"sum_price":1010004}`},
		{one, acc, `{"auction":10,"day":"2015-07-15","total_bids":4,"rank1_bids":3,"rank2_bids":0,"rank3_bids":1,"min_price":-3,"max_price":1000000,"avg_price":252500,"sum_price":1010001}`},
	} {
		m, err := eddytest.AggMerge(eddytest.MergeItem{Key: []byte("10"), A: c.a, B: c.b})
		if err != nil || m[0].Code != 0 {
			t.Fatalf("merge %+v %v", m, err)
		}
		if got := resultOf(t, m[0].Value); got != c.want {
			t.Fatalf("merged %s\nwant   %s", got, c.want)
		}
	}
	// No bid: no row.
	res, err := eddytest.AggResult(eddytest.ResultItem{Key: []byte("10"), Acc: empty.Value})
	if err != nil || res[0].Value != nil {
		t.Fatalf("empty result %+v %v", res, err)
	}
	// The average truncates towards zero, as Java's long division.
	neg, _ := fold(t, nil, bid(10, -1, day1), bid(10, -2, day1))
	if got := resultOf(t, neg); got != `{"auction":10,"day":"2015-07-15","total_bids":2,"rank1_bids":2,"rank2_bids":0,"rank3_bids":0,"min_price":-2,"max_price":-1,"avg_price":-1,"sum_price":-3}` {
		t.Fatalf("negative prices: %s", got)
	}
}
