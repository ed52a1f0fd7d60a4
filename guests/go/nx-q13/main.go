// Command nx-q13 is the Flink Nexmark suite's query 13, a join of the bids
// with a bounded side input, as two Eddy kinds in one module, for a
// pipeline that keys the bids by their side input key and joins each with
// a table of the side input rows (nexmark.Q13 is the reference):
//
//   - key: a bid's key is its "auction" modulo 10,000 (nexmark.SideInputRows)
//     in decimal, the sign of the dividend kept as Java's % and SQL's MOD
//     keep it (-3 for the auction -3, which no row has);
//   - join: left is a bid (the stream), right a side input row (the
//     table), {"key":K,"value":V}; the joined value is
//     {"auction":A,"bidder":B,"price":P,"dateTime":T,"value":V}, the bid's
//     integers in decimal and V the row's "value" as it is in the row (a
//     string, escapes and all, or null: a VARCHAR may be null). A missing
//     side emits nothing (an inner join).
//
// Failures are BAD_INPUT: a value that is not a JSON object, a bid (an
// object with a "bidder" member, nexmark.Decode's rule) whose "auction",
// "bidder", "price" or "dateTime" is missing or not an integer, anything
// else on the left ("left: value is not a bid"), a right side without a
// string or null "value" (reasons prefixed with "left: " or "right: " in
// the join).
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q13.wasm ./nx-q13
package main

import (
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// rows is the side input's size: its keys are 0 to rows-1.
const rows = 10_000

func init() {
	eddy.SetName("nx-q13", "1.0.0")
	eddy.KeyBy(key)
	eddy.Join(join)
}

func main() {}

var (
	errNotBid     = errors.New(`value is not a bid: no "bidder" member`)
	errLeftNotBid = errors.New(`left: value is not a bid: no "bidder" member`)
	errNoValue    = errors.New(`right: no "value" member`)
	errBadValue   = errors.New(`right: "value" is neither a string nor null`)
)

var (
	ev  nxevent.Event
	kb  []byte // the key; the SDK copies it
	buf []byte // the joined value; the SDK copies it
)

func key(r eddy.Record) ([]byte, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	a, err := ev.Int(nxevent.Auction)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	kb = nxevent.AppendInt(kb[:0], a%rows)
	return kb, nil
}

func join(_, left, right []byte) ([]byte, error) {
	if left == nil || right == nil {
		return nil, nil
	}
	if err := ev.Parse(left); err != nil {
		return nil, eddy.BadInput(errors.New("left: " + err.Error()))
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errLeftNotBid)
	}
	var v [4]int64
	for i, m := range [...]nxevent.Member{nxevent.Auction, nxevent.Bidder, nxevent.Price, nxevent.DateTime} {
		n, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(errors.New("left: " + err.Error()))
		}
		v[i] = n
	}
	val, found, err := jsonscan.Field(right, "value")
	switch {
	case err != nil:
		return nil, eddy.BadInput(errors.New("right: " + err.Error()))
	case !found:
		return nil, eddy.BadInput(errNoValue)
	case val[0] != '"' && string(val) != "null":
		return nil, eddy.BadInput(errBadValue)
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, v[0])
	b = append(b, `,"bidder":`...)
	b = nxevent.AppendInt(b, v[1])
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, v[2])
	b = append(b, `,"dateTime":`...)
	b = nxevent.AppendInt(b, v[3])
	b = append(b, `,"value":`...)
	b = append(b, val...)
	buf = append(b, '}')
	return buf, nil
}
