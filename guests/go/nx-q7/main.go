// Command nx-q7 is Nexmark's query 7, highest bid, as an Eddy aggregate
// function: over the bids of a window (all in one group: key them with
// nx-one), the highest price and every bid at that price. The result is
//
//	{"price":P,"bids":[{"auction":A,"bidder":B,"dateTime":T},...]}
//
// with the bids ordered as nexmark.Q7Result.Compare orders them within a
// window: by dateTime, then auction, then bidder (equal bids all appear).
// An accumulator with no bid (every record of the window failed) emits
// nothing.
//
// Each record's value must be a Nexmark bid in JSON: a JSON object with a
// "bidder" member and integer "auction", "bidder", "price" and "dateTime"
// members (the bid's own time, as nexmark.Q7 uses it). Anything else fails
// with BAD_INPUT and is not folded.
//
// # Accumulator
//
// Version 1, little-endian: one byte 1 (the format version), the highest
// price as an int64, then one 24-byte entry per bid at that price (auction,
// bidder and dateTime as int64s), sorted as the result lists them. With no
// entries the price means nothing. An accumulator of another version or
// size fails its group with REJECTED. Add replaces the entries when a
// higher price comes and inserts one at the same price; Merge keeps the
// higher side, or merges the entries of two equal ones.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q7.wasm ./nx-q7
package main

import (
	"cmp"
	"encoding/binary"
	"errors"
	"strconv"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q7", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

const (
	version   = 1
	header    = 9  // version byte, price
	entrySize = 24 // auction, bidder, dateTime
)

var errNotBid = errors.New(`value is not a bid: no "bidder" member`)

// empty is the initial accumulator: no bids yet.
var empty = [header]byte{version}

var (
	ev  nxevent.Event
	buf []byte // a merged accumulator or a result; the SDK copies it
)

func initial() []byte { return empty[:] }

// entry is one bid at the highest price.
type entry struct{ auction, bidder, dateTime int64 }

func (e entry) compare(o entry) int {
	return cmp.Or(cmp.Compare(e.dateTime, o.dateTime), cmp.Compare(e.auction, o.auction), cmp.Compare(e.bidder, o.bidder))
}

func entryAt(acc []byte, i int) entry {
	p := acc[header+i*entrySize:]
	return entry{int64(binary.LittleEndian.Uint64(p)), int64(binary.LittleEndian.Uint64(p[8:])),
		int64(binary.LittleEndian.Uint64(p[16:]))}
}

func putEntry(p []byte, e entry) {
	binary.LittleEndian.PutUint64(p, uint64(e.auction))
	binary.LittleEndian.PutUint64(p[8:], uint64(e.bidder))
	binary.LittleEndian.PutUint64(p[16:], uint64(e.dateTime))
}

// check validates an accumulator and returns its price and entry count.
func check(acc []byte) (price int64, n int, err error) {
	switch {
	case len(acc) < header || acc[0] != version:
		return 0, 0, errors.New("accumulator is not a version 1 nx-q7 accumulator")
	case (len(acc)-header)%entrySize != 0:
		return 0, 0, errors.New("accumulator is " + strconv.Itoa(len(acc)) + " bytes, not 9 + 24×n")
	}
	return int64(binary.LittleEndian.Uint64(acc[1:])), (len(acc) - header) / entrySize, nil
}

func add(acc []byte, r eddy.Record) ([]byte, error) {
	high, n, err := check(acc)
	if err != nil {
		return nil, err
	}
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return nil, eddy.BadInput(errNotBid)
	}
	var e entry
	var price int64
	for _, f := range [...]struct {
		m nxevent.Member
		v *int64
	}{{nxevent.Auction, &e.auction}, {nxevent.Bidder, &e.bidder}, {nxevent.Price, &price}, {nxevent.DateTime, &e.dateTime}} {
		if *f.v, err = ev.Int(f.m); err != nil {
			return nil, eddy.BadInput(err)
		}
	}
	switch {
	case n == 0 || price > high:
		acc = acc[:header]
		binary.LittleEndian.PutUint64(acc[1:], uint64(price))
		n = 0
	case price < high:
		return acc, nil
	}
	// Insert e after the entries that do not sort after it.
	i := n
	for i > 0 && entryAt(acc, i-1).compare(e) > 0 {
		i--
	}
	acc = append(acc, make([]byte, entrySize)...)
	at := header + i*entrySize
	copy(acc[at+entrySize:], acc[at:])
	putEntry(acc[at:], e)
	return acc, nil
}

func merge(_, a, b []byte) ([]byte, error) {
	pa, na, err := check(a)
	if err != nil {
		return nil, err
	}
	pb, nb, err := check(b)
	if err != nil {
		return nil, err
	}
	switch {
	case nb == 0 || na > 0 && pa > pb:
		buf = append(buf[:0], a...)
		return buf, nil
	case na == 0 || pb > pa:
		buf = append(buf[:0], b...)
		return buf, nil
	}
	// Equal prices: merge the sorted entries, a's first among equals.
	buf = append(buf[:0], a[:header]...)
	i, j := 0, 0
	for i < na || j < nb {
		var e entry
		if j == nb || i < na && entryAt(a, i).compare(entryAt(b, j)) <= 0 {
			e = entryAt(a, i)
			i++
		} else {
			e = entryAt(b, j)
			j++
		}
		buf = append(buf, make([]byte, entrySize)...)
		putEntry(buf[len(buf)-entrySize:], e)
	}
	return buf, nil
}

func result(_, acc []byte) ([]byte, error) {
	price, n, err := check(acc)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	b := append(buf[:0], `{"price":`...)
	b = nxevent.AppendInt(b, price)
	b = append(b, `,"bids":[`...)
	for i := range n {
		e := entryAt(acc, i)
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"auction":`...)
		b = nxevent.AppendInt(b, e.auction)
		b = append(b, `,"bidder":`...)
		b = nxevent.AppendInt(b, e.bidder)
		b = append(b, `,"dateTime":`...)
		b = nxevent.AppendInt(b, e.dateTime)
		b = append(b, '}')
	}
	buf = append(b, "]}"...)
	return buf, nil
}
