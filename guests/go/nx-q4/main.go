// Command nx-q4 is the second step of Nexmark's q4, the average winning
// price per category, after nx-win (the winning bids) and a key_by
// category: a process function with keyed state (a map step with state:
// true). Per category (state key: the category in decimal) it keeps the
// number of closed auctions with a winner and the sum of their winning
// prices, and emits for every row {"category":C,"final":F}, F the sum
// divided by the count in integer arithmetic — Flink's AVG of a BIGINT,
// which truncates — keyed by the category, with the row's timestamp. The
// output is an update stream, as Flink's GROUP BY emits: the last value of
// a category is its average over every auction closed so far.
//
// The rows are nx-win's: JSON objects with integer "category" and "price"
// members; anything else fails with BAD_INPUT. Without keyed state
// (eddy.ErrNoState) every record fails (REJECTED); a host storage failure
// fails it with STATE.
//
// # State
//
// The count and the sum as little-endian int64s (16 bytes).
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q4.wasm ./nx-q4
package main

import (
	"encoding/binary"
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q4", "1.0.0")
	eddy.Map(average)
}

func main() {}

var errState = errors.New("state: not an nx-q4 state")

var (
	ev       nxevent.Event
	key, buf []byte
	acc      [16]byte
)

func average(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	category, err := ev.Int(nxevent.Category)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	price, err := ev.Int(nxevent.Price)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	key = nxevent.AppendInt(key[:0], category)
	le := binary.LittleEndian
	var n, sum int64
	switch v, ok, err := eddy.StateGet(key); {
	case err != nil:
		return r, err
	case ok && len(v) != len(acc):
		return r, errState
	case ok:
		n, sum = int64(le.Uint64(v)), int64(le.Uint64(v[8:]))
	}
	n, sum = n+1, sum+price
	le.PutUint64(acc[:], uint64(n))
	le.PutUint64(acc[8:], uint64(sum))
	if err := eddy.StatePut(key, acc[:]); err != nil {
		return r, err
	}
	b := append(append(buf[:0], `{"category":`...), key...)
	b = append(nxevent.AppendInt(append(b, `,"final":`...), sum/n), '}')
	buf = b
	return eddy.Record{Key: key, Value: buf, Timestamp: r.Timestamp}, nil
}
