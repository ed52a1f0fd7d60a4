package nexmark

import (
	"cmp"
	"slices"
)

// The parameters of the queries, as in Beam's NexmarkConfiguration unless
// the package documentation says otherwise.
const (
	// Q1: euros = dollars * EuroNumerator / EuroDenominator, in integers.
	EuroNumerator   = 89
	EuroDenominator = 100
	// Q2 keeps bids on auctions whose ID is a multiple of Q2AuctionSkip.
	Q2AuctionSkip = 123
	// Q3 joins auctions of Q3Category with sellers in Oregon, Idaho and
	// California.
	Q3Category = 10
	// WindowSize is the size of the windows of q5, q7, q8 and q12, in ms.
	WindowSize = 10_000
	// Q5Advance is the advance of q5's hopping windows, in ms.
	Q5Advance = 2_000
	// Q6Auctions is how many of a seller's latest winning bids q6 averages.
	Q6Auctions = 10
	// SessionGap is q11's session gap, in ms: bids of a bidder at most this
	// far apart are in one session.
	SessionGap = 10_000
)

// q3States are the states of q3's sellers.
var q3States = map[string]bool{"OR": true, "ID": true, "CA": true}

// Every reference below is written for clarity, not speed: each reads the
// whole input and computes its result directly. Except for Q0, each returns
// its results sorted by their type's Compare method.

// Q0 is the passthrough: its output is its input, every event unchanged.
func Q0(events []Event) []Event { return slices.Clone(events) }

// Q1 converts every bid's price to euros (see [EuroNumerator]), leaving
// the other fields unchanged.
func Q1(events []Event) []Bid {
	var out []Bid
	for _, ev := range events {
		if ev.Bid != nil {
			b := *ev.Bid
			b.Price = b.Price * EuroNumerator / EuroDenominator
			out = append(out, b)
		}
	}
	slices.SortFunc(out, Bid.Compare)
	return out
}

// Compare orders bids by DateTime, then Auction, Bidder, Price, Channel,
// URL and Extra.
func (b Bid) Compare(o Bid) int {
	return cmp.Or(
		cmp.Compare(b.DateTime, o.DateTime),
		cmp.Compare(b.Auction, o.Auction),
		cmp.Compare(b.Bidder, o.Bidder),
		cmp.Compare(b.Price, o.Price),
		cmp.Compare(b.Channel, o.Channel),
		cmp.Compare(b.URL, o.URL),
		cmp.Compare(b.Extra, o.Extra),
	)
}

// Q2Result is a bid selected by q2.
type Q2Result struct {
	Auction int64
	Price   int64
}

// Compare orders by Auction, then Price.
func (r Q2Result) Compare(o Q2Result) int {
	return cmp.Or(cmp.Compare(r.Auction, o.Auction), cmp.Compare(r.Price, o.Price))
}

// Q2 selects the auction and price of every bid on an auction whose ID is
// a multiple of [Q2AuctionSkip].
func Q2(events []Event) []Q2Result {
	var out []Q2Result
	for _, ev := range events {
		if ev.Bid != nil && ev.Bid.Auction%Q2AuctionSkip == 0 {
			out = append(out, Q2Result{Auction: ev.Bid.Auction, Price: ev.Bid.Price})
		}
	}
	slices.SortFunc(out, Q2Result.Compare)
	return out
}

// Q3Result is an auction of q3 with its seller.
type Q3Result struct {
	Name    string
	City    string
	State   string
	Auction int64
}

// Compare orders by Auction, then Name, City and State.
func (r Q3Result) Compare(o Q3Result) int {
	return cmp.Or(
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Name, o.Name),
		cmp.Compare(r.City, o.City),
		cmp.Compare(r.State, o.State),
	)
}

