// Command nx-win finds the winning bid of each Nexmark auction, as Nexmark
// q9 (and the first step of q4 and q6) defines it in SQL: among the bids
// naming the auction whose dateTime is between the auction's dateTime and
// expires, both included, the highest price, then the earliest dateTime;
// this guest breaks the remaining ties by the smaller bidder, then the
// smaller extra (compared unescaped), so the winner never depends on the
// order of the input (nexmark.Q9). The reserve is ignored. An auction
// without such a bid has no winner and gives nothing.
//
// It is a process function with keyed state and timers (a flat_map step
// with state: true) that reads the auctions and the bids, co-partitioned
// by auction ID as nexmark.Record keys them. Per auction (state key: its
// ID in decimal) it keeps the auction once it has come and the best bid of
// its time so far; bids that come before their auction are held until it
// comes (the two topics interleave freely). When an auction comes it sets
// an event-time timer at expires+1: the step's watermark passes it once
// every bid up to expires has been seen, on both topics. The timer emits
// the row and replaces the auction's state by a mark that it closed, which
// a timer forgets 10 s of event time later: bids that come after the close
// (all later than it) are dropped at once. A held bid whose auction has
// not come when the watermark passes its dateTime (a timer at dateTime+1,
// for the earliest held bid) is dropped, and a bid whose auction has not
// come is not held at all when the watermark has passed it already: an
// auction that comes later opened after it.
//
// The row is a JSON object: the auction's members id, itemName,
// description, initialBid, reserve, dateTime, expires, seller, category
// and extra, then the bid's auction, bidder, price, dateTime as
// bid_dateTime and extra as bid_extra (q9's SQL columns), each value as
// the raw JSON of its event. Its key is the auction ID in decimal, its
// timestamp the auction's expires.
//
// The input must be Nexmark auctions and bids in JSON (nexmark.AppendJSON;
// the kind as nexmark.Decode tells it). BAD_INPUT: a value that is not a
// JSON object, another kind of event, an auction without integer id,
// initialBid, reserve, dateTime, expires, seller, category or string
// itemName, description, extra; a bid without integer auction, bidder,
// price, dateTime or string extra. Without keyed state (eddy.ErrNoState)
// every record fails (REJECTED); a host storage failure fails it with
// STATE.
//
// # State
//
// Little-endian: version 1, flags (1: the auction has come, 2: a best
// bid, 4: the auction has closed, and nothing else follows but a zero
// count of held bids); with the auction its dateTime and expires (int64) and its JSON
// (uint32 length, bytes); with a best bid its price, dateTime and bidder
// (int64) and its JSON; then the number of held bids (uint32) and for each
// its dateTime (int64) and JSON. nexmark/nxbench's native nx-win uses the
// same layout.
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-win.wasm ./nx-win
package main

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-win", "1.0.0")
	eddy.FlatMap(process)
	eddy.OnTimer(fire)
}

func main() {}

var (
	errNotAuctionBid = errors.New("value is neither an auction nor a bid")
	errState         = errors.New("state: not an nx-win state of version 1")
)

// forget is how long after an auction closed its mark is kept, in ms of
// event time: far longer than the generator's bids trail their auction
// (a bid names one of the latest 100 auctions, at most 172 ms old at the
// default rate). A bid later than that is held and dropped by its timer.
const forget = 10_000

// The members of an auction and of a bid the row holds, in its order; the
// bid's with the names the row gives them.
var (
	auctionInts = [...]nxevent.Member{nxevent.ID, nxevent.InitialBid, nxevent.Reserve, nxevent.DateTime,
		nxevent.Expires, nxevent.Seller, nxevent.Category}
	auctionStrs = [...]nxevent.Member{nxevent.ItemName, nxevent.Description, nxevent.Extra}
	auctionRow  = [...]nxevent.Member{nxevent.ID, nxevent.ItemName, nxevent.Description, nxevent.InitialBid,
		nxevent.Reserve, nxevent.DateTime, nxevent.Expires, nxevent.Seller, nxevent.Category, nxevent.Extra}
	bidRow = [...]struct {
		m    nxevent.Member
		name string
	}{{nxevent.Auction, "auction"}, {nxevent.Bidder, "bidder"}, {nxevent.Price, "price"},
		{nxevent.DateTime, "bid_dateTime"}, {nxevent.Extra, "bid_extra"}}
)

// bid is what the winner's order needs of a bid, and its JSON.
type bid struct {
	price, at, bidder int64
	doc               []byte
}

// state is an auction's state; its slices are views into the state value
// read, the input record or bidDoc.
type state struct {
	auction       []byte
	open, expires int64
	best          bid
	hasBest       bool
	closed        bool
	held          []held
}

type held struct {
	at  int64
	doc []byte
}

