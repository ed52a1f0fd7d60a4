// Command nx-q1 is Nexmark's query 1, currency conversion, as an Eddy
// process function (a map): each bid comes out with its "price" replaced
// by price*89/100 in integer arithmetic (int64, truncated towards zero, as
// nexmark.Q1 computes it). Every other byte of the value (the other
// members, their order, white space) and the key, timestamp and headers
// are unchanged.
//
// The value must be a Nexmark bid in JSON (nexmark.AppendJSON): a JSON
// object with a "bidder" member (what makes an event a bid for
// nexmark.Decode) and an integer "price". Anything else fails with
// BAD_INPUT: invalid JSON, a value that is not an object, an object
// without "bidder" (a person, an auction), a bid without "price" or whose
// "price" is not an integer in the int64 range. When "price" occurs more
// than once, the last one (the one nexmark.Decode reads) is converted.
//
// The C guest guests/c/nx-q1.c gives the same output byte for byte, and
// the same error reasons.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q1.wasm ./nx-q1
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// The exchange rate: euros = dollars * num / den (nexmark.EuroNumerator,
// nexmark.EuroDenominator).
const (
	num = 89
	den = 100
)

func init() {
	eddy.SetName("nx-q1", "1.0.0")
	eddy.Map(convert)
}

func main() {}

var errNotBid = errors.New(`value is not a bid: no "bidder" member`)

var (
	ev  nxevent.Event
	buf []byte // the output value; the SDK copies it before the next record
)

func convert(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return r, eddy.BadInput(errNotBid)
	}
	price, err := ev.Int(nxevent.Price)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	start, end, _ := ev.Span(nxevent.Price)
	b := append(buf[:0], r.Value[:start]...)
	b = nxevent.AppendInt(b, price*num/den)
	buf = append(b, r.Value[end:]...)
	r.Value = buf
	return r, nil
}
