package nexmark

import (
	"testing"
)

// Times of the report tests: day1 is 2015-07-15T00:00:00Z.
const (
	day1 = int64(1436918400000)
	day2 = day1 + DayMs
)

// onChannel returns the bid event ev on channel ch.
func onChannel(ev Event, ch string) Event {
	b := *ev.Bid
	b.Channel = ch
	ev.Bid = &b
	return ev
}

func TestPriceRank(t *testing.T) {
	for _, c := range []struct {
		price int64
		rank  int
	}{{-5, 1}, {0, 1}, {9_999, 1}, {10_000, 2}, {999_999, 2}, {1_000_000, 3}, {1 << 40, 3}} {
		if got := PriceRank(c.price); got != c.rank {
			t.Errorf("PriceRank(%d) = %d, want %d", c.price, got, c.rank)
		}
	}
}

func TestDayAndMinute(t *testing.T) {
	for _, c := range []struct {
		t           int64
		day, minute string
	}{
		{day1, "2015-07-15", "00:00"},
		{day2 - 1, "2015-07-15", "23:59"},
		{day2, "2015-07-16", "00:00"},
		{-1, "1969-12-31", "23:59"},
		{-62167219200000, "0000-01-01", "00:00"},
		{253402300799999, "9999-12-31", "23:59"},
	} {
		if d, m := Day(c.t), Minute(c.t); d != c.day || m != c.minute {
			t.Errorf("Day, Minute(%d) = %s %s, want %s %s", c.t, d, m, c.day, c.minute)
		}
	}
}

// reportInput has bids of two days: on day 1 bidders 1 and 2 on auctions
// 10 and 11 in ranks 1 and 2 and bidder 1 in rank 3, on day 2 one bid.
var reportInput = []Event{
	B(10, 1, 5, day1+60_000),                     // rank 1, 00:01
	B(10, 1, 9_999, day1+61_000),                 // rank 1 again: same bidder, same auction
	B(11, 2, 10_000, day1+3_600_000),             // rank 2, 01:00
	onChannel(B(11, 1, 50, day1+7_200_000), "x"), // rank 1, 02:00
	B(10, 1, 1_000_000, day2-1),                  // rank 3, 23:59
	A(10, 1, 10, 0, day1, day2),
	P(1, "a", "OR", day1),
	B(12, 3, 7, day2), // day 2
}

func TestQ15(t *testing.T) {
	check(t, Q15(reportInput), []Q15Result{
		{Day: "2015-07-15", RankCounts: RankCounts{
			Bids:     [4]int64{5, 3, 1, 1},
			Bidders:  [4]int64{2, 1, 1, 1}, // rank 1: bidder 1 only
			Auctions: [4]int64{2, 2, 1, 1}, // rank 1: auctions 10 and 11
		}},
		{Day: "2015-07-16", RankCounts: RankCounts{Bids: [4]int64{1, 1, 0, 0}, Bidders: [4]int64{1, 1, 0, 0}, Auctions: [4]int64{1, 1, 0, 0}}},
	})
}

func TestQ16(t *testing.T) {
	check(t, Q16(reportInput), []Q16Result{
		{Channel: "c", Day: "2015-07-15", Minute: "23:59", RankCounts: RankCounts{
			Bids:     [4]int64{4, 2, 1, 1},
			Bidders:  [4]int64{2, 1, 1, 1},
			Auctions: [4]int64{2, 1, 1, 1},
		}},
		{Channel: "c", Day: "2015-07-16", Minute: "00:00", RankCounts: RankCounts{Bids: [4]int64{1, 1, 0, 0}, Bidders: [4]int64{1, 1, 0, 0}, Auctions: [4]int64{1, 1, 0, 0}}},
		{Channel: "x", Day: "2015-07-15", Minute: "02:00", RankCounts: RankCounts{Bids: [4]int64{1, 1, 0, 0}, Bidders: [4]int64{1, 1, 0, 0}, Auctions: [4]int64{1, 1, 0, 0}}},
	})
}

func TestQ17(t *testing.T) {
	check(t, Q17(reportInput), []Q17Result{
		{Auction: 10, Day: "2015-07-15", Bids: [4]int64{3, 2, 0, 1}, MinPrice: 5, MaxPrice: 1_000_000, AvgPrice: 336_668, SumPrice: 1_010_004},
		{Auction: 11, Day: "2015-07-15", Bids: [4]int64{2, 1, 1, 0}, MinPrice: 50, MaxPrice: 10_000, AvgPrice: 5_025, SumPrice: 10_050},
		{Auction: 12, Day: "2015-07-16", Bids: [4]int64{1, 1, 0, 0}, MinPrice: 7, MaxPrice: 7, AvgPrice: 7, SumPrice: 7},
	})
	// The average truncates: (1+2)/2 is 1, (-1-2)/2 is -1.
	check(t, Q17([]Event{B(1, 1, 1, 0), B(1, 1, 2, 1), B(2, 1, -1, 0), B(2, 1, -2, 1)}), []Q17Result{
		{Auction: 1, Day: "1970-01-01", Bids: [4]int64{2, 2, 0, 0}, MinPrice: 1, MaxPrice: 2, AvgPrice: 1, SumPrice: 3},
		{Auction: 2, Day: "1970-01-01", Bids: [4]int64{2, 2, 0, 0}, MinPrice: -2, MaxPrice: -1, AvgPrice: -1, SumPrice: -3},
	})
}