var (
	ev, other nxevent.Event
	st        state
	key, val  []byte
	row       []byte
	out       [1]eddy.Record
	esc       [2][]byte // unescaped extras, for ties
)

func process(r eddy.Record) ([]eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return nil, eddy.BadInput(err)
	}
	switch ev.Kind {
	case nxevent.KindAuction:
		return nil, auction(r.Value)
	case nxevent.KindBid:
		return nil, offerBid(r.Value)
	}
	return nil, eddy.BadInput(errNotAuctionBid)
}

// load reads the state of key into st; ok is false when there is none.
func load(key []byte) (bool, error) {
	v, ok, err := eddy.StateGet(key)
	if err != nil || !ok {
		st = state{held: st.held[:0]}
		return false, err
	}
	return true, decode(v)
}

func auction(doc []byte) error {
	var v [len(auctionInts)]int64
	for i, m := range auctionInts {
		x, err := ev.Int(m)
		if err != nil {
			return eddy.BadInput(err)
		}
		v[i] = x
	}
	for _, m := range auctionStrs {
		if _, err := ev.Str(m); err != nil {
			return eddy.BadInput(err)
		}
	}
	key = nxevent.AppendInt(key[:0], v[0])
	if _, err := load(key); err != nil {
		return err
	}
	if st.auction != nil || st.closed {
		return nil // an ID seen before: the first auction counts
	}
	st.auction, st.open, st.expires = doc, v[3], v[4]
	if len(st.held) > 0 {
		if err := eddy.DeleteTimer(key, eddy.EventTime, earliest()+1); err != nil {
			return err
		}
		for _, h := range st.held {
			b, err := parseBid(&other, h.doc)
			if err != nil {
				return errors.New("held bid: " + err.Error())
			}
			offer(b)
		}
		st.held = st.held[:0]
	}
	if err := eddy.SetTimer(key, eddy.EventTime, st.expires+1); err != nil {
		return err
	}
	return save()
}

// parseBid parses a bid's JSON with e and checks the members the row needs.
func parseBid(e *nxevent.Event, doc []byte) (bid, error) {
	if e != &ev {
		if err := e.Parse(doc); err != nil {
			return bid{}, err
		}
	}
	var b bid
	var err error
	if b.price, err = e.Int(nxevent.Price); err != nil {
		return b, err
	}
	if b.at, err = e.Int(nxevent.DateTime); err != nil {
		return b, err
	}
	if b.bidder, err = e.Int(nxevent.Bidder); err != nil {
		return b, err
	}
	if _, err = e.Int(nxevent.Auction); err != nil {
		return b, err
	}
	if _, err = e.Str(nxevent.Extra); err != nil {
		return b, err
	}
	b.doc = doc
	return b, nil
}

// offer makes b the best bid if it is in the auction's time and beats the
// best so far, and reports whether it did.
func offer(b bid) bool {
	if b.at < st.open || b.at > st.expires {
		return false
	}
	if st.hasBest && !beats(b, st.best) {
		return false
	}
	st.best, st.hasBest = b, true
	return true
}

// beats reports whether bid b wins over bid o (nexmark.BeatsBid).
func beats(b, o bid) bool {
	switch {
	case b.price != o.price:
		return b.price > o.price
	case b.at != o.at:
		return b.at < o.at
	case b.bidder != o.bidder:
		return b.bidder < o.bidder
	}
	// Rare: the extras decide, unescaped. Both bids were parsed before.
	for i, doc := range [2][]byte{b.doc, o.doc} {
		_ = other.Parse(doc)
		x, _ := other.Str(nxevent.Extra)
		esc[i] = jsonscan.Unescape(esc[i][:0], x[1:len(x)-1])
	}
	return bytes.Compare(esc[0], esc[1]) < 0
}

func offerBid(doc []byte) error {
	b, err := parseBid(&ev, doc)
	if err != nil {
		return eddy.BadInput(err)
	}
	a, _ := ev.Int(nxevent.Auction)
	key = nxevent.AppendInt(key[:0], a)
	if _, err := load(key); err != nil {
		return err
	}
	switch {
	case st.closed:
		return nil // later than the auction's close
	case st.auction != nil:
		if !offer(b) {
			return nil
		}
		return save()
	case b.at < eddy.CurrentTime(eddy.EventTime):
		// Every auction that opened at or before the bid has come (the
		// auctions' watermark is past it too): its auction, if it ever
		// comes, opens after it.
		return nil
	}
	if len(st.held) == 0 || b.at < earliest() {
		if len(st.held) > 0 {
			if err := eddy.DeleteTimer(key, eddy.EventTime, earliest()+1); err != nil {
				return err
			}
		}
		if err := eddy.SetTimer(key, eddy.EventTime, b.at+1); err != nil {
			return err
		}
	}
	st.held = append(st.held, held{b.at, doc})
	return save()
}

