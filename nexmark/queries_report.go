package nexmark

import (
	"cmp"
	"slices"
	"time"
)

// The parameters of q15–q19 (the Flink Nexmark benchmark's queries, not in
// Beam's suite).
const (
	// Rank2Price and Rank3Price split prices into the ranks that q15–q17
	// count apart: rank 1 below Rank2Price, rank 2 from Rank2Price to below
	// Rank3Price, rank 3 from Rank3Price on.
	Rank2Price = 10_000
	Rank3Price = 1_000_000
	// DayMs is a day in ms: q15–q17 group bids by the UTC day of their
	// DateTime (Flink's DATE_FORMAT(dateTime, 'yyyy-MM-dd') with the
	// session time zone UTC).
	DayMs = 86_400_000
	// Q19Top is how many bids of an auction q19 keeps.
	Q19Top = 10
)

// PriceRank returns the rank of a price: 1, 2 or 3 (see [Rank2Price]).
func PriceRank(price int64) int {
	switch {
	case price < Rank2Price:
		return 1
	case price < Rank3Price:
		return 2
	}
	return 3
}

// Day returns the UTC day of t (ms since the epoch) as yyyy-MM-dd.
func Day(t int64) string { return time.UnixMilli(t).UTC().Format(time.DateOnly) }

// Minute returns the UTC time of day of t (ms since the epoch) as HH:mm.
func Minute(t int64) string { return time.UnixMilli(t).UTC().Format("15:04") }

// RankCounts are the counts of q15 and q16 for one group of bids: at index
// 0 over all the group's bids, at index r over those of price rank r
// ([PriceRank]). Bids counts bids, Bidders and Auctions the distinct
// bidders and auctions of those bids (a bidder with bids in two ranks
// counts in both).
type RankCounts struct {
	Bids, Bidders, Auctions [4]int64
}

// Compare orders by Bids, then Bidders and Auctions.
func (c RankCounts) Compare(o RankCounts) int {
	return cmp.Or(slices.Compare(c.Bids[:], o.Bids[:]), slices.Compare(c.Bidders[:], o.Bidders[:]),
		slices.Compare(c.Auctions[:], o.Auctions[:]))
}

// rankCounts counts bids.
func rankCounts(bids []*Bid) RankCounts {
	var c RankCounts
	var bidders, auctions [4]map[int64]bool
	for r := range 4 {
		bidders[r], auctions[r] = map[int64]bool{}, map[int64]bool{}
	}
	for _, b := range bids {
		for _, r := range []int{0, PriceRank(b.Price)} {
			c.Bids[r]++
			bidders[r][b.Bidder] = true
			auctions[r][b.Auction] = true
		}
	}
	for r := range 4 {
		c.Bidders[r], c.Auctions[r] = int64(len(bidders[r])), int64(len(auctions[r]))
	}
	return c
}

// Q15Result is q15's bidding statistics of a day.
type Q15Result struct {
	Day string // yyyy-MM-dd
	RankCounts
}

// Compare orders by Day, then the counts.
func (r Q15Result) Compare(o Q15Result) int {
	return cmp.Or(cmp.Compare(r.Day, o.Day), r.RankCounts.Compare(o.RankCounts))
}

// Q15 reports the bidding statistics of every day that has bids: how many
// bids, distinct bidders and distinct auctions, in all and per price rank.
// It gives each day's final values (Flink's query is an unbounded group
// aggregation that updates them with every bid).
func Q15(events []Event) []Q15Result {
	byDay := map[string][]*Bid{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			byDay[Day(b.DateTime)] = append(byDay[Day(b.DateTime)], b)
		}
	}
	var out []Q15Result
	for day, bids := range byDay {
		out = append(out, Q15Result{Day: day, RankCounts: rankCounts(bids)})
	}
	slices.SortFunc(out, Q15Result.Compare)
	return out
}

// Q16Result is q16's bidding statistics of a channel on a day.
type Q16Result struct {
	Channel string
	Day     string // yyyy-MM-dd
	Minute  string // HH:mm of the channel's last bid of the day
	RankCounts
}

// Compare orders by Channel, then Day, Minute and the counts.
func (r Q16Result) Compare(o Q16Result) int {
	return cmp.Or(cmp.Compare(r.Channel, o.Channel), cmp.Compare(r.Day, o.Day), cmp.Compare(r.Minute, o.Minute),
		r.RankCounts.Compare(o.RankCounts))
}

