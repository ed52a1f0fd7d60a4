package nexmark_test

import (
	"fmt"
	"slices"

	"github.com/eddy-streams/eddy/nexmark"
)

func ExampleGenerator() {
	cfg := nexmark.DefaultConfig()
	cfg.Events = 5
	g, err := nexmark.NewGenerator(cfg)
	if err != nil {
		panic(err)
	}
	for ev, ok := g.Next(); ok; ev, ok = g.Next() {
		rec := nexmark.Record(ev)
		fmt.Printf("%d %-7s key=%s t=%d %.60s\n", ev.Number, ev.Kind(), rec.Key, rec.Timestamp, rec.Value)
	}
	// Output:
	// 0 person  key=1000 t=1436918400000 {"id":1000,"name":"Peter Jones","emailAddress":"nhd@xcat.com
	// 1 auction key=1000 t=1436918400000 {"id":1000,"itemName":"wkx mgee","description":"eszpqxtdxrvw
	// 2 auction key=1001 t=1436918400000 {"id":1001,"itemName":"z ck w","description":"cwlachrnkfzkyg
	// 3 auction key=1002 t=1436918400000 {"id":1002,"itemName":"gxycmhtobprpd","description":"ybjpocs
	// 4 bid     key=1000 t=1436918400000 {"auction":1000,"bidder":1001,"price":32530001,"channel":"Fa
}

func ExampleQ12() {
	bid := func(bidder, t int64) nexmark.Event {
		return nexmark.Event{Time: t, Bid: &nexmark.Bid{Auction: 1000, Bidder: bidder, Price: 100, DateTime: t}}
	}
	events := []nexmark.Event{bid(1, 500), bid(2, 9_999), bid(1, 10_000), bid(1, 3_000)}
	for _, r := range nexmark.Q12(events) {
		fmt.Printf("bidder %d: %d bids in [%d, %d)\n", r.Bidder, r.Count, r.Start, r.End)
	}

	// A pipeline's results, in any order, compare after sorting.
	got := []nexmark.BidderCount{{1, 10_000, 20_000, 1}, {2, 0, 10_000, 1}, {1, 0, 10_000, 2}}
	slices.SortFunc(got, nexmark.BidderCount.Compare)
	fmt.Println(slices.Equal(got, nexmark.Q12(events)))
	// Output:
	// bidder 1: 2 bids in [0, 10000)
	// bidder 2: 1 bids in [0, 10000)
	// bidder 1: 1 bids in [10000, 20000)
	// true
}
