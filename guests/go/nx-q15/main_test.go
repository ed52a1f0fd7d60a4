package main

import (
	"fmt"
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// day1 is 2015-07-15T00:00:00Z.
const day1 = int64(1436918400000)

func bid(auction, bidder, price, t int64) eddy.Record {
	v := fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Apple","url":"https://www.nexmark.com/a/item.htm?query=1","dateTime":%d,"extra":"x"}`,
		auction, bidder, price, t)
	return eddy.Record{Key: []byte("all"), Value: []byte(v), Timestamp: t}
}

// TestQ15 runs bids of two days through the distinct step and folds its
// outputs per day, as the aggregate's windows of a day would.
func TestQ15(t *testing.T) {
	eddytest.Reset()
	m, err := eddytest.ReadManifest()
	if err != nil || m.Name != "nx-q15" || !slices.Equal(m.Kinds, []string{"process", "aggregate"}) {
		t.Fatalf("manifest %+v %v", m, err)
	}
	res, err := eddytest.Process(
		bid(10, 1, 5, day1+60_000),
		bid(10, 1, 9_999, day1+61_000),
		bid(11, 2, 10_000, day1+3_600_000),
		bid(11, 1, 50, day1+7_200_000),
		bid(10, 1, 1_000_000, day1+86_399_999),
		eddy.Record{Key: []byte("all"), Value: []byte(`{"id":1,"name":"n","emailAddress":"e"}`)},
		bid(12, 3, 7, day1+86_400_000),
	)
	if err != nil {
		t.Fatal(err)
	}
	if res[5].Code != eddytest.BadInput || res[5].Reason != `value is not a bid: no "bidder" member` {
		t.Fatalf("a person: %+v", res[5])
	}
	days := map[int64][]eddy.Record{}
	for i, r := range res {
		if i == 5 {
			continue
		}
		if r.Code != 0 || len(r.Records) != 1 {
			t.Fatalf("bid %d: %+v", i, r)
		}
		out := r.Records[0]
		days[out.Timestamp/86_400_000] = append(days[out.Timestamp/86_400_000], out)
	}
	want := map[int64]string{
		day1 / 86_400_000: `{"day":"2015-07-15","total_bids":5,"rank1_bids":3,"rank2_bids":1,"rank3_bids":1,` +
			`"total_bidders":2,"rank1_bidders":1,"rank2_bidders":1,"rank3_bidders":1,` +
			`"total_auctions":2,"rank1_auctions":2,"rank2_auctions":1,"rank3_auctions":1}`,
		day1/86_400_000 + 1: `{"day":"2015-07-16","total_bids":1,"rank1_bids":1,"rank2_bids":0,"rank3_bids":0,` +
			`"total_bidders":1,"rank1_bidders":1,"rank2_bidders":0,"rank3_bidders":0,` +
			`"total_auctions":1,"rank1_auctions":1,"rank2_auctions":0,"rank3_auctions":0}`,
	}
	for day, recs := range days {
		added, err := eddytest.AggAdd(eddytest.Group{Key: []byte("all"), Records: recs})
		if err != nil || len(added[0].Errors) != 0 {
			t.Fatalf("add %+v %v", added, err)
		}
		got, err := eddytest.AggResult(eddytest.ResultItem{Key: []byte("all"), Acc: added[0].Acc})
		if err != nil || string(got[0].Value) != want[day] {
			t.Fatalf("day %d: %s %v\nwant %s", day, got[0].Value, err, want[day])
		}
	}
	// Bids more than a day behind the group's newest are refused.
	res, err = eddytest.Process(bid(10, 1, 5, day1+3*86_400_000), bid(10, 1, 5, day1))
	if err != nil || res[0].Code != 0 || res[1].Code != eddytest.Rejected {
		t.Fatalf("late bid: %+v %v", res, err)
	}
	// A record that is not a delta does not fold.
	added, err := eddytest.AggAdd(eddytest.Group{Key: []byte("all"), Records: []eddy.Record{bid(1, 1, 1, 1)}})
	if err != nil || len(added[0].Errors) != 1 || added[0].Errors[0].Code != eddytest.BadInput {
		t.Fatalf("a bid folded: %+v %v", added, err)
	}
}
