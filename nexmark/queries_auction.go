package nexmark

import (
	"cmp"
	"slices"
)

// The references of q4, q6, q9 and q20 as the Flink Nexmark benchmark's SQL
// defines them (github.com/nexmark/nexmark, queries q4.sql, q6.sql, q9.sql
// and q20.sql), with q6 after Beam since Flink cannot run its SQL (the
// Beam-shaped references of q4 and q6 these replaced had no user left):
//
//   - An auction's winning bid ([Q9]) is SQL's: among the bids that name
//     the auction with B.dateTime BETWEEN A.dateTime AND A.expires (both
//     ends included; a bid made before its auction opened does not count),
//     the first by price descending, then dateTime ascending (q9's
//     ROW_NUMBER order). The reserve is ignored. Ties on both are broken by
//     bidder, then extra, ascending, so that the winner is one bid whatever
//     the order of the input (SQL leaves the row of a tie unspecified).
//     Auctions without such a bid have no winner (an inner join).
//   - q4 ([CategoryAverages]) averages the winning prices per category as
//     Flink's AVG of a BIGINT does: the sum divided by the count in integer
//     arithmetic, truncated (Beam rounds).
//   - q6 ([SellerAverages]) is Beam's moving mean, emitted at every closed
//     auction of a seller, over the seller's last [Q6Auctions] closed
//     auctions in closing order (the auction's expires, then its id).
//     Beam keeps the latest winning bids by the bid's time instead; the
//     SQL orders its OVER window by the bid's time too, and spans 11 rows
//     (10 PRECEDING AND CURRENT ROW). The average rounds as Beam's Java
//     (Math.round).
//   - q20 ([Q20]) is the SQL's unbounded inner join of every bid with its
//     auction, whatever their times, kept when the category is
//     [Q20Category].
//
// As for the other references, the input is complete: every auction has
// closed. If an auction ID occurs twice, its first event counts.

// Q20Category is the category of q20's auctions.
const Q20Category = 10

// Q9Result is q9's row for an auction with a winning bid: the auction's
// fields, then the bid's, named as the SQL's columns.
type Q9Result struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"itemName"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initialBid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"dateTime"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
	Auction     int64  `json:"auction"`
	Bidder      int64  `json:"bidder"`
	Price       int64  `json:"price"`
	BidDateTime int64  `json:"bid_dateTime"`
	BidExtra    string `json:"bid_extra"`
}

// Compare orders by ID, then the other fields in order.
func (r Q9Result) Compare(o Q9Result) int {
	return cmp.Or(
		cmp.Compare(r.ID, o.ID),
		cmp.Compare(r.ItemName, o.ItemName),
		cmp.Compare(r.Description, o.Description),
		cmp.Compare(r.InitialBid, o.InitialBid),
		cmp.Compare(r.Reserve, o.Reserve),
		cmp.Compare(r.DateTime, o.DateTime),
		cmp.Compare(r.Expires, o.Expires),
		cmp.Compare(r.Seller, o.Seller),
		cmp.Compare(r.Category, o.Category),
		cmp.Compare(r.Extra, o.Extra),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.BidDateTime, o.BidDateTime),
		cmp.Compare(r.BidExtra, o.BidExtra),
	)
}

// BeatsBid reports whether bid b wins over bid o of the same auction: a
// higher price, then an earlier DateTime, then a smaller Bidder, then a
// smaller Extra.
func BeatsBid(b, o *Bid) bool {
	return cmp.Or(
		cmp.Compare(o.Price, b.Price),
		cmp.Compare(b.DateTime, o.DateTime),
		cmp.Compare(b.Bidder, o.Bidder),
		cmp.Compare(b.Extra, o.Extra),
	) < 0
}

// firstAuctions returns the first auction of each ID in the input.
func firstAuctions(events []Event) map[int64]*Auction {
	auctions := map[int64]*Auction{}
	for _, ev := range events {
		if a := ev.Auction; a != nil && auctions[a.ID] == nil {
			auctions[a.ID] = a
		}
	}
	return auctions
}

// Q9 returns the winning bid of every auction that has one, with its
// auction: among the bids naming the auction made between its DateTime and
// Expires, both included, the one that [BeatsBid] all others. The reserve
// is ignored.
func Q9(events []Event) []Q9Result {
	auctions := firstAuctions(events)
	best := map[int64]*Bid{}
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		a := auctions[b.Auction]
		if a == nil || b.DateTime < a.DateTime || b.DateTime > a.Expires {
			continue
		}
		if w := best[a.ID]; w == nil || BeatsBid(b, w) {
			best[a.ID] = b
		}
	}
	out := make([]Q9Result, 0, len(best))
	for id, b := range best {
		a := auctions[id]
		out = append(out, Q9Result{
			ID: a.ID, ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid, Reserve: a.Reserve,
			DateTime: a.DateTime, Expires: a.Expires, Seller: a.Seller, Category: a.Category, Extra: a.Extra,
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, BidDateTime: b.DateTime, BidExtra: b.Extra,
		})
	}
	slices.SortFunc(out, Q9Result.Compare)
	return out
}

// CategoryAverage is q4's average winning price of a category, over all
// its closed auctions.
type CategoryAverage struct {
	Category int64
	Auctions int64 // closed auctions of the category with a winning bid
	Final    int64 // the sum of their winning prices / Auctions, truncated
}

