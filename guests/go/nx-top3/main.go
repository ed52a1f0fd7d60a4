// Command nx-top3 is an Eddy aggregate function: the three auctions with
// the most bids in a window, from the counts nx-q5 has tagged
// ({"auction":A,"count":N,"start":S,"end":E}, keyed by their window's end).
// It is the second aggregate of examples/top-auctions: bids are counted
// per auction and window (nx-count), tagged (nx-q5), re-keyed by window and
// folded here. Of equal counts the smaller auction id ranks first. The
// result is {"start":S,"end":E,"top":[{"auction":A,"count":N},...]}, at
// most three entries, the highest count first.
//
// The accumulator is little-endian: the start and end as int64s, then up
// to three (auction, count) pairs of int64s in rank order. Malformed input
// fails with BAD_INPUT and is not folded; an accumulator of another size
// fails its group with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-top3.wasm ./nx-top3
package main

import (
	"encoding/binary"
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-top3", "1.0.0")
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

const (
	n      = 3
	header = 16 // start, end
)

var (
	errNotTagged = errors.New(`not a tagged count: integer "auction", "count", "start" and "end" members needed`)
	errAcc       = errors.New("accumulator: not an nx-top3 accumulator")
)

// entry is one ranked auction.
type entry struct{ auction, count int64 }

// acc is a decoded accumulator.
type acc struct {
	start, end int64
	top        []entry
}

var (
	a, b acc
	buf  []byte // an accumulator or a result; the SDK copies it
)

func initial() []byte { return make([]byte, header) }

func decode(p []byte, into *acc) error {
	if len(p) < header || (len(p)-header)%16 != 0 || len(p) > header+16*n {
		return errAcc
	}
	into.start = int64(binary.LittleEndian.Uint64(p))
	into.end = int64(binary.LittleEndian.Uint64(p[8:]))
	into.top = into.top[:0]
	for q := p[header:]; len(q) > 0; q = q[16:] {
		into.top = append(into.top, entry{int64(binary.LittleEndian.Uint64(q)), int64(binary.LittleEndian.Uint64(q[8:]))})
	}
	return nil
}

func encode(x *acc) []byte {
	p := binary.LittleEndian.AppendUint64(buf[:0], uint64(x.start))
	p = binary.LittleEndian.AppendUint64(p, uint64(x.end))
	for _, e := range x.top {
		p = binary.LittleEndian.AppendUint64(p, uint64(e.auction))
		p = binary.LittleEndian.AppendUint64(p, uint64(e.count))
	}
	buf = p
	return buf
}

// before reports whether e ranks before f.
func before(e, f entry) bool {
	return e.count > f.count || e.count == f.count && e.auction < f.auction
}

// insert ranks e into x.top, keeping the best n; an auction already there
// keeps its higher count.
func insert(x *acc, e entry) {
	for i, f := range x.top {
		if f.auction == e.auction {
			if !before(e, f) {
				return
			}
			x.top = append(x.top[:i], x.top[i+1:]...)
			break
		}
	}
	i := 0
	for i < len(x.top) && before(x.top[i], e) {
		i++
	}
	if i >= n {
		return
	}
	x.top = append(x.top, entry{})
	copy(x.top[i+1:], x.top[i:])
	x.top[i] = e
	if len(x.top) > n {
		x.top = x.top[:n]
	}
}

func member(doc []byte, name string) (int64, bool) {
	v, found, err := jsonscan.Field(doc, name)
	if err != nil || !found {
		return 0, false
	}
	return nxevent.ParseInt(v)
}

func add(p []byte, r eddy.Record) ([]byte, error) {
	if err := decode(p, &a); err != nil {
		return nil, err
	}
	auction, ok1 := member(r.Value, "auction")
	count, ok2 := member(r.Value, "count")
	start, ok3 := member(r.Value, "start")
	end, ok4 := member(r.Value, "end")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, eddy.BadInput(errNotTagged)
	}
	a.start, a.end = start, end
	insert(&a, entry{auction, count})
	return encode(&a), nil
}

func merge(_, p, q []byte) ([]byte, error) {
	if err := decode(p, &a); err != nil {
		return nil, err
	}
	if err := decode(q, &b); err != nil {
		return nil, err
	}
	if len(a.top) == 0 {
		a.start, a.end = b.start, b.end
	}
	for _, e := range b.top {
		insert(&a, e)
	}
	return encode(&a), nil
}

func result(_, p []byte) ([]byte, error) {
	if err := decode(p, &a); err != nil {
		return nil, err
	}
	out := append(buf[:0], `{"start":`...)
	out = nxevent.AppendInt(out, a.start)
	out = append(out, `,"end":`...)
	out = nxevent.AppendInt(out, a.end)
	out = append(out, `,"top":[`...)
	for i, e := range a.top {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"auction":`...)
		out = nxevent.AppendInt(out, e.auction)
		out = append(out, `,"count":`...)
		out = nxevent.AppendInt(out, e.count)
		out = append(out, '}')
	}
	buf = append(out, "]}"...)
	return buf, nil
}
