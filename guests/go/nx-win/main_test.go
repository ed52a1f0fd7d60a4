package main

import (
	"fmt"
	"slices"
	"testing"

	eddy "github.com/eddy-streams/eddy/sdk/go"
	"github.com/eddy-streams/eddy/sdk/go/eddytest"
)

// auctionJSON and bidJSON are events in nexmark.AppendJSON's layout.
func auctionJSON(id, open, expires int64) string {
	return fmt.Sprintf(`{"id":%d,"itemName":"wkx mgee","description":"esz \"q\"","initialBid":28873,"reserve":29448,"dateTime":%d,"expires":%d,"seller":1000,"category":13,"extra":"zcu\\rs"}`, id, open, expires)
}

func bidJSON(auction, bidder, price, at int64, extra string) string {
	return fmt.Sprintf(`{"auction":%d,"bidder":%d,"price":%d,"channel":"Facebook","url":"https://www.nexmark.com/","dateTime":%d,"extra":"%s"}`, auction, bidder, price, at, extra)
}

// rowJSON is the row of auctionJSON(id, open, expires) and a bid.
func rowJSON(id, open, expires, bidder, price, at int64, extra string) string {
	return fmt.Sprintf(`{"id":%d,"itemName":"wkx mgee","description":"esz \"q\"","initialBid":28873,"reserve":29448,"dateTime":%d,"expires":%d,"seller":1000,"category":13,"extra":"zcu\\rs","auction":%d,"bidder":%d,"price":%d,"bid_dateTime":%d,"bid_extra":"%s"}`, id, open, expires, id, bidder, price, at, extra)
}

