// Command nx-q6 is the second step of Nexmark's q6, the average selling
// price per seller, after nx-win (the winning bids, stamped with their
// auction's expires) and a key_by seller: a process function with keyed
// state and timers (a flat_map step with state: true). For every auction
// with a winner, as it closes, it emits the average winning price of the
// seller's last 10 closed auctions, this one included, in closing order
// (expires, then auction ID): Beam's q6, which Flink cannot run.
//
// A seller's rows come from several upstream partitions in no fixed order,
// so each row is held (state key: the seller in decimal) with an
// event-time timer at its expires+1. When the timer fires, the step's
// watermark — one per upstream input after a repartition — has passed
// every row closing before it: the held rows closing before the timer's
// time go, in closing order, into the seller's last 10 prices, and each
// emits {"seller":S,"auction":A,"avg_price":P}, P the average rounded to
// the nearest integer, halves up (Beam's Math.round), keyed by the seller
// and stamped with the auction's expires. Timers fire in time order, so a
// seller's results come in closing order.
//
// The rows are nx-win's: JSON objects with integer "seller", "id", "price"
// and "expires" members; anything else fails with BAD_INPUT. Without keyed
// state (eddy.ErrNoState) every record fails (REJECTED); a host storage
// failure fails it with STATE.
//
// # State
//
// Version 1, the number of prices kept (a byte, at most 10), the prices
// (oldest first), the number of held rows (uint32) and each row's expires,
// auction ID and price; integers are little-endian int64s.
// nexmark/nxbench's native nx-q6 uses the same layout.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q6.wasm ./nx-q6
package main

import (
	"encoding/binary"
	"errors"
	"slices"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q6", "1.0.0")
	eddy.FlatMap(hold)
	eddy.OnTimer(fire)
}

func main() {}

// last is how many closed auctions of a seller are averaged
// (nexmark.Q6Auctions).
const last = 10

var errState = errors.New("state: not an nx-q6 state of version 1")

// closed is a held row: the auction's expires, ID and winning price.
type closed struct{ expires, auction, price int64 }

var (
	ev     nxevent.Event
	prices []int64
	held   []closed
	due    []closed
	key    []byte
	val    []byte
	outs   []eddy.Record
	vals   []byte // the values of outs, back to back
	ends   []int  // where each value ends in vals
)

func hold(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	var v [4]int64
	for i, m := range [...]nxevent.Member{nxevent.Seller, nxevent.ID, nxevent.Price, nxevent.Expires} {
		x, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		v[i] = x
	}
	key = nxevent.AppendInt(key[:0], v[0])
	if err := load(key); err != nil {
		return nil, err
	}
	held = append(held, closed{expires: v[3], auction: v[1], price: v[2]})
	if err := eddy.SetTimer(key, eddy.EventTime, v[3]+1); err != nil {
		return nil, err
	}
	return nil, save()
}

func fire(t eddy.Timer) ([]eddy.Record, error) {
	if t.Domain != eddy.EventTime {
		return nil, nil
	}
	key = append(key[:0], t.Key...)
	if err := load(key); err != nil {
		return nil, err
	}
	due = due[:0]
	held = slices.DeleteFunc(held, func(c closed) bool {
		if c.expires < t.Time {
			due = append(due, c)
			return true
		}
		return false
	})
	if len(due) == 0 {
		return nil, nil
	}
	slices.SortFunc(due, func(a, b closed) int {
		if a.expires != b.expires {
			return cmpInt(a.expires, b.expires)
		}
		return cmpInt(a.auction, b.auction)
	})
	// The values go into vals one after the other; the records take their
	// views once vals has stopped growing.
	outs, vals, ends = outs[:0], vals[:0], ends[:0]
	for _, c := range due {
		if len(prices) == last {
			prices = append(prices[:0], prices[1:]...)
		}
		prices = append(prices, c.price)
		var sum int64
		for _, p := range prices {
			sum += p
		}
		vals = append(append(vals, `{"seller":`...), key...)
		vals = nxevent.AppendInt(append(vals, `,"auction":`...), c.auction)
		vals = nxevent.AppendInt(append(vals, `,"avg_price":`...), roundHalfUp(sum, int64(len(prices))))
		vals = append(vals, '}')
		ends = append(ends, len(vals))
	}
	start := 0
	for i, c := range due {
		outs = append(outs, eddy.Record{Key: key, Value: vals[start:ends[i]], Timestamp: c.expires})
		start = ends[i]
	}
	return outs, save()
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// roundHalfUp is sum/n rounded to the nearest integer, halves up, for
// n > 0: Java's Math.round of the quotient.
func roundHalfUp(sum, n int64) int64 {
	num, den := 2*sum+n, 2*n
	q := num / den
	if num%den != 0 && num < 0 {
		q--
	}
	return q
}

// load reads the seller's state into prices and held.
func load(key []byte) error {
	prices, held = prices[:0], held[:0]
	v, ok, err := eddy.StateGet(key)
	if err != nil || !ok {
		return err
	}
	le := binary.LittleEndian
	if len(v) < 6 || v[0] != 1 || v[1] > last || len(v) < 6+8*int(v[1]) {
		return errState
	}
	p := v[2:]
	for range v[1] {
		prices = append(prices, int64(le.Uint64(p)))
		p = p[8:]
	}
	n := le.Uint32(p)
	p = p[4:]
	if uint64(len(p)) != 24*uint64(n) {
		return errState
	}
	for ; len(p) > 0; p = p[24:] {
		held = append(held, closed{int64(le.Uint64(p)), int64(le.Uint64(p[8:])), int64(le.Uint64(p[16:]))})
	}
	return nil
}

// save writes prices and held under key.
func save() error {
	le := binary.LittleEndian
	b := append(val[:0], 1, byte(len(prices)))
	for _, p := range prices {
		b = le.AppendUint64(b, uint64(p))
	}
	b = le.AppendUint32(b, uint32(len(held)))
	for _, c := range held {
		b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, uint64(c.expires)), uint64(c.auction)), uint64(c.price))
	}
	val = b
	return eddy.StatePut(key, val)
}
