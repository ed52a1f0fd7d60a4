// Command nx-q5 is the second half of Nexmark's query 5, hot items, as Eddy
// functions, after nx-count has counted the bids of each auction in each
// hopping window:
//
//   - Its process function tags a count with its auction and window: a
//     result of nx-count (key: the auction id; value {"count":N}; headers
//     eddy.window.start and eddy.window.end) becomes
//     {"auction":A,"count":N,"start":S,"end":E}, key unchanged (a map step).
//     It also splits a result of its own aggregate (below) into one record
//     per hot auction, {"Start":S,"End":E,"Auction":A,"Count":C} — the JSON
//     of nexmark.Q5Result (a flat_map step). It tells the two apart by the
//     value, which has an "auctions" member only in the second case.
//   - Its aggregate function folds the tagged counts of one window (key them
//     by their end; a tumbling window of the hop's size holds one hopping
//     window's counts, whose timestamps are its end - 1) into the auctions
//     with the most bids: {"start":S,"end":E,"count":C,"auctions":[A,...]},
//     the auctions in increasing order.
//
// Malformed input fails with BAD_INPUT and is not folded.
//
// # Accumulator
//
// Little-endian: one byte 1 (the format version), then the count, start and
// end as int64s, then the hot auctions as int64s in increasing order. With
// no auction the rest means nothing. Another version or size fails its
// group with REJECTED.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q5.wasm ./nx-q5
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q5", "1.0.0")
	eddy.FlatMap(process)
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

const (
	version = 1
	header  = 25 // version byte, count, start, end
)

var (
	errNotCount  = errors.New(`not a count result: no integer "count" member or no eddy.window.start/end header`)
	errNotTagged = errors.New(`not a tagged count: integer "auction", "count", "start" and "end" members needed`)
	errNotHot    = errors.New(`not a hot-items result: integer "start", "end", "count" and an "auctions" array needed`)
	errAcc       = errors.New("accumulator: not an nx-q5 accumulator of version 1")
)

// empty is the initial accumulator: no auction yet.
var empty = [header]byte{version}

var (
	out []eddy.Record
	buf []byte // an output value, a merged accumulator or a result; the SDK copies it
)

func initial() []byte { return empty[:] }

// intMember returns the integer value of member name of the flat JSON
// object doc.
func intMember(doc []byte, name string) (int64, bool) {
	i := bytes.Index(doc, []byte(`"`+name+`":`))
	if i < 0 {
		return 0, false
	}
	i += len(name) + 3
	for i < len(doc) && doc[i] == ' ' {
		i++
	}
	j := i
	for j < len(doc) && (doc[j] == '-' || doc[j] >= '0' && doc[j] <= '9') {
		j++
	}
	return nxevent.ParseInt(doc[i:j])
}

func headerInt(r eddy.Record, key string) (int64, bool) {
	for _, h := range r.Headers {
		if h.Key == key {
			return nxevent.ParseInt(h.Value)
		}
	}
	return 0, false
}

func process(r eddy.Record) ([]eddy.Record, error) {
	out = out[:0]
	if i := bytes.Index(r.Value, []byte(`"auctions":[`)); i >= 0 {
		return split(r, r.Value[i+len(`"auctions":[`):])
	}
	n, ok1 := intMember(r.Value, "count")
	start, ok2 := headerInt(r, "eddy.window.start")
	end, ok3 := headerInt(r, "eddy.window.end")
	auction, ok4 := nxevent.ParseInt(r.Key)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, eddy.BadInput(errNotCount)
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, auction)
	b = append(b, `,"count":`...)
	b = nxevent.AppendInt(b, n)
	b = append(b, `,"start":`...)
	b = nxevent.AppendInt(b, start)
	b = append(b, `,"end":`...)
	b = nxevent.AppendInt(b, end)
	buf = append(b, '}')
	return append(out, eddy.Record{Key: r.Key, Value: buf, Timestamp: r.Timestamp}), nil
}

