// Command nx-q3 is Nexmark's query 3, local item suggestion, as two Eddy
// kinds in one module, for a pipeline that filters the auctions and joins
// each with its seller from a table of persons (keyed by person ID, the
// auctions re-keyed by seller):
//
//   - process (a filter): an auction of category 10 (nexmark.Q3Category)
//     passes unchanged; any other event is dropped;
//   - join: left is an auction (the stream), right a person (the table);
//     when the person lives in OR, ID or CA the joined value is
//     {"name":N,"city":C,"state":S,"auction":A}, else nothing is emitted.
//     N, C and S are the person's JSON strings as they are in its value
//     (escapes and all), A the auction's "id" in decimal. A missing side
//     emits nothing (an inner join).
//
// Values are Nexmark events in JSON (nexmark.AppendJSON); the kind of an
// object is nexmark.Decode's ("bidder" makes a bid, otherwise "itemName"
// or "seller" an auction, otherwise "name" or "emailAddress" a person).
// Failures are BAD_INPUT: a value that is not a JSON object; in the filter,
// an auction whose "category" is missing or not an integer; in the join, a
// left side that is not an auction or has no integer "id", a right side
// that is not a person or lacks string "name", "city" or "state" (reasons
// prefixed with "left: " or "right: ").
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q3.wasm ./nx-q3
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

// category is the category of q3's auctions (nexmark.Q3Category).
const category = 10

// states are the states of q3's sellers.
var states = [...]string{"OR", "ID", "CA"}

func init() {
	eddy.SetName("nx-q3", "1.0.0")
	eddy.Filter(keep)
	eddy.Join(join)
}

func main() {}

var (
	errNotAuction = errors.New("left: value is not an auction")
	errNotPerson  = errors.New("right: value is not a person")
)

var (
	ev, person nxevent.Event
	buf        []byte // the joined value; the SDK copies it
)

func keep(r eddy.Record) (bool, error) {
	if err := ev.Parse(r.Value); err != nil {
		return false, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindAuction {
		return false, nil
	}
	c, err := ev.Int(nxevent.Category)
	if err != nil {
		return false, eddy.BadInput(err)
	}
	return c == category, nil
}

func join(_, left, right []byte) ([]byte, error) {
	if left == nil || right == nil {
		return nil, nil
	}
	if err := ev.Parse(left); err != nil {
		return nil, eddy.BadInput(errors.New("left: " + err.Error()))
	}
	if ev.Kind != nxevent.KindAuction {
		return nil, eddy.BadInput(errNotAuction)
	}
	id, err := ev.Int(nxevent.ID)
	if err != nil {
		return nil, eddy.BadInput(errors.New("left: " + err.Error()))
	}
	if err := person.Parse(right); err != nil {
		return nil, eddy.BadInput(errors.New("right: " + err.Error()))
	}
	if person.Kind != nxevent.KindPerson {
		return nil, eddy.BadInput(errNotPerson)
	}
	var toks [3][]byte
	for i, m := range [...]nxevent.Member{nxevent.Name, nxevent.City, nxevent.State} {
		if toks[i], err = person.Str(m); err != nil {
			return nil, eddy.BadInput(errors.New("right: " + err.Error()))
		}
	}
	if !local(toks[2]) {
		return nil, nil
	}
	b := append(buf[:0], `{"name":`...)
	b = append(b, toks[0]...)
	b = append(b, `,"city":`...)
	b = append(b, toks[1]...)
	b = append(b, `,"state":`...)
	b = append(b, toks[2]...)
	b = append(b, `,"auction":`...)
	b = nxevent.AppendInt(b, id)
	buf = append(b, '}')
	return buf, nil
}

// local reports whether a state, a raw JSON string, is one of q3's.
func local(state []byte) bool {
	for _, s := range states {
		if nxevent.StrEquals(state, s) {
			return true
		}
	}
	return false
}
