// Command nx-q17 is Nexmark's query 17, the statistics of an auction's
// bids on a day, as an Eddy aggregate function. It runs on the bids as
// they are keyed (by auction, nexmark.Record) in tumbling windows of a day,
// and emits one row per auction and day when the window closes:
//
//	{"auction":A,"day":"2015-07-15","total_bids":N,"rank1_bids":N,"rank2_bids":N,"rank3_bids":N,
//	 "min_price":P,"max_price":P,"avg_price":P,"sum_price":P}
//
// The bids in all and per price rank (below 10,000; below 1,000,000; the
// rest), and the least, greatest, average and total price. The average is
// SQL's AVG of a BIGINT: the sum divided by the count, truncated towards
// zero.
//
// The day is that of the bids' "dateTime", as DATE_FORMAT(dateTime) groups
// in SQL, and the window that of their record timestamp: nexmark.Record
// makes them equal. A bid whose dateTime falls on another day than the
// bids already in its window, or whose auction differs from theirs (a key
// that is not the auction), is not folded: it fails with BAD_INPUT, as
// does a value that is not a Nexmark bid with integer "auction", "price"
// and "dateTime" (in the years 0000 to 9999).
//
// # Accumulator
//
// Little-endian, 73 bytes: one byte 1 (the format version), the auction,
// the day (days since the epoch), the four bid counts, the least,
// greatest and total price. With no bid (a count of 0) the rest means
// nothing. Another version or size fails with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q17.wasm ./nx-q17
package main

import (
	"encoding/binary"
	"errors"

	daystats "github.com/eddy-streams/eddy/guests/go/nx-daystats"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q17", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

var (
	errNotBid = errors.New(`value is not a bid: no "bidder" member`)
	errTime   = errors.New(`"dateTime" is outside the years 0000 to 9999`)
	errAcc    = errors.New("accumulator: not an nx-q17 accumulator of version 1")
)

const accSize = 1 + 9*8

// acc is a decoded accumulator.
type acc struct {
	auction, day     int64
	bids             [4]int64
	minP, maxP, sumP int64
}

func (a *acc) decode(b []byte) error {
	if len(b) != accSize || b[0] != 1 {
		return errAcc
	}
	le := binary.LittleEndian
	a.auction, a.day = int64(le.Uint64(b[1:])), int64(le.Uint64(b[9:]))
	for i := range a.bids {
		a.bids[i] = int64(le.Uint64(b[17+8*i:]))
	}
	a.minP, a.maxP, a.sumP = int64(le.Uint64(b[49:])), int64(le.Uint64(b[57:])), int64(le.Uint64(b[65:]))
	return nil
}

func (a *acc) encode(b []byte) []byte {
	le := binary.LittleEndian
	b = append(b[:0], 1)
	for _, x := range []int64{a.auction, a.day, a.bids[0], a.bids[1], a.bids[2], a.bids[3], a.minP, a.maxP, a.sumP} {
		b = le.AppendUint64(b, uint64(x))
	}
	return b
}

var empty = func() []byte { var a acc; return a.encode(nil) }()

func initial() []byte { return empty }

// join folds o into a; both must be of one auction and day.
func (a *acc) join(o *acc) error {
	switch {
	case o.bids[0] == 0:
		return nil
	case a.bids[0] == 0:
		*a = *o
		return nil
	case o.auction != a.auction:
		return eddy.BadInput(errors.New("bids of auction " + string(nxevent.AppendInt(nil, o.auction)) + " and " +
			string(nxevent.AppendInt(nil, a.auction)) + " under one key: q17 needs the bids keyed by auction"))
	case o.day != a.day:
		return eddy.BadInput(errors.New("bids of days " + string(daystats.AppendDate(nil, o.day)) + " and " +
			string(daystats.AppendDate(nil, a.day)) + " in one window: a bid's timestamp and dateTime are on different days"))
	}
	for i := range a.bids {
		a.bids[i] += o.bids[i]
	}
	a.minP, a.maxP, a.sumP = min(a.minP, o.minP), max(a.maxP, o.maxP), a.sumP+o.sumP
	return nil
}

var ev nxevent.Event

func add(b []byte, r eddy.Record) ([]byte, error) {
	var a acc
	if err := a.decode(b); err != nil {
		return nil, err
	}
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	var f [3]int64
	for i, m := range []nxevent.Member{nxevent.Auction, nxevent.Price, nxevent.DateTime} {
		v, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		f[i] = v
	}
	auction, price, t := f[0], f[1], f[2]
	if t < daystats.MinTime || t > daystats.MaxTime {
		return nil, eddy.BadInput(errTime)
	}
	one := acc{auction: auction, day: daystats.FloorDiv(t, daystats.DayMs), minP: price, maxP: price, sumP: price}
	one.bids[0], one.bids[daystats.Rank(price)] = 1, 1
	if err := a.join(&one); err != nil {
		return nil, err
	}
	return a.encode(b), nil
}

var buf []byte

func merge(_, x, y []byte) ([]byte, error) {
	var a, o acc
	if err := a.decode(x); err != nil {
		return nil, err
	}
	if err := o.decode(y); err != nil {
		return nil, err
	}
	if err := a.join(&o); err != nil {
		return nil, err
	}
	buf = a.encode(buf)
	return buf, nil
}

func result(_, b []byte) ([]byte, error) {
	var a acc
	if err := a.decode(b); err != nil || a.bids[0] == 0 {
		return nil, err
	}
	buf = nxevent.AppendInt(append(buf[:0], `{"auction":`...), a.auction)
	buf = append(daystats.AppendDate(append(buf, `,"day":"`...), a.day), '"')
	for i, name := range []string{`,"total_bids":`, `,"rank1_bids":`, `,"rank2_bids":`, `,"rank3_bids":`} {
		buf = nxevent.AppendInt(append(buf, name...), a.bids[i])
	}
	buf = nxevent.AppendInt(append(buf, `,"min_price":`...), a.minP)
	buf = nxevent.AppendInt(append(buf, `,"max_price":`...), a.maxP)
	buf = nxevent.AppendInt(append(buf, `,"avg_price":`...), a.sumP/a.bids[0])
	buf = nxevent.AppendInt(append(buf, `,"sum_price":`...), a.sumP)
	return append(buf, '}'), nil
}
