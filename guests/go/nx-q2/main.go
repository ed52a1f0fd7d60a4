// Command nx-q2 is Nexmark's query 2, selection, as an Eddy process
// function: a bid on an auction whose ID is a multiple of 123
// (nexmark.Q2AuctionSkip) becomes the value {"auction":A,"price":P}, the
// integers written in decimal; the key, timestamp and headers are kept.
// Every other event is dropped (no output).
//
// The value must be a JSON object (anything else fails with BAD_INPUT).
// An object without a "bidder" member is not a bid (nexmark.Decode's rule)
// and is dropped, whatever else it holds. A bid must have integer "auction"
// and "price" members (int64 range, no fraction or exponent); one that
// does not fails with BAD_INPUT, selected or not. Of repeated members the
// last counts.
//
// The C guest guests/c/nx-q2.c gives the same output byte for byte, and
// the same error reasons.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q2.wasm ./nx-q2
package main

import (
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// skip selects auctions whose ID is a multiple of it (nexmark.Q2AuctionSkip).
const skip = 123

func init() {
	eddy.SetName("nx-q2", "1.0.0")
	eddy.FlatMap(selectBid)
}

func main() {}

var (
	ev  nxevent.Event
	buf []byte         // the output value
	out [1]eddy.Record // the output; the SDK copies both before the next record
)

func selectBid(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, nil
	}
	auction, err := ev.Int(nxevent.Auction)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	price, err := ev.Int(nxevent.Price)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	if auction%skip != 0 {
		return nil, nil
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, auction)
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, price)
	buf = append(b, '}')
	r.Value = buf
	out[0] = r
	return out[:], nil
}