func TestQ18(t *testing.T) {
	in := []Event{
		B(1, 7, 100, 50),
		B(1, 7, 300, 40), // earlier: not the last
		B(1, 8, 10, 10),
		B(1, 8, 20, 10), // the same time, later in the input: the last
		B(2, 7, 5, 60),
		P(7, "a", "OR", 0),
	}
	check(t, Q18(in), []Bid{
		{Auction: 1, Bidder: 8, Price: 20, Channel: "c", DateTime: 10},
		{Auction: 1, Bidder: 7, Price: 100, Channel: "c", DateTime: 50},
		{Auction: 2, Bidder: 7, Price: 5, Channel: "c", DateTime: 60},
	})
}

func TestQ19(t *testing.T) {
	var in []Event
	// Auction 1: prices 1..12 (12 bids) at decreasing times, then bids of
	// 12 by bidders 5 and 4 at time 100, by bidder 3 at time 99, and by
	// bidder 4 again at time 100 on another channel.
	for p := int64(1); p <= 12; p++ {
		in = append(in, B(1, 100+p, p, 1000-p))
	}
	in = append(in, B(1, 5, 12, 100), B(1, 4, 12, 100), B(1, 3, 12, 99), onChannel(B(1, 4, 12, 100), "z"))
	in = append(in, B(2, 1, 50, 0), A(2, 1, 10, 0, 0, 1))
	b := func(bidder, price, t, rank int64) Q19Result {
		return Q19Result{Bid: Bid{Auction: 1, Bidder: bidder, Price: price, Channel: "c", DateTime: t}, Rank: rank}
	}
	tied := b(4, 12, 100, 3)
	tied.Channel = "z"
	want := []Q19Result{
		b(3, 12, 99, 1),
		b(4, 12, 100, 2),
		tied, // equal to rank 2 in the order: after it, as in the input
		b(5, 12, 100, 4),
		b(112, 12, 988, 5),
		b(111, 11, 989, 6),
		b(110, 10, 990, 7),
		b(109, 9, 991, 8),
		b(108, 8, 992, 9),
		b(107, 7, 993, 10),
		{Bid: Bid{Auction: 2, Bidder: 1, Price: 50, Channel: "c", DateTime: 0}, Rank: 1},
	}
	check(t, Q19(in), want)
}

// TestReportQueriesOnGenerated checks q15–q19 over generated events
// against one another: q15's bids are q16's, q17's and the input's; q18
// has a bid per bidder and auction; q19 at most Q19Top per auction, ranked
// from 1 without gaps.
func TestReportQueriesOnGenerated(t *testing.T) {
	evs := generate(t, defaultN(50_000))
	var bids int64
	pairs := map[[2]int64]bool{}
	for _, ev := range evs {
		if b := ev.Bid; b != nil {
			bids++
			pairs[[2]int64{b.Bidder, b.Auction}] = true
		}
	}
	q15, q16, q17, q18, q19 := Q15(evs), Q16(evs), Q17(evs), Q18(evs), Q19(evs)
	var n16, n17 int64
	for _, r := range q16 {
		n16 += r.Bids[0]
	}
	for _, r := range q17 {
		n17 += r.Bids[0]
	}
	if len(q15) != 1 || q15[0].Bids[0] != bids || n16 != bids || n17 != bids {
		t.Fatalf("%d bids; q15 %+v, q16 %d, q17 %d", bids, q15, n16, n17)
	}
	if c := q15[0].RankCounts; c.Bids[1]+c.Bids[2]+c.Bids[3] != bids || c.Bidders[0] > bids || c.Auctions[0] > c.Bids[0] {
		t.Fatalf("q15 %+v", c)
	}
	if len(q18) != len(pairs) {
		t.Fatalf("q18: %d bids, %d bidder and auction pairs", len(q18), len(pairs))
	}
	for i, r := range q19 {
		first := i == 0 || q19[i-1].Auction != r.Auction
		if first && r.Rank != 1 || !first && (r.Rank != q19[i-1].Rank+1 || Q19Order(q19[i-1].Bid, r.Bid) > 0) || r.Rank > Q19Top {
			t.Fatalf("q19 result %d: %+v after %+v", i, r, q19[max(i-1, 0)])
		}
	}
	t.Logf("over %d events (%d bids): q16 %d, q17 %d, q18 %d, q19 %d results", len(evs), bids, len(q16), len(q17), len(q18), len(q19))
}
