package nexmark

import (
	"slices"
	"testing"
)

// bidX is B with an Extra.
func bidX(auction, bidder, price, t int64, extra string) Event {
	ev := B(auction, bidder, price, t)
	ev.Bid.Extra = extra
	return ev
}

// row is the Q9Result of auction event a (made by A) and bid event b.
func row(a, b Event) Q9Result {
	x, y := a.Auction, b.Bid
	return Q9Result{ID: x.ID, Reserve: x.Reserve, DateTime: x.DateTime, Expires: x.Expires, Seller: x.Seller, Category: x.Category,
		Auction: y.Auction, Bidder: y.Bidder, Price: y.Price, BidDateTime: y.DateTime, BidExtra: y.Extra}
}

// sqlWinningInput exercises SQL's winning bids: auction 1 of seller 100 in
// category 10, 2 of seller 100 in 11, 3 of seller 200 in 10, 4 without a
// bid in its time.
var (
	a1 = A(1, 100, 10, 50, 0, 1000)
	a2 = A(2, 100, 11, 0, 0, 100)
	a3 = A(3, 200, 10, 0, 10, 100)
	a4 = A(4, 200, 10, 0, 500, 600)

	win1 = B(1, 9, 500, 1000)      // at the expiry: in time, and the highest
	win2 = bidX(2, 6, 11, 40, "b") // ties on price and time, then bidder 6 < 7, then "b" < "c"
	win3 = B(3, 4, 70, 20)         // before its auction in the input, after it opened
)

var sqlWinningInput = []Event{
	B(1, 7, 999, -5), // before the auction opened: out
	a1,
	B(1, 5, 40, 10),    // below the reserve: counts in SQL
	B(1, 8, 600, 1001), // after the expiry: out
	win1,
	a2,
	B(2, 8, 11, 50), // same price, later
	bidX(2, 7, 11, 40, "a"),
	bidX(2, 6, 11, 40, "c"),
	win2,
	B(2, 5, 10, 30),
	win3,
	a3,
	B(3, 4, 69, 99),
	a4,
	B(4, 1, 10, 499),         // before auction 4 opened
	B(4, 1, 10, 601),         // after it closed
	B(9, 1, 1000, 10),        // no such auction
	A(2, 300, 12, 0, 0, 100), // auction 2 again: ignored
}

func TestQ9(t *testing.T) {
	check(t, Q9(sqlWinningInput), []Q9Result{row(a1, win1), row(a2, win2), row(a3, win3)})
	// The winner does not depend on the order of the input.
	rev := slices.Clone(sqlWinningInput[:len(sqlWinningInput)-1])
	slices.Reverse(rev)
	check(t, Q9(rev), []Q9Result{row(a1, win1), row(a2, win2), row(a3, win3)})
}

func TestBeatsBid(t *testing.T) {
	b := func(price, t, bidder int64, extra string) *Bid {
		return &Bid{Price: price, DateTime: t, Bidder: bidder, Extra: extra}
	}
	for _, c := range []struct {
		x, y *Bid
		want bool
	}{
		{b(2, 9, 9, "z"), b(1, 0, 0, ""), true},
		{b(1, 0, 0, ""), b(2, 9, 9, "z"), false},
		{b(1, 1, 9, "z"), b(1, 2, 0, ""), true},
		{b(1, 1, 1, "z"), b(1, 1, 2, ""), true},
		{b(1, 1, 1, "a"), b(1, 1, 1, "b"), true},
		{b(1, 1, 1, "b"), b(1, 1, 1, "a"), false},
		{b(1, 1, 1, "a"), b(1, 1, 1, "a"), false},
	} {
		if got := BeatsBid(c.x, c.y); got != c.want {
			t.Errorf("BeatsBid(%+v, %+v) = %v", c.x, c.y, got)
		}
	}
}

func TestCategoryAverages(t *testing.T) {
	check(t, CategoryAverages(sqlWinningInput), []CategoryAverage{
		{Category: 10, Auctions: 2, Final: 285}, // (500+70)/2
		{Category: 11, Auctions: 1, Final: 11},
	})
	in := append(slices.Clone(sqlWinningInput), A(5, 1, 11, 0, 0, 10), B(5, 1, 2, 5))
	check(t, CategoryAverages(in), []CategoryAverage{
		{Category: 10, Auctions: 2, Final: 285},
		{Category: 11, Auctions: 2, Final: 6}, // 13/2 = 6.5, truncated
	})
}