// Q3 joins every auction in category [Q3Category] with its seller, when
// the seller lives in OR, ID or CA. The join does not depend on the order
// of the input: a seller whose person event comes after the auction
// matches too (as if the persons were a table loaded before any auction).
// If a person ID occurs twice, its first event is used.
func Q3(events []Event) []Q3Result {
	persons := map[int64]*Person{}
	for _, ev := range events {
		if p := ev.Person; p != nil && persons[p.ID] == nil {
			persons[p.ID] = p
		}
	}
	var out []Q3Result
	for _, ev := range events {
		a := ev.Auction
		if a == nil || a.Category != Q3Category {
			continue
		}
		if p := persons[a.Seller]; p != nil && q3States[p.State] {
			out = append(out, Q3Result{Name: p.Name, City: p.City, State: p.State, Auction: a.ID})
		}
	}
	slices.SortFunc(out, Q3Result.Compare)
	return out
}

// roundDiv is sum/n rounded to the nearest integer, halves up: Java's
// Math.round(sum / (double) n) for any sum and n a double represents
// exactly enough (all that the queries produce).
func roundDiv(sum, n int64) int64 {
	num, den := 2*sum+n, 2*n
	q := num / den
	if num%den != 0 && num < 0 {
		q-- // floor
	}
	return q
}

// floorDiv is a/b rounded down.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// tumbling returns the start of the tumbling window of the given size
// holding t: windows are [k*size, (k+1)*size).
func tumbling(t, size int64) int64 { return floorDiv(t, size) * size }

// Q5Result is an auction with the most bids in a window of q5.
type Q5Result struct {
	Start   int64 // the window [Start, End), ms
	End     int64
	Auction int64
	Count   int64 // its bids in the window
}

// Compare orders by Start, then Auction, End and Count.
func (r Q5Result) Compare(o Q5Result) int {
	return cmp.Or(
		cmp.Compare(r.Start, o.Start),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.End, o.End),
		cmp.Compare(r.Count, o.Count),
	)
}

// Q5 finds the hot items: for every hopping window of [WindowSize] ms
// starting every [Q5Advance] ms (windows [k*Q5Advance, k*Q5Advance +
// WindowSize)) that holds bids, the auctions with the most bids in it, with
// their count. Ties give several results for one window.
func Q5(events []Event) []Q5Result {
	type window struct{ start, end int64 }
	counts := map[window]map[int64]int64{}
	for _, ev := range events {
		b := ev.Bid
		if b == nil {
			continue
		}
		// The windows holding t start after t-WindowSize, at or before t.
		for s := tumbling(b.DateTime, Q5Advance); s > b.DateTime-WindowSize; s -= Q5Advance {
			w := window{s, s + WindowSize}
			if counts[w] == nil {
				counts[w] = map[int64]int64{}
			}
			counts[w][b.Auction]++
		}
	}
	var out []Q5Result
	for w, byAuction := range counts {
		most := int64(0)
		for _, n := range byAuction {
			most = max(most, n)
		}
		for auction, n := range byAuction {
			if n == most {
				out = append(out, Q5Result{Start: w.start, End: w.end, Auction: auction, Count: n})
			}
		}
	}
	slices.SortFunc(out, Q5Result.Compare)
	return out
}

// Q7Result is a highest bid of a window of q7.
type Q7Result struct {
	Start    int64 // the window [Start, End), ms
	End      int64
	Auction  int64
	Bidder   int64
	Price    int64
	DateTime int64
}

// Compare orders by Start, then DateTime, Auction, Bidder, Price and End.
func (r Q7Result) Compare(o Q7Result) int {
	return cmp.Or(
		cmp.Compare(r.Start, o.Start),
		cmp.Compare(r.DateTime, o.DateTime),
		cmp.Compare(r.Auction, o.Auction),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.Price, o.Price),
		cmp.Compare(r.End, o.End),
	)
}

// Q7 finds, for every tumbling window of [WindowSize] ms that holds bids,
// the bids with the window's highest price (all of them, if several share
// it).
func Q7(events []Event) []Q7Result {
	highest := map[int64]int64{} // window start -> highest price
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			s := tumbling(b.DateTime, WindowSize)
			if p, ok := highest[s]; !ok || b.Price > p {
				highest[s] = b.Price
			}
		}
	}
	var out []Q7Result
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			s := tumbling(b.DateTime, WindowSize)
			if b.Price == highest[s] {
				out = append(out, Q7Result{Start: s, End: s + WindowSize, Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime})
			}
		}
	}
	slices.SortFunc(out, Q7Result.Compare)
	return out
}

