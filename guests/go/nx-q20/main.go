// Command nx-q20 is Nexmark's q20, bids expanded with their auction for
// category 10, as the join function of a stream-stream join of the bids
// (left) with the auctions (right), both keyed by auction ID: a pair whose
// auction's category is not 10 emits nothing; the others emit the row of
// q20's SQL, the bid's auction, bidder, price, channel, url, dateTime as
// bid_dateTime and extra as bid_extra, then the auction's itemName,
// description, initialBid, reserve, dateTime as auction_dateTime, expires,
// seller, category and extra as auction_extra, each value as the raw JSON
// of its event. A missing side emits nothing (an inner join).
//
// Values are Nexmark events in JSON (nexmark.AppendJSON). Failures are
// BAD_INPUT, with reasons prefixed "left: " or "right: ": a value that is
// not a JSON object, a left side that is not a bid, a right side that is
// not an auction, and a member of the row that is missing or not an
// integer or a string as the event has it.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q20.wasm ./nx-q20
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// category is the category of q20's auctions (nexmark.Q20Category).
const category = 10

func init() {
	eddy.SetName("nx-q20", "1.0.0")
	eddy.Join(join)
}

func main() {}

var (
	errNotBid     = errors.New("left: value is not a bid")
	errNotAuction = errors.New("right: value is not an auction")
)

// member is a member of the row: the event's member, its name in the row,
// and whether it is a string.
type member struct {
	m    nxevent.Member
	name string
	str  bool
}

var (
	bidRow = [...]member{{nxevent.Auction, "auction", false}, {nxevent.Bidder, "bidder", false},
		{nxevent.Price, "price", false}, {nxevent.Channel, "channel", true}, {nxevent.URL, "url", true},
		{nxevent.DateTime, "bid_dateTime", false}, {nxevent.Extra, "bid_extra", true}}
	auctionRow = [...]member{{nxevent.ItemName, "itemName", true}, {nxevent.Description, "description", true},
		{nxevent.InitialBid, "initialBid", false}, {nxevent.Reserve, "reserve", false},
		{nxevent.DateTime, "auction_dateTime", false}, {nxevent.Expires, "expires", false},
		{nxevent.Seller, "seller", false}, {nxevent.Category, "category", false},
		{nxevent.Extra, "auction_extra", true}}
)

var (
	bid, auction nxevent.Event
	buf          []byte // the row; the SDK copies it
)

func join(_, left, right []byte) ([]byte, error) {
	if left == nil || right == nil {
		return nil, nil
	}
	if err := auction.Parse(right); err != nil {
		return nil, eddy.BadInput(errors.New("right: " + err.Error()))
	}
	if auction.Kind != nxevent.KindAuction {
		return nil, eddy.BadInput(errNotAuction)
	}
	c, err := auction.Int(nxevent.Category)
	if err != nil {
		return nil, eddy.BadInput(errors.New("right: " + err.Error()))
	}
	if c != category {
		return nil, nil
	}
	if err := bid.Parse(left); err != nil {
		return nil, eddy.BadInput(errors.New("left: " + err.Error()))
	}
	if bid.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	b := append(buf[:0], '{')
	if b, err = appendMembers(b, &bid, bidRow[:]); err != nil {
		return nil, eddy.BadInput(errors.New("left: " + err.Error()))
	}
	b = append(b, ',')
	if b, err = appendMembers(b, &auction, auctionRow[:]); err != nil {
		return nil, eddy.BadInput(errors.New("right: " + err.Error()))
	}
	buf = append(b, '}')
	return buf, nil
}

// appendMembers appends the members ms of ev to b, "name":value separated
// by commas.
func appendMembers(b []byte, ev *nxevent.Event, ms []member) ([]byte, error) {
	for i, m := range ms {
		var err error
		if m.str {
			_, err = ev.Str(m.m)
		} else {
			_, err = ev.Int(m.m)
		}
		if err != nil {
			return b, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), m.name...), '"', ':')
		b = append(b, ev.Raw(m.m)...)
	}
	return b, nil
}
