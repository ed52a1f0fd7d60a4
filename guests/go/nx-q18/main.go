// Command nx-q18 is Nexmark's query 18, the last bid of every bidder on
// every auction, as an Eddy process function with keyed state (a flat_map
// step with state: true). It runs on the bids as they are keyed, by
// auction (nexmark.Record), so every bid of one bidder on one auction
// reaches the same task, in the order of the input, without a repartition.
//
// It keeps, per bidder and auction, the dateTime of the last bid it passed
// on (state key: the bidder as 8 big-endian bytes, then the record key;
// value: the dateTime, 8 little-endian bytes), and passes a bid on when it
// is at least as late: a later dateTime, or the same one (of two bids at
// one time the later in the input is the last, as Flink's deduplication
// keeping the last row replaces the row it holds with one of the same
// time). The output is an upsert stream: the bid unchanged (value,
// timestamp), keyed "<auction>/<bidder>"; the last record of each key is
// the pair's last bid.
//
// The record key must be the bid's "auction" as the JSON has it (the
// decimal digits): another key fails with REJECTED, since bids of one
// auction under several keys could reach several tasks. A value that is
// not a Nexmark bid with integer "auction", "bidder" and "dateTime" fails
// with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q18.wasm ./nx-q18
package main

import (
	"bytes"
	"encoding/binary"
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q18", "1.0.0")
	eddy.FlatMap(last)
}

func main() {}

var (
	errNotBid = errors.New(`value is not a bid: no "bidder" member`)
	errStored = errors.New("state: a stored dateTime that is not 8 bytes")
)

var (
	ev       nxevent.Event
	key, val []byte
	outKey   []byte
	out      = make([]eddy.Record, 1)
)

// errKey is the error of a bid whose record key is not its auction.
func errKey(auction, k []byte) error {
	return errors.New("bid of auction " + string(auction) + " keyed " + string(k) + ": the bids must be keyed by their auction")
}

func last(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	if _, err := ev.Int(nxevent.Auction); err != nil {
		return nil, eddy.BadInput(err)
	}
	bidder, err := ev.Int(nxevent.Bidder)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	t, err := ev.Int(nxevent.DateTime)
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	if auction := ev.Raw(nxevent.Auction); !bytes.Equal(auction, r.Key) {
		return nil, errKey(auction, r.Key)
	}
	key = append(binary.BigEndian.AppendUint64(key[:0], uint64(bidder)), r.Key...)
	v, ok, err := eddy.StateGet(key)
	switch {
	case err != nil:
		return nil, err
	case ok && len(v) != 8:
		return nil, errStored
	case ok && int64(binary.LittleEndian.Uint64(v)) > t:
		return nil, nil // an earlier bid than the one passed on
	}
	val = binary.LittleEndian.AppendUint64(val[:0], uint64(t))
	if err := eddy.StatePut(key, val); err != nil {
		return nil, err
	}
	outKey = nxevent.AppendInt(append(append(outKey[:0], r.Key...), '/'), bidder)
	out[0] = eddy.Record{Key: outKey, Value: r.Value, Timestamp: r.Timestamp}
	return out, nil
}