// split makes one nexmark.Q5Result per auction of a hot-items result; list
// is what follows the opening bracket of its "auctions" array.
func split(r eddy.Record, list []byte) ([]eddy.Record, error) {
	start, ok1 := intMember(r.Value, "start")
	end, ok2 := intMember(r.Value, "end")
	n, ok3 := intMember(r.Value, "count")
	close := bytes.IndexByte(list, ']')
	if !ok1 || !ok2 || !ok3 || close < 0 {
		return nil, eddy.BadInput(errNotHot)
	}
	buf = buf[:0]
	var offs []int
	for _, tok := range bytes.Split(list[:close], []byte{','}) {
		a, ok := nxevent.ParseInt(bytes.TrimSpace(tok))
		if !ok {
			return nil, eddy.BadInput(errNotHot)
		}
		offs = append(offs, len(buf))
		buf = append(buf, `{"Start":`...)
		buf = nxevent.AppendInt(buf, start)
		buf = append(buf, `,"End":`...)
		buf = nxevent.AppendInt(buf, end)
		buf = append(buf, `,"Auction":`...)
		buf = nxevent.AppendInt(buf, a)
		buf = append(buf, `,"Count":`...)
		buf = nxevent.AppendInt(buf, n)
		buf = append(buf, '}')
	}
	for i, at := range offs {
		to := len(buf)
		if i+1 < len(offs) {
			to = offs[i+1]
		}
		out = append(out, eddy.Record{Key: r.Key, Value: buf[at:to:to], Timestamp: r.Timestamp})
	}
	return out, nil
}

// acc is a decoded accumulator.
type acc struct {
	count, start, end int64
	auctions          []int64
}

var scratch acc

func decode(b []byte, into *acc) error {
	if len(b) < header || b[0] != version || (len(b)-header)%8 != 0 {
		return errAcc // REJECTED
	}
	into.count = int64(binary.LittleEndian.Uint64(b[1:]))
	into.start = int64(binary.LittleEndian.Uint64(b[9:]))
	into.end = int64(binary.LittleEndian.Uint64(b[17:]))
	into.auctions = into.auctions[:0]
	for p := b[header:]; len(p) > 0; p = p[8:] {
		into.auctions = append(into.auctions, int64(binary.LittleEndian.Uint64(p)))
	}
	return nil
}

func encode(a *acc) []byte {
	b := append(buf[:0], version)
	b = binary.LittleEndian.AppendUint64(b, uint64(a.count))
	b = binary.LittleEndian.AppendUint64(b, uint64(a.start))
	b = binary.LittleEndian.AppendUint64(b, uint64(a.end))
	for _, x := range a.auctions {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	buf = b
	return buf
}

// fold adds the auctions of o, with count o.count, to a.
func fold(a *acc, o acc) {
	switch {
	case len(o.auctions) == 0 || len(a.auctions) > 0 && o.count < a.count:
	case len(a.auctions) == 0 || o.count > a.count:
		a.count, a.start, a.end = o.count, o.start, o.end
		a.auctions = append(a.auctions[:0], o.auctions...)
	default:
		for _, x := range o.auctions {
			if i, found := slices.BinarySearch(a.auctions, x); !found {
				a.auctions = slices.Insert(a.auctions, i, x)
			}
		}
	}
}

func add(b []byte, r eddy.Record) ([]byte, error) {
	if err := decode(b, &scratch); err != nil {
		return nil, err
	}
	auction, ok1 := intMember(r.Value, "auction")
	n, ok2 := intMember(r.Value, "count")
	start, ok3 := intMember(r.Value, "start")
	end, ok4 := intMember(r.Value, "end")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, eddy.BadInput(errNotTagged)
	}
	fold(&scratch, acc{count: n, start: start, end: end, auctions: []int64{auction}})
	return encode(&scratch), nil
}

var other acc

func merge(_, a, b []byte) ([]byte, error) {
	if err := decode(a, &scratch); err != nil {
		return nil, err
	}
	if err := decode(b, &other); err != nil {
		return nil, err
	}
	fold(&scratch, other)
	return encode(&scratch), nil
}

func result(_, b []byte) ([]byte, error) {
	if err := decode(b, &scratch); err != nil {
		return nil, err
	}
	if len(scratch.auctions) == 0 {
		return nil, nil
	}
	v := append(buf[:0], `{"start":`...)
	v = nxevent.AppendInt(v, scratch.start)
	v = append(v, `,"end":`...)
	v = nxevent.AppendInt(v, scratch.end)
	v = append(v, `,"count":`...)
	v = nxevent.AppendInt(v, scratch.count)
	v = append(v, `,"auctions":[`...)
	for i, x := range scratch.auctions {
		if i > 0 {
			v = append(v, ',')
		}
		v = strconv.AppendInt(v, x, 10)
	}
	buf = append(v, ']', '}')
	return buf, nil
}