// send processes values in order and fails the test on any failure or
// output.
func send(t *testing.T, values ...string) {
	t.Helper()
	for _, v := range values {
		res, err := eddytest.Process(eddy.Record{Key: []byte("k"), Value: []byte(v), Timestamp: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Code != 0 || len(r.Records) != 0 {
			t.Fatalf("%s: code %d %q, %d records", v, r.Code, r.Reason, len(r.Records))
		}
	}
}

// timers returns the timers set, as "key@time".
func timers() []string {
	var ts []string
	for _, tm := range eddytest.Timers() {
		ts = append(ts, fmt.Sprintf("%s@%d", tm.Key, tm.Time))
	}
	return ts
}

// fireAt fires the event-time timer key@at and returns the values it emits,
// checking that their key is key and timestamp ts.
func fireAt(t *testing.T, key string, at, ts int64) []string {
	t.Helper()
	res, err := eddytest.FireTimers(eddytest.Timer{Key: []byte(key), Domain: eddy.EventTime, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != 0 {
		t.Fatalf("timer %s@%d: code %d %q", key, at, res[0].Code, res[0].Reason)
	}
	var out []string
	for _, r := range res[0].Records {
		if string(r.Key) != key || r.Timestamp != ts {
			t.Fatalf("timer %s@%d: record key %q, timestamp %d", key, at, r.Key, r.Timestamp)
		}
		out = append(out, string(r.Value))
	}
	return out
}

func expect(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\ngot  %q\nwant %q", what, got, want)
	}
}

func TestWinner(t *testing.T) {
	eddytest.Reset()
	send(t,
		auctionJSON(7, 100, 200),
		bidJSON(7, 1, 50, 99, "early"), // before the auction opened
		bidJSON(7, 2, 60, 100, "open"),
		bidJSON(7, 3, 80, 150, "b"),
		bidJSON(7, 4, 80, 140, "c"), // same price, earlier: wins so far
		bidJSON(7, 5, 90, 201, "late"),
		bidJSON(7, 6, 80, 140, `a\\b`), // and a tie on time: bidder 4 stays
		bidJSON(7, 4, 80, 140, "b"),    // a tie on bidder too: "b" < "c"
		bidJSON(7, 4, 80, 140, `b\\`),  // "b\" > "b"
	)
	expect(t, "timers", timers(), []string{"7@201"})
	expect(t, "rows", fireAt(t, "7", 201, 200), []string{rowJSON(7, 100, 200, 4, 80, 140, "b")})
	closedMark(t, "7", 200)
}

// closedMark checks that auction key, which expired at expires, has
// closed: its state is the closed mark, with a timer to forget it; a later
// bid is dropped, and the timer forgets the mark.
func closedMark(t *testing.T, key string, expires int64) {
	t.Helper()
	if v, ok := eddytest.State([]byte(key)); !ok || string(v) != "\x01\x04\x00\x00\x00\x00" {
		t.Fatalf("state after the close: %q", v)
	}
	want := fmt.Sprintf("%s@%d", key, expires+forget)
	if ts := timers(); !slices.Contains(ts, want) {
		t.Fatalf("timers %v: no %s", ts, want)
	}
	n := len(eddytest.Timers())
	send(t, bidJSON(7, 9, 1e9, expires+5, "after the close"))
	if len(eddytest.Timers()) != n {
		t.Fatal("a bid after the close set a timer")
	}
	expect(t, "rows", fireAt(t, key, expires+forget, 0), nil)
	if _, ok := eddytest.State([]byte(key)); ok {
		t.Fatal("the closed mark outlives its timer")
	}
}

func TestBidAtExpiry(t *testing.T) {
	eddytest.Reset()
	send(t, auctionJSON(7, 100, 200), bidJSON(7, 1, 10, 200, "x"))
	expect(t, "rows", fireAt(t, "7", 201, 200), []string{rowJSON(7, 100, 200, 1, 10, 200, "x")})
}

func TestNoBid(t *testing.T) {
	eddytest.Reset()
	send(t, auctionJSON(7, 100, 200), bidJSON(7, 1, 10, 201, "x"), bidJSON(8, 1, 10, 150, "other auction"))
	expect(t, "rows", fireAt(t, "7", 201, 200), nil)
	closedMark(t, "7", 200)
}

func TestHeldBids(t *testing.T) {
	eddytest.Reset()
	// Bids before their auction: held, with a timer at the earliest's
	// time + 1, moved when an earlier one comes.
	send(t, bidJSON(7, 1, 70, 120, "x"))
	expect(t, "timers", timers(), []string{"7@121"})
	send(t, bidJSON(7, 2, 90, 99, "y"), bidJSON(7, 3, 60, 110, "z"))
	expect(t, "timers", timers(), []string{"7@100"})
	// The auction takes the held bids in its time (99 is before it) and
	// replaces their timer by its own.
	send(t, auctionJSON(7, 100, 200))
	expect(t, "timers", timers(), []string{"7@201"})
	send(t, bidJSON(7, 4, 65, 150, "w"))
	// A held bid's timer that fires anyway (it was deleted; a host may
	// have fired it already) does nothing.
	expect(t, "rows", fireAt(t, "7", 100, 0), nil)
	expect(t, "rows", fireAt(t, "7", 201, 200), []string{rowJSON(7, 100, 200, 1, 70, 120, "x")})
}

func TestHeldBidsExpire(t *testing.T) {
	eddytest.Reset()
	send(t, bidJSON(7, 1, 70, 120, "x"), bidJSON(7, 2, 90, 130, "y"))
	expect(t, "timers", timers(), []string{"7@121"})
	// The watermark passed 120: an auction that comes now opened after
	// the first bid, which goes; the second stays, with a new timer.
	expect(t, "rows", fireAt(t, "7", 121, 0), nil)
	expect(t, "timers", timers(), []string{"7@121", "7@131"}) // the host deletes fired timers
	send(t, auctionJSON(7, 121, 300))
	expect(t, "rows", fireAt(t, "7", 301, 300), []string{rowJSON(7, 121, 300, 2, 90, 130, "y")})

	eddytest.Reset()
	send(t, bidJSON(7, 1, 70, 120, "x"))
	expect(t, "rows", fireAt(t, "7", 121, 0), nil)
	if _, ok := eddytest.State([]byte("7")); ok {
		t.Fatal("state kept after the last held bid went")
	}
}

func TestLateBidNotHeld(t *testing.T) {
	eddytest.Reset()
	defer eddytest.Reset()
	// The watermark is past the bid: its auction, if it comes, opens after
	// it.
	eddytest.SetCurrentTime(eddy.EventTime, 121)
	send(t, bidJSON(7, 1, 70, 120, "x"))
	if _, ok := eddytest.State([]byte("7")); ok || len(eddytest.Timers()) != 0 {
		t.Fatal("a bid behind the watermark is held")
	}
	send(t, bidJSON(7, 1, 70, 121, "x"))
	expect(t, "timers", timers(), []string{"7@122"})
}

func TestDuplicateAuction(t *testing.T) {
	eddytest.Reset()
	send(t, auctionJSON(7, 100, 200), auctionJSON(7, 300, 400), bidJSON(7, 1, 10, 150, "x"))
	expect(t, "timers", timers(), []string{"7@201"})
	expect(t, "rows", fireAt(t, "7", 201, 200), []string{rowJSON(7, 100, 200, 1, 10, 150, "x")})
	send(t, auctionJSON(7, 300, 400)) // after the close, too
	if v, _ := eddytest.State([]byte("7")); len(v) != 6 {
		t.Fatalf("state %q: the closed mark was replaced", v)
	}
}

func TestBadInput(t *testing.T) {
	eddytest.Reset()
	for _, c := range []struct{ value, reason string }{
		{`{"id":1,"name":"p","emailAddress":"e"}`, "value is neither an auction nor a bid"},
		{`[1]`, "value is not a JSON object"},
		{`{"id":1`, "value is not valid JSON"},
		{`{"id":1,"itemName":"x"}`, `no "initialBid" member`},
		{`{"id":1,"itemName":"x","initialBid":1,"reserve":1,"dateTime":1,"expires":"2","seller":1,"category":1,"description":"","extra":""}`, `"expires" is not an integer`},
		{`{"id":1,"itemName":"x","initialBid":1,"reserve":1,"dateTime":1,"expires":2,"seller":1,"category":1,"description":"","extra":3}`, `"extra" is not a string`},
		{`{"auction":1,"bidder":2,"price":3}`, `no "dateTime" member`},
		{`{"auction":1,"bidder":2,"price":3,"dateTime":4}`, `no "extra" member`},
		{`{"auction":1.5,"bidder":2,"price":3,"dateTime":4,"extra":""}`, `"auction" is not an integer`},
	} {
		res, err := eddytest.Process(eddy.Record{Value: []byte(c.value)})
		if err != nil {
			t.Fatal(err)
		}
		if r := res[0]; r.Code != eddytest.BadInput || r.Reason != c.reason {
			t.Errorf("%s: code %d %q, want BAD_INPUT %q", c.value, r.Code, r.Reason, c.reason)
		}
	}
	if got := eddytest.Timers(); len(got) != 0 {
		t.Fatalf("timers set by refused records: %v", got)
	}
}

func TestNoState(t *testing.T) {
	eddytest.Reset()
	defer eddytest.Reset()
	eddytest.SetStateMode(eddytest.StateNone)
	res, err := eddytest.Process(eddy.Record{Value: []byte(auctionJSON(1, 1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Code != eddytest.Rejected {
		t.Fatalf("code %d %q, want REJECTED", res[0].Code, res[0].Reason)
	}
	eddytest.SetStateMode(eddytest.StateFailing)
	res, _ = eddytest.Process(eddy.Record{Value: []byte(bidJSON(1, 1, 1, 1, ""))})
	if res[0].Code != eddytest.StateError {
		t.Fatalf("code %d %q, want STATE", res[0].Code, res[0].Reason)
	}
}

func TestCorruptState(t *testing.T) {
	eddytest.Reset()
	for _, v := range [][]byte{{2, 0, 0, 0, 0, 0}, {1, 1, 0}, {1, 0, 1, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 9}, {1, 8, 0, 0, 0, 0}, {1, 5, 0, 0, 0, 0}} {
		eddytest.SetState([]byte("7"), v)
		res, err := eddytest.Process(eddy.Record{Value: []byte(bidJSON(7, 1, 1, 1, ""))})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Code != eddytest.Rejected || res[0].Reason != errState.Error() {
			t.Errorf("state %v: code %d %q", v, res[0].Code, res[0].Reason)
		}
	}
}