func TestSellerAverages(t *testing.T) {
	in := slices.Clone(sqlWinningInput)
	// Seller 300: auctions 101..112, auction i closing at 1013-(i-100),
	// in reverse order of their bids' times, and won at time i-100 for
	// 10*(i-100); auction 113 closes with 112, at 1001, and is won for 5.
	for i := int64(1); i <= 12; i++ {
		in = append(in, A(100+i, 300, 12, 0, 0, 1013-i), B(100+i, 1, 10*i, i))
	}
	in = append(in, A(113, 300, 12, 0, 0, 1001), B(113, 1, 5, 3))
	check(t, SellerAverages(in), []SellerAverage{
		{Seller: 100, Expires: 100, Auction: 2, AvgPrice: 11},
		{Seller: 100, Expires: 1000, Auction: 1, AvgPrice: 256}, // (11+500)/2 = 255.5, rounded up
		{Seller: 200, Expires: 100, Auction: 3, AvgPrice: 70},
		{Seller: 300, Expires: 1001, Auction: 112, AvgPrice: 120},
		{Seller: 300, Expires: 1001, Auction: 113, AvgPrice: 63}, // 125/2
		{Seller: 300, Expires: 1002, Auction: 111, AvgPrice: 78}, // 235/3
		{Seller: 300, Expires: 1003, Auction: 110, AvgPrice: 84}, // 335/4
		{Seller: 300, Expires: 1004, Auction: 109, AvgPrice: 85},
		{Seller: 300, Expires: 1005, Auction: 108, AvgPrice: 84},
		{Seller: 300, Expires: 1006, Auction: 107, AvgPrice: 82},
		{Seller: 300, Expires: 1007, Auction: 106, AvgPrice: 79},
		{Seller: 300, Expires: 1008, Auction: 105, AvgPrice: 76},
		{Seller: 300, Expires: 1009, Auction: 104, AvgPrice: 73}, // 725/10
		{Seller: 300, Expires: 1010, Auction: 103, AvgPrice: 64}, // the ten latest: 112's 120 out, 635/10
		{Seller: 300, Expires: 1011, Auction: 102, AvgPrice: 65}, // 113's 5 out, 650/10
		{Seller: 300, Expires: 1012, Auction: 101, AvgPrice: 55}, // 111's 110 out, 550/10
	})
}

func TestQ20(t *testing.T) {
	in := []Event{
		B(3, 1, 30, 5), // before its auction, in the input and in time: joins
		a3,
		B(3, 2, 31, 50),
		B(3, 2, 32, 5000), // long after it closed: the join is unbounded
		a2,                // category 11
		B(2, 1, 40, 50),
		B(9, 1, 50, 50), // no such auction
	}
	want := []Q20Result{}
	for _, b := range []Event{in[0], in[2], in[3]} {
		x, y := a3.Auction, b.Bid
		want = append(want, Q20Result{Auction: 3, Bidder: y.Bidder, Price: y.Price, Channel: "c", BidDateTime: y.DateTime,
			AuctionDateTime: x.DateTime, Expires: x.Expires, Seller: x.Seller, Category: 10})
	}
	check(t, Q20(in), want)
}

// TestAuctionQueriesOnGenerated checks invariants of q4, q6, q9 and q20
// over generated events.
func TestAuctionQueriesOnGenerated(t *testing.T) {
	evs := generate(t, defaultN(100_000))
	auctions := firstAuctions(evs)
	q9 := Q9(evs)
	byID := map[int64]Q9Result{}
	for _, r := range q9 {
		a := auctions[r.ID]
		if a == nil || r.Auction != r.ID || r.BidDateTime < a.DateTime || r.BidDateTime > a.Expires || r.Category != a.Category {
			t.Fatalf("q9: %+v for auction %+v", r, a)
		}
		byID[r.ID] = r
	}
	for _, ev := range evs {
		if b := ev.Bid; b != nil {
			if w, ok := byID[b.Auction]; ok && b.DateTime >= w.DateTime && b.DateTime <= w.Expires && b.Price > w.Price {
				t.Fatalf("q9: bid %+v beats the winner %+v", b, w)
			}
		}
	}
	var n int64
	for _, r := range CategoryAverages(evs) {
		n += r.Auctions
	}
	q6 := SellerAverages(evs)
	if len(q9) < len(auctions)/2 || n != int64(len(q9)) || len(q6) != len(q9) {
		t.Fatalf("%d auctions, %d winners; q4 counts %d, q6 has %d results", len(auctions), len(q9), n, len(q6))
	}
	q20 := Q20(evs)
	for _, r := range q20 {
		if r.Category != Q20Category {
			t.Fatalf("q20: %+v", r)
		}
	}
	if len(q20) == 0 {
		t.Fatal("q20: no results")
	}
	t.Logf("over %d events: %d auctions, %d winners, %d q20 rows", len(evs), len(auctions), len(q9), len(q20))
}