// Q8Result is a new person of q8 who opened an auction in the window in
// which they joined.
type Q8Result struct {
	Person int64
	Name   string
	Start  int64 // the window [Start, End), ms
	End    int64
}

// Compare orders by Start, then Person, Name and End.
func (r Q8Result) Compare(o Q8Result) int {
	return cmp.Or(
		cmp.Compare(r.Start, o.Start),
		cmp.Compare(r.Person, o.Person),
		cmp.Compare(r.Name, o.Name),
		cmp.Compare(r.End, o.End),
	)
}

// Q8 monitors new users: every person who, as a seller, opened at least one
// auction in the same tumbling window of [WindowSize] ms as the person
// joined (the person's and the auction's DateTime in one window). Each
// (person, name, window) is reported once however many auctions match.
func Q8(events []Event) []Q8Result {
	type sellerWindow struct{ seller, start int64 }
	opened := map[sellerWindow]bool{}
	for _, ev := range events {
		if a := ev.Auction; a != nil {
			opened[sellerWindow{a.Seller, tumbling(a.DateTime, WindowSize)}] = true
		}
	}
	seen := map[Q8Result]bool{}
	var out []Q8Result
	for _, ev := range events {
		p := ev.Person
		if p == nil {
			continue
		}
		s := tumbling(p.DateTime, WindowSize)
		r := Q8Result{Person: p.ID, Name: p.Name, Start: s, End: s + WindowSize}
		if opened[sellerWindow{p.ID, s}] && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	slices.SortFunc(out, Q8Result.Compare)
	return out
}

// BidderCount is a number of bids of a bidder in a window: the result of
// q11 (session windows) and q12 (tumbling windows).
type BidderCount struct {
	Bidder int64
	Start  int64 // the window [Start, End), ms
	End    int64
	Count  int64
}

// Compare orders by Start, then Bidder, End and Count.
func (r BidderCount) Compare(o BidderCount) int {
	return cmp.Or(
		cmp.Compare(r.Start, o.Start),
		cmp.Compare(r.Bidder, o.Bidder),
		cmp.Compare(r.End, o.End),
		cmp.Compare(r.Count, o.Count),
	)
}

// Q11 counts the bids of every user session: a bidder's bids ordered by
// DateTime, split wherever two consecutive bids are more than [SessionGap]
// ms apart. A session is reported as [first bid, last bid + 1).
func Q11(events []Event) []BidderCount {
	times := map[int64][]int64{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			times[b.Bidder] = append(times[b.Bidder], b.DateTime)
		}
	}
	var out []BidderCount
	for bidder, ts := range times {
		slices.Sort(ts)
		session := BidderCount{Bidder: bidder, Start: ts[0], End: ts[0] + 1, Count: 1}
		for _, t := range ts[1:] {
			if t-(session.End-1) > SessionGap {
				out = append(out, session)
				session = BidderCount{Bidder: bidder, Start: t, End: t + 1}
			}
			session.End = t + 1
			session.Count++
		}
		out = append(out, session)
	}
	slices.SortFunc(out, BidderCount.Compare)
	return out
}

// Q12 counts the bids of every bidder in tumbling windows of [WindowSize]
// ms of event time.
func Q12(events []Event) []BidderCount {
	type bidderWindow struct{ bidder, start int64 }
	counts := map[bidderWindow]int64{}
	for _, ev := range events {
		if b := ev.Bid; b != nil {
			counts[bidderWindow{b.Bidder, tumbling(b.DateTime, WindowSize)}]++
		}
	}
	var out []BidderCount
	for k, n := range counts {
		out = append(out, BidderCount{Bidder: k.bidder, Start: k.start, End: k.start + WindowSize, Count: n})
	}
	slices.SortFunc(out, BidderCount.Compare)
	return out
}
