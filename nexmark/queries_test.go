package nexmark

import (
	"slices"
	"testing"
)

// Hand-made events: P, A and B build persons, auctions and bids with the
// fields the queries read.

func P(id int64, name, state string, t int64) Event {
	return Event{Time: t, Person: &Person{ID: id, Name: name, City: "City of " + name, State: state, DateTime: t}}
}

func A(id, seller, category, reserve, t, expires int64) Event {
	return Event{Time: t, Auction: &Auction{ID: id, Seller: seller, Category: category, Reserve: reserve, DateTime: t, Expires: expires}}
}

func B(auction, bidder, price, t int64) Event {
	return Event{Time: t, Bid: &Bid{Auction: auction, Bidder: bidder, Price: price, Channel: "c", DateTime: t}}
}

func check[T comparable](t *testing.T, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestQ0(t *testing.T) {
	in := []Event{P(1, "a", "OR", 5), A(2, 1, 10, 0, 6, 9), B(2, 1, 3, 7)}
	got := Q0(in)
	check(t, got, in)
	got[0] = Event{}
	if in[0].Person == nil {
		t.Fatal("Q0 returned its input slice")
	}
}

func TestQ1(t *testing.T) {
	in := []Event{B(1, 2, 12345, 20), P(1, "a", "OR", 5), B(3, 4, 100, 10), B(5, 6, 1, 30)}
	want := []Bid{
		{Auction: 3, Bidder: 4, Price: 89, Channel: "c", DateTime: 10},
		{Auction: 1, Bidder: 2, Price: 10987, Channel: "c", DateTime: 20}, // 12345*89/100 = 10987.05
		{Auction: 5, Bidder: 6, Price: 0, Channel: "c", DateTime: 30},
	}
	check(t, Q1(in), want)
}

func TestQ2(t *testing.T) {
	in := []Event{B(1107, 1, 50, 1), B(1000, 1, 60, 2), A(123, 1, 10, 0, 0, 1), B(123, 2, 70, 3), B(1107, 3, 40, 4)}
	check(t, Q2(in), []Q2Result{{123, 70}, {1107, 40}, {1107, 50}})
}

func TestQ3(t *testing.T) {
	in := []Event{
		P(1, "Ann", "OR", 0),
		P(2, "Bob", "WA", 1),
		P(4, "Dee", "ID", 2),
		A(10, 1, 10, 0, 3, 99),  // Ann, OR: yes
		A(11, 2, 10, 0, 4, 99),  // Bob, WA: no
		A(12, 3, 10, 0, 5, 99),  // Cid, CA, who joins later: yes
		A(13, 1, 11, 0, 6, 99),  // category 11: no
		A(14, 99, 10, 0, 7, 99), // no such person: no
		A(15, 4, 10, 0, 8, 99),  // Dee, ID (her first event): yes
		P(3, "Cid", "CA", 9),
		P(4, "Dee", "WA", 10), // a duplicate: ignored
	}
	check(t, Q3(in), []Q3Result{
		{"Ann", "City of Ann", "OR", 10},
		{"Cid", "City of Cid", "CA", 12},
		{"Dee", "City of Dee", "ID", 15},
	})
}

func TestQ5(t *testing.T) {
	in := []Event{
		B(1, 1, 1, 1000), B(1, 1, 1, 3000),
		B(2, 1, 1, 2500), B(2, 1, 1, 11000),
		B(3, 1, 1, 11000), B(3, 1, 1, 11500),
		P(9, "x", "OR", 4000),
	}
	w := func(start, auction, count int64) Q5Result { return Q5Result{start, start + 10000, auction, count} }
	check(t, Q5(in), []Q5Result{
		w(-8000, 1, 1),
		w(-6000, 1, 2), // 1000, 2500, 3000: auction 1 twice
		w(-4000, 1, 2),
		w(-2000, 1, 2),
		w(0, 1, 2),
		w(2000, 2, 2), // 2500..11500: auctions 2 and 3 twice each
		w(2000, 3, 2),
		w(4000, 3, 2),
		w(6000, 3, 2),
		w(8000, 3, 2),
		w(10000, 3, 2),
	})
}

func TestQ7(t *testing.T) {
	in := []Event{
		B(1, 1, 5, 100), B(2, 2, 9, 200), B(3, 3, 9, 9999),
		B(4, 4, 1, 10000), B(5, 5, 2, 19999), B(6, 6, 3, -1),
		A(7, 1, 10, 0, 50, 100),
	}
	check(t, Q7(in), []Q7Result{
		{Start: -10000, End: 0, Auction: 6, Bidder: 6, Price: 3, DateTime: -1},
		{Start: 0, End: 10000, Auction: 2, Bidder: 2, Price: 9, DateTime: 200},
		{Start: 0, End: 10000, Auction: 3, Bidder: 3, Price: 9, DateTime: 9999},
		{Start: 10000, End: 20000, Auction: 5, Bidder: 5, Price: 2, DateTime: 19999},
	})
}

func TestQ8(t *testing.T) {
	in := []Event{
		P(1, "Ann", "OR", 1000),
		P(2, "Bob", "WA", 9000),
		A(10, 1, 10, 0, 9999, 20000),  // Ann, same window
		A(11, 1, 10, 0, 5000, 20000),  // again: reported once
		A(12, 2, 10, 0, 10000, 20000), // Bob, next window: no
		A(13, 3, 10, 0, 12000, 20000), // Cid, before he joins, same window
		P(3, "Cid", "CA", 15000),
		P(4, "Dee", "CA", 15000), // no auction
	}
	check(t, Q8(in), []Q8Result{
		{Person: 1, Name: "Ann", Start: 0, End: 10000},
		{Person: 3, Name: "Cid", Start: 10000, End: 20000},
	})
}

func TestQ11(t *testing.T) {
	in := []Event{
		B(1, 1, 1, 20001), B(1, 1, 1, 0), B(1, 1, 1, 10000), // 10000 apart: one session
		B(1, 1, 1, 25000), B(1, 1, 1, 20001), // 10001 after 10000: a new one
		B(1, 2, 1, 5),
		P(1, "x", "OR", 3),
	}
	check(t, Q11(in), []BidderCount{
		{Bidder: 1, Start: 0, End: 10001, Count: 2},
		{Bidder: 2, Start: 5, End: 6, Count: 1},
		{Bidder: 1, Start: 20001, End: 25001, Count: 3},
	})
}

func TestQ12(t *testing.T) {
	in := []Event{B(1, 1, 1, 0), B(1, 1, 1, 9999), B(1, 1, 1, 10000), B(1, 2, 1, -1), B(1, 2, 1, 5), A(1, 1, 10, 0, 1, 2)}
	check(t, Q12(in), []BidderCount{
		{Bidder: 2, Start: -10000, End: 0, Count: 1},
		{Bidder: 1, Start: 0, End: 10000, Count: 2},
		{Bidder: 2, Start: 0, End: 10000, Count: 1},
		{Bidder: 1, Start: 10000, End: 20000, Count: 1},
	})
}

func TestRoundDiv(t *testing.T) {
	for _, c := range []struct{ sum, n, want int64 }{
		{91, 2, 46}, {90, 2, 45}, {1, 3, 0}, {2, 3, 1}, {5, 1, 5},
		{-1, 2, 0}, {-3, 2, -1}, {-2, 3, -1}, {-1, 3, 0},
	} {
		if got := roundDiv(c.sum, c.n); got != c.want {
			t.Errorf("roundDiv(%d, %d) = %d, want %d (Math.round)", c.sum, c.n, got, c.want)
		}
	}
}

// TestQueriesOnGenerated runs every reference over generated events and
// checks invariants that tie them to the input.
func TestQueriesOnGenerated(t *testing.T) {
	evs := generate(t, defaultN(100_000))
	bids := 0
	for _, ev := range evs {
		if ev.Bid != nil {
			bids++
		}
	}
	sum := func(rs []BidderCount) (n int64) {
		for _, r := range rs {
			n += r.Count
		}
		return n
	}
	q1, q2, q3, q4, q5, q6, q7, q8, q11, q12 := Q1(evs), Q2(evs), Q3(evs), CategoryAverages(evs), Q5(evs), SellerAverages(evs), Q7(evs), Q8(evs), Q11(evs), Q12(evs)
	if len(q1) != bids || sum(q11) != int64(bids) || sum(q12) != int64(bids) {
		t.Fatalf("q1, q11, q12 account for %d, %d, %d of %d bids", len(q1), sum(q11), sum(q12), bids)
	}
	for _, r := range q4 {
		if r.Category < FirstCategoryID || r.Category >= FirstCategoryID+numCategories {
			t.Fatalf("q4: category %d", r.Category)
		}
	}
	winners := Q9(evs)
	if len(winners) == 0 || len(q6) != len(winners) {
		t.Fatalf("q6 gives %d averages for %d winning bids, want one each", len(q6), len(winners))
	}
	for name, n := range map[string]int{"q2": len(q2), "q3": len(q3), "q4": len(q4), "q5": len(q5), "q6": len(q6), "q7": len(q7), "q8": len(q8), "q11": len(q11), "q12": len(q12)} {
		if n == 0 {
			t.Errorf("%s: no results over %d events", name, len(evs))
		}
	}
	t.Logf("over %d events (%d bids, %d winning): q1 %d, q2 %d, q3 %d, q4 %d, q5 %d, q6 %d, q7 %d, q8 %d, q11 %d, q12 %d results",
		len(evs), bids, len(winners), len(q1), len(q2), len(q3), len(q4), len(q5), len(q6), len(q7), len(q8), len(q11), len(q12))
}