// earliest is the dateTime of the earliest held bid.
func earliest() int64 {
	at := st.held[0].at
	for _, h := range st.held[1:] {
		at = min(at, h.at)
	}
	return at
}

func fire(t eddy.Timer) ([]eddy.Record, error) {
	if t.Domain != eddy.EventTime {
		return nil, nil
	}
	found, err := load(t.Key)
	if err != nil || !found {
		return nil, err
	}
	key = append(key[:0], t.Key...)
	switch {
	case st.closed:
		return nil, eddy.StateDelete(t.Key)
	case st.auction != nil:
		if t.Time != st.expires+1 {
			return nil, nil // a held bid's timer
		}
		var outs []eddy.Record
		if st.hasBest {
			if err := buildRow(); err != nil {
				return nil, err
			}
			out[0] = eddy.Record{Key: key, Value: row, Timestamp: st.expires}
			outs = out[:]
		}
		if err := eddy.SetTimer(t.Key, eddy.EventTime, st.expires+forget); err != nil {
			return nil, err
		}
		st = state{closed: true, held: st.held[:0]}
		return outs, save()
	}
	kept := st.held[:0]
	for _, h := range st.held {
		if h.at >= t.Time {
			kept = append(kept, h)
		}
	}
	st.held = kept
	if len(st.held) == 0 {
		return nil, eddy.StateDelete(t.Key)
	}
	if err := eddy.SetTimer(t.Key, eddy.EventTime, earliest()+1); err != nil {
		return nil, err
	}
	return nil, save()
}

// buildRow writes the row of st's auction and best bid into row.
func buildRow() error {
	if err := ev.Parse(st.auction); err != nil {
		return errState
	}
	if err := other.Parse(st.best.doc); err != nil {
		return errState
	}
	b := row[:0]
	for i, m := range auctionRow {
		if i == 0 {
			b = append(b, `{"`...)
		} else {
			b = append(b, `,"`...)
		}
		b = append(append(b, m.String()...), '"', ':')
		b = append(b, ev.Raw(m)...)
	}
	for _, m := range bidRow {
		b = append(append(append(b, `,"`...), m.name...), '"', ':')
		b = append(b, other.Raw(m.m)...)
	}
	row = append(b, '}')
	return nil
}

// save writes st under key.
func save() error {
	le := binary.LittleEndian
	flags := byte(0)
	if st.auction != nil {
		flags |= 1
	}
	if st.hasBest {
		flags |= 2
	}
	if st.closed {
		flags |= 4
	}
	b := append(val[:0], 1, flags)
	if st.auction != nil {
		b = le.AppendUint64(le.AppendUint64(b, uint64(st.open)), uint64(st.expires))
		b = append(le.AppendUint32(b, uint32(len(st.auction))), st.auction...)
	}
	if st.hasBest {
		x := &st.best
		b = le.AppendUint64(le.AppendUint64(le.AppendUint64(b, uint64(x.price)), uint64(x.at)), uint64(x.bidder))
		b = append(le.AppendUint32(b, uint32(len(x.doc))), x.doc...)
	}
	b = le.AppendUint32(b, uint32(len(st.held)))
	for _, h := range st.held {
		b = append(le.AppendUint32(le.AppendUint64(b, uint64(h.at)), uint32(len(h.doc))), h.doc...)
	}
	val = b
	return eddy.StatePut(key, val)
}

// decode reads a state value into st, its slices views into v.
func decode(v []byte) error {
	le := binary.LittleEndian
	st = state{held: st.held[:0]}
	if len(v) < 2 || v[0] != 1 {
		return errState
	}
	flags, p := v[1], v[2:]
	bad := false
	i64 := func() int64 {
		if len(p) < 8 {
			bad = true
			return 0
		}
		x := int64(le.Uint64(p))
		p = p[8:]
		return x
	}
	blob := func() []byte {
		if len(p) < 4 || int(le.Uint32(p)) > len(p)-4 {
			bad = true
			return nil
		}
		n := int(le.Uint32(p))
		x := p[4 : 4+n : 4+n]
		p = p[4+n:]
		return x
	}
	if flags&1 != 0 {
		st.open, st.expires = i64(), i64()
		st.auction = blob()
	}
	if flags&2 != 0 {
		st.best.price, st.best.at, st.best.bidder = i64(), i64(), i64()
		st.best.doc, st.hasBest = blob(), true
	}
	if bad || len(p) < 4 || int(le.Uint32(p)) > (len(p)-4)/12 {
		return errState // a held bid takes at least 12 bytes
	}
	n := int(le.Uint32(p))
	p = p[4:]
	for range n {
		at := i64()
		st.held = append(st.held, held{at, blob()})
	}
	st.closed = flags&4 != 0
	if bad || len(p) != 0 || st.auction == nil && flags&1 != 0 || flags > 7 || st.closed && (flags != 4 || n != 0) {
		return errState
	}
	return nil
}
