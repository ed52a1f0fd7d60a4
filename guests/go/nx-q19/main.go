// Command nx-q19 is Nexmark's query 19, the ten highest bids of every
// auction, as an Eddy process function with keyed state (a flat_map step
// with state: true). It runs on the bids as they are keyed, by auction
// (nexmark.Record), so an auction's bids reach one task in the order of
// the input, without a repartition.
//
// The order is nexmark.Q19Order: the highest price first, then the
// earliest "dateTime", then the smallest bidder; a bid equal to one held
// in all three ranks after it (the input order). When a bid enters its
// auction's top ten, the function emits a row for every rank whose bid
// changed — the new bid's and each one below it, which moved down a rank —
// keyed "<auction>/<rank>": the bid's JSON as it came, with
// "rank_number":R added as its last member. The output is an upsert stream
// of Flink's rows (auction, bidder, price, channel, url, dateTime, extra,
// rank_number) by auction and rank: the last row of each key is the final
// top ten. A bid that does not enter emits nothing.
//
// # State
//
// Per auction (K the record key): "h" K, the ranks' order keys (one byte n,
// then n times price, dateTime and bidder, little-endian), read for every
// bid; and "l" K, the ranked bids themselves (n times a 4-byte
// little-endian length and the bid's JSON), read and written only when the
// top ten changes.
//
// The record key must be the bid's "auction" as the JSON has it (the
// decimal digits): another key fails with REJECTED. A value that is not a
// Nexmark bid with integer "auction", "bidder", "price" and "dateTime"
// fails with BAD_INPUT.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q19.wasm ./nx-q19
package main

import (
	"bytes"
	"encoding/binary"
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// top is how many bids an auction keeps (nexmark.Q19Top).
const top = 10

func init() {
	eddy.SetName("nx-q19", "1.0.0")
	eddy.FlatMap(rank)
}

func main() {}

var (
	errNotBid = errors.New(`value is not a bid: no "bidder" member`)
	errHeader = errors.New("state: a ranking header of the wrong size")
	errList   = errors.New("state: a list of ranked bids that does not match its header")
)

// entry is a ranked bid's order key.
type entry struct{ price, t, bidder int64 }

// before reports whether a ranks before b.
func (a entry) before(b entry) bool {
	switch {
	case a.price != b.price:
		return a.price > b.price
	case a.t != b.t:
		return a.t < b.t
	}
	return a.bidder < b.bidder
}

var (
	ev                     nxevent.Event
	hkey, lkey, hbuf, lbuf []byte
	keys, vals             []byte
	bids                   [top + 1][]byte
	entries                [top + 1]entry
	out                    []eddy.Record
	spans                  [top][4]int
)

func rank(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	var f [4]int64
	for i, m := range []nxevent.Member{nxevent.Auction, nxevent.Price, nxevent.DateTime, nxevent.Bidder} {
		v, err := ev.Int(m)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		f[i] = v
	}
	if auction := ev.Raw(nxevent.Auction); !bytes.Equal(auction, r.Key) {
		return nil, errors.New("bid of auction " + string(auction) + " keyed " + string(r.Key) + ": the bids must be keyed by their auction")
	}
	e := entry{price: f[1], t: f[2], bidder: f[3]}

	hkey = append(append(hkey[:0], 'h'), r.Key...)
	h, ok, err := eddy.StateGet(hkey)
	if err != nil {
		return nil, err
	}
	n := 0
	if ok {
		if len(h) == 0 || int(h[0]) > top || len(h) != 1+24*int(h[0]) {
			return nil, errHeader
		}
		n = int(h[0])
	}
	le := binary.LittleEndian
	at := n // where the bid goes: before the first it ranks before
	for i := range n {
		p := h[1+24*i:]
		entries[i] = entry{int64(le.Uint64(p)), int64(le.Uint64(p[8:])), int64(le.Uint64(p[16:]))}
		if at == n && e.before(entries[i]) {
			at = i
		}
	}
	if at == top {
		return nil, nil
	}

	lkey = append(append(lkey[:0], 'l'), r.Key...)
	l, _, err := eddy.StateGet(lkey)
	if err != nil {
		return nil, err
	}
	for i := range n {
		if len(l) < 4 || uint64(len(l)-4) < uint64(le.Uint32(l)) {
			return nil, errList
		}
		size := int(le.Uint32(l))
		bids[i], l = l[4:4+size], l[4+size:]
	}
	if len(l) != 0 {
		return nil, errList
	}
	copy(entries[at+1:n+1], entries[at:n])
	copy(bids[at+1:n+1], bids[at:n])
	entries[at], bids[at] = e, r.Value
	n = min(n+1, top)

	hbuf = append(hbuf[:0], byte(n))
	lbuf = lbuf[:0]
	for i := range n {
		hbuf = le.AppendUint64(le.AppendUint64(le.AppendUint64(hbuf, uint64(entries[i].price)), uint64(entries[i].t)), uint64(entries[i].bidder))
		lbuf = append(le.AppendUint32(lbuf, uint32(len(bids[i]))), bids[i]...)
	}
	if err := eddy.StatePut(hkey, hbuf); err != nil {
		return nil, err
	}
	if err := eddy.StatePut(lkey, lbuf); err != nil {
		return nil, err
	}

	// The rows of ranks at+1 to n, built in two buffers and sliced once
	// they stop growing.
	keys, vals, out = keys[:0], vals[:0], out[:0]
	for i := at; i < n; i++ {
		b := bids[i]
		end := bytes.LastIndexByte(b, '}')
		if end < 0 {
			return nil, errList
		}
		k0, v0 := len(keys), len(vals)
		keys = nxevent.AppendInt(append(append(keys, r.Key...), '/'), int64(i+1))
		vals = append(nxevent.AppendInt(append(append(vals, b[:end]...), `,"rank_number":`...), int64(i+1)), '}')
		spans[i-at] = [4]int{k0, len(keys), v0, len(vals)}
	}
	for j := range n - at {
		s := spans[j]
		out = append(out, eddy.Record{Key: keys[s[0]:s[1]], Value: vals[s[2]:s[3]], Timestamp: r.Timestamp})
	}
	return out, nil
}