// Compare orders by Category, then the other fields.
func (r CategoryAverage) Compare(o CategoryAverage) int {
	return cmp.Or(
		cmp.Compare(r.Category, o.Category),
		cmp.Compare(r.Auctions, o.Auctions),
		cmp.Compare(r.Final, o.Final),
	)
}

// CategoryAverages is q4: per category, the average of the winning prices
// ([Q9]) of all its closed auctions, as Flink's AVG of a BIGINT computes
// it (truncated). Flink's query emits an update at every closed auction;
// this is the last value of each category.
func CategoryAverages(events []Event) []CategoryAverage {
	type acc struct{ n, sum int64 }
	byCategory := map[int64]*acc{}
	for _, w := range Q9(events) {
		a := byCategory[w.Category]
		if a == nil {
			a = &acc{}
			byCategory[w.Category] = a
		}
		a.n++
		a.sum += w.Price
	}
	out := make([]CategoryAverage, 0, len(byCategory))
	for c, a := range byCategory {
		out = append(out, CategoryAverage{Category: c, Auctions: a.n, Final: a.sum / a.n})
	}
	slices.SortFunc(out, CategoryAverage.Compare)
	return out
}

// SellerAverage is one result of q6: when an auction of a seller closes
// with a winning bid, the average winning price of the seller's last
// [Q6Auctions] closed auctions, this one included.
type SellerAverage struct {
	Seller   int64
	Expires  int64 // when the auction closed
	Auction  int64
	AvgPrice int64 // rounded to the nearest, halves up
}

// Compare orders by Seller, then closing order (Expires, then Auction),
// then AvgPrice: each seller's results in the order q6 emits them.
func (r SellerAverage) Compare(o SellerAverage) int {
	return cmp.Or(
		cmp.Compare(r.Seller, o.Seller),
		cmp.Compare(r.Expires, o.Expires),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.AvgPrice, o.AvgPrice),
	)
}

// SellerAverages is q6: for every auction with a winning bid ([Q9]), as it
// closes, the average winning price of its seller's last [Q6Auctions]
// such auctions by closing order (Expires, then ID), this one included.
func SellerAverages(events []Event) []SellerAverage {
	bySeller := map[int64][]Q9Result{}
	for _, w := range Q9(events) {
		bySeller[w.Seller] = append(bySeller[w.Seller], w)
	}
	var out []SellerAverage
	for seller, ws := range bySeller {
		slices.SortFunc(ws, func(a, b Q9Result) int {
			return cmp.Or(cmp.Compare(a.Expires, b.Expires), cmp.Compare(a.ID, b.ID))
		})
		for i, w := range ws {
			last := ws[max(0, i+1-Q6Auctions) : i+1]
			var sum int64
			for _, x := range last {
				sum += x.Price
			}
			out = append(out, SellerAverage{Seller: seller, Expires: w.Expires, Auction: w.ID, AvgPrice: roundDiv(sum, int64(len(last)))})
		}
	}
	slices.SortFunc(out, SellerAverage.Compare)
	return out
}

// Q20Result is a bid of q20 with its auction, named as the SQL's columns.
type Q20Result struct {
	Auction         int64  `json:"auction"`
	Bidder          int64  `json:"bidder"`
	Price           int64  `json:"price"`
	Channel         string `json:"channel"`
	URL             string `json:"url"`
	BidDateTime     int64  `json:"bid_dateTime"`
	BidExtra        string `json:"bid_extra"`
	ItemName        string `json:"itemName"`
	Description     string `json:"description"`
	InitialBid      int64  `json:"initialBid"`
	Reserve         int64  `json:"reserve"`
	AuctionDateTime int64  `json:"auction_dateTime"`
	Expires         int64  `json:"expires"`
	Seller          int64  `json:"seller"`
	Category        int64  `json:"category"`
	AuctionExtra    string `json:"auction_extra"`
}

// Compare orders by Auction, then BidDateTime, Bidder and the other fields
// in order.
func (r Q20Result) Compare(o Q20Result) int {
	return cmp.Or(
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.BidDateTime, o.BidDateTime),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.Channel, o.Channel),
		cmp.Compare(r.URL, o.URL),
		cmp.Compare(r.BidExtra, o.BidExtra),
		cmp.Compare(r.ItemName, o.ItemName),
		cmp.Compare(r.Description, o.Description),
		cmp.Compare(r.InitialBid, o.InitialBid),
		cmp.Compare(r.Reserve, o.Reserve),
		cmp.Compare(r.AuctionDateTime, o.AuctionDateTime),
		cmp.Compare(r.Expires, o.Expires),
		cmp.Compare(r.Seller, o.Seller),
		cmp.Compare(r.Category, o.Category),
		cmp.Compare(r.AuctionExtra, o.AuctionExtra),
	)
}

// Q20 joins every bid with its auction when the auction's category is
// [Q20Category], whatever the order or distance of their times (the SQL's
// unbounded inner join).
func Q20(events []Event) []Q20Result {
	auctions := firstAuctions(events)
	var out []Q20Result
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		a := auctions[b.Auction]
		if a == nil || a.Category != Q20Category {
			continue
		}
		out = append(out, Q20Result{
			Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL,
			BidDateTime: b.DateTime, BidExtra: b.Extra,
			ItemName: a.ItemName, Description: a.Description, InitialBid: a.InitialBid, Reserve: a.Reserve,
			AuctionDateTime: a.DateTime, Expires: a.Expires, Seller: a.Seller, Category: a.Category, AuctionExtra: a.Extra,
		})
	}
	slices.SortFunc(out, Q20Result.Compare)
	return out
}
