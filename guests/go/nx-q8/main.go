// Command nx-q8 is Nexmark's query 8, monitor new users, as an Eddy key
// function and aggregate function over the union of the persons and
// auctions streams: key each event by its person (a person by its "id", an
// auction by its "seller"), then aggregate per key in tumbling windows. A
// window's result is
//
//	{"person":ID,"name":NAME}
//
// when the window holds the person's own event and at least one auction
// the person opened as a seller; otherwise it emits nothing. This is the
// windowed person–auction join of the query, reported once per person and
// window however many auctions match (as nexmark.Q8 defines it). The
// person's ID is the window's key.
//
// Each record's value must be a Nexmark person (integer "id", string
// "name") or auction (integer "seller"), as JSON; anything else fails with
// BAD_INPUT.
//
// # Accumulator
//
// One byte of flags (1: the person was seen, 2: an auction was seen), then,
// when the person was seen, its name as the raw JSON string token. An
// empty accumulator has seen nothing. Merge (for session windows) ORs the
// flags and keeps a name.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q8.wasm ./nx-q8
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q8", "1.0.0")
	eddy.KeyBy(key)
	eddy.Aggregate(eddy.Aggregator{Init: initial, Add: add, Merge: merge, Result: result})
}

func main() {}

const (
	sawPerson  = 1
	sawAuction = 2
)

var (
	errKind = errors.New("value is neither a Nexmark person nor an auction")
	errAcc  = errors.New("accumulator is not an nx-q8 accumulator")
)

var (
	ev  nxevent.Event
	buf []byte // a key, merged accumulator or result; the SDK copies it
)

// key is the event's person: a person's id or an auction's seller.
func key(r eddy.Record) ([]byte, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	var id int64
	var err error
	switch ev.Kind {
	case nxevent.KindPerson:
		id, err = ev.Int(nxevent.ID)
	case nxevent.KindAuction:
		id, err = ev.Int(nxevent.Seller)
	default:
		return nil, eddy.BadInput(errKind)
	}
	if err != nil {
		return nil, eddy.BadInput(err)
	}
	buf = nxevent.AppendInt(buf[:0], id)
	return buf, nil
}

var empty = []byte{0}

func initial() []byte { return empty }

func add(acc []byte, r eddy.Record) ([]byte, error) {
	if len(acc) == 0 {
		return nil, errAcc
	}
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	switch ev.Kind {
	case nxevent.KindPerson:
		name, err := ev.Str(nxevent.Name)
		if err != nil {
			return nil, eddy.BadInput(err)
		}
		acc[0] |= sawPerson
		return append(acc[:1], name...), nil
	case nxevent.KindAuction:
		acc[0] |= sawAuction
		return acc, nil
	}
	return nil, eddy.BadInput(errKind)
}

func merge(_, a, b []byte) ([]byte, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, errAcc
	}
	src := a
	if a[0]&sawPerson == 0 {
		src = b
	}
	buf = append(buf[:0], src...)
	buf[0] = a[0] | b[0]
	return buf, nil
}

func result(key, acc []byte) ([]byte, error) {
	if len(acc) == 0 {
		return nil, errAcc
	}
	if acc[0] != sawPerson|sawAuction {
		return nil, nil
	}
	buf = append(buf[:0], `{"person":`...)
	buf = append(buf, key...)
	buf = append(buf, `,"name":`...)
	buf = append(buf, acc[1:]...)
	buf = append(buf, '}')
	return buf, nil
}