// Q16 is [Q15] per channel and day, with the largest HH:mm of the group's
// bids (max(DATE_FORMAT(dateTime, 'HH:mm'))).
func Q16(events []Event) []Q16Result {
	type group struct{ channel, day string }
	groups := map[group][]*Bid{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			g := group{b.Channel, Day(b.DateTime)}
			groups[g] = append(groups[g], b)
		}
	}
	var out []Q16Result
	for g, bids := range groups {
		r := Q16Result{Channel: g.channel, Day: g.day, RankCounts: rankCounts(bids)}
		for _, b := range bids {
			r.Minute = max(r.Minute, Minute(b.DateTime))
		}
		out = append(out, r)
	}
	slices.SortFunc(out, Q16Result.Compare)
	return out
}

// Q17Result is q17's statistics of an auction's bids on a day.
type Q17Result struct {
	Auction int64
	Day     string // yyyy-MM-dd
	// Bids counts the bids: at index 0 all, at index r those of price rank
	// r ([PriceRank]).
	Bids                         [4]int64
	MinPrice, MaxPrice, AvgPrice int64
	SumPrice                     int64
}

// Compare orders by Auction, then Day and the other fields.
func (r Q17Result) Compare(o Q17Result) int {
	return cmp.Or(cmp.Compare(r.Auction, o.Auction), cmp.Compare(r.Day, o.Day), slices.Compare(r.Bids[:], o.Bids[:]),
		cmp.Compare(r.MinPrice, o.MinPrice), cmp.Compare(r.MaxPrice, o.MaxPrice), cmp.Compare(r.AvgPrice, o.AvgPrice),
		cmp.Compare(r.SumPrice, o.SumPrice))
}

// Q17 reports, for every auction and day with bids, the number of bids in
// all and per price rank, and the least, greatest, average and total price.
// The average is SQL's AVG of a BIGINT: the sum divided by the count in
// integers, truncated towards zero.
func Q17(events []Event) []Q17Result {
	type group struct {
		auction int64
		day     string
	}
	groups := map[group]*Q17Result{}
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		g := group{b.Auction, Day(b.DateTime)}
		r := groups[g]
		if r == nil {
			r = &Q17Result{Auction: b.Auction, Day: g.day, MinPrice: b.Price, MaxPrice: b.Price}
			groups[g] = r
		}
		r.Bids[0]++
		r.Bids[PriceRank(b.Price)]++
		r.MinPrice, r.MaxPrice = min(r.MinPrice, b.Price), max(r.MaxPrice, b.Price)
		r.SumPrice += b.Price
	}
	var out []Q17Result
	for _, r := range groups {
		r.AvgPrice = r.SumPrice / r.Bids[0]
		out = append(out, *r)
	}
	slices.SortFunc(out, Q17Result.Compare)
	return out
}

// Q18 returns the last bid of every bidder on every auction: the one with
// the latest DateTime and, of several at that time, the last in the input
// (Flink's deduplication keeping the last row by event time replaces the
// row it holds with one of the same time).
func Q18(events []Event) []Bid {
	type pair struct{ bidder, auction int64 }
	last := map[pair]*Bid{}
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		p := pair{b.Bidder, b.Auction}
		if l := last[p]; l == nil || b.DateTime >= l.DateTime {
			last[p] = b
		}
	}
	var out []Bid
	for _, b := range last {
		out = append(out, *b)
	}
	slices.SortFunc(out, Bid.Compare)
	return out
}

// Q19Result is a bid among the Q19Top highest of its auction, with its rank
// from 1.
type Q19Result struct {
	Bid
	Rank int64
}

// Compare orders by Auction, then Rank and the bid.
func (r Q19Result) Compare(o Q19Result) int {
	return cmp.Or(cmp.Compare(r.Auction, o.Auction), cmp.Compare(r.Rank, o.Rank), r.Bid.Compare(o.Bid))
}

// Q19Order orders the bids of an auction for q19: the highest price first,
// then the earliest DateTime, then the smallest bidder. Bids equal in all
// three keep their input order (q19's ROW_NUMBER() OVER (PARTITION BY
// auction ORDER BY price DESC) leaves ties to the engine; these make it
// deterministic).
func Q19Order(a, b Bid) int {
	return cmp.Or(cmp.Compare(b.Price, a.Price), cmp.Compare(a.DateTime, b.DateTime), cmp.Compare(a.Bidder, b.Bidder))
}

// Q19 returns the [Q19Top] highest bids of every auction in [Q19Order],
// ranked from 1: the final top list of each auction.
func Q19(events []Event) []Q19Result {
	byAuction := map[int64][]Bid{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			byAuction[b.Auction] = append(byAuction[b.Auction], *b)
		}
	}
	var out []Q19Result
	for _, bids := range byAuction {
		slices.SortStableFunc(bids, Q19Order)
		for i, b := range bids[:min(len(bids), Q19Top)] {
			out = append(out, Q19Result{Bid: b, Rank: int64(i + 1)})
		}
	}
	slices.SortFunc(out, Q19Result.Compare)
	return out
}
